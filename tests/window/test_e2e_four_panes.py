"""End to end: four shell panes under four roles, the real gateway process, a real upstream
(``mcp-server-time``), real PTYs, keys through Pilot.

Each pane's ``polter tools`` shows that pane's own surface (read from the pane's screen); a role switch
from the palette changes it; a call the role asks about is answered through the ask modal; the audit
screen shows the decisions.
"""

from __future__ import annotations

from typing import Any

import pytest
from support.keys import type_keys
from support.gateway import role, time_server
from support.waiting import wait_until
from support.workspace_app import palette, panes, run_in, screen, shell_plans, workspace_app
from textual.widgets import DataTable

from polter.window.ask_screen import AskScreen
from polter.window.audit_screen import AuditScreen

pytestmark = pytest.mark.e2e

ROLES = {
    "clock": role("Every time tool"),
    "no-time": role("The time server is off limits", servers={"deny": ["time"]}),
    "ask-convert": role("Converting asks the human", tools={"ask": ["time/convert_time"]}),
    "now-only": role("Only the current time", tools={"default": "deny", "allow": ["time/get_current_time"]}),
}

CONVERT = """polter call time/convert_time '{"source_timezone": "Europe/Berlin", "time": "16:30", \
"target_timezone": "Asia/Tokyo"}'"""


def decisions(text: str) -> dict[str, str]:
    """``polter tools`` rows of the time server: tool → decision (read from the pane's screen)."""
    found = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0].startswith("time/"):
            found[words[0]] = words[1]
        elif len(words) >= 2 and words[0] == "time":
            found["time"] = words[1]
    return found


async def test_four_roles_four_surfaces_a_palette_switch_an_ask_and_the_audit(monkeypatch: Any) -> None:
    plans = shell_plans("clock", "no-time", "ask-convert", "now-only")
    async with workspace_app(monkeypatch, plans, servers={"time": time_server()}, roles=ROLES) as (app, pilot):
        clock, no_time, ask_convert, now_only = panes(app)

        expected = {
            clock: {"time/get_current_time": "allow", "time/convert_time": "allow"},
            no_time: {"time/get_current_time": "deny", "time/convert_time": "deny"},
            ask_convert: {"time/get_current_time": "allow", "time/convert_time": "ask"},
            now_only: {"time/get_current_time": "allow", "time/convert_time": "deny"},
        }
        for pane, surface in expected.items():
            assert pane.agent is not None
            text = await run_in(pilot, pane, "polter tools", "time/convert_time")
            assert f"role {pane.agent.role}" in text
            found = decisions(text)
            assert {tool: found.get(tool) for tool in surface} == surface, text

        no_time.terminal.focus()
        await palette(pilot, ("switch the role of pane 2", "Switch the role of pane 2"), ("clock", "clock"))
        await wait_until(lambda: no_time.agent is not None and no_time.agent.role == "clock", message="the switch")
        text = await run_in(pilot, no_time, "clear; polter tools", "time/convert_time")
        assert "role clock" in text and decisions(text)["time/convert_time"] == "allow", text

        ask_convert.terminal.focus()
        await pilot.pause()
        await type_keys(pilot, CONVERT, enter=True)
        await wait_until(lambda: isinstance(app.screen, AskScreen), timeout=30, message="the ask modal")
        modal = app.screen
        assert isinstance(modal, AskScreen) and modal.ask.name == "convert_time"
        assert modal.ask.arguments["target_timezone"] == "Asia/Tokyo" and modal.pane_region == ask_convert.region
        await wait_until(lambda: modal.armed, message="the quiet period")
        await pilot.press("a")
        await wait_until(
            lambda: "time_difference" in _screen(ask_convert),
            timeout=30,
            message=lambda: f"the converted time:\n{_screen(ask_convert)}",
        )

        text = await run_in(pilot, now_only, CONVERT, "Polter refused")
        assert "time/convert_time" in text

        await palette(pilot, ("audit log", "Audit log"))
        await wait_until(lambda: isinstance(app.screen, AuditScreen), message="the audit screen")
        table = app.screen.query_one(DataTable)

        def rows() -> list[str]:
            return [" ".join(str(cell) for cell in table.get_row_at(index)) for index in range(table.row_count)]

        ids = {pane: pane.remote.id for pane in (ask_convert, now_only) if pane.agent is not None}
        await wait_until(
            lambda: any(ids[ask_convert] in row and "convert_time" in row and "allow_once" in row for row in rows()),
            message=lambda: "\n".join(rows()),
        )
        assert any(ids[now_only] in row and "convert_time" in row and " deny " in f" {row} " for row in rows())
        assert screen(app).session.audit_rows


def _screen(pane: Any) -> str:
    from support.panes import screen_text

    return screen_text(pane.terminal)
