"""Snapshots of the ask modal, the audit, capabilities and help screens (update: ``pytest --snapshot-update``).

Deterministic: fixed sizes, fixed data, a frozen clock for the ask's countdown, times shown in UTC.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from support.ui import NOW, AskApp, Over, make_ask, reviewer_pane, row
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.widgets import Checkbox, DataTable, Label, Select, Static

from polter.gateway.models import (
    AuditRow,
    Capabilities,
    ServerCapability,
    SkillCapability,
    ToolCapability,
)
from polter.wire.messages import AgentView, AuditEvent, PaneState
from polter.wire.registry import SessionFiles
from polter.window.audit_screen import COLUMNS, OWN_TOOLS, AuditScreen
from polter.window.capabilities_screen import CapabilitiesScreen
from polter.window.help_screen import HelpScreen
from polter.window.remote import RemotePane, RemoteSession

SIZE = (110, 32)


@pytest.fixture(autouse=True)
def utc(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()


def session_with_rows() -> RemoteSession:
    """A window's view of a session that logged six decisions (no host behind it: nothing is called)."""
    space = RemoteSession(SessionFiles("snapshot", Path("/nonexistent")))
    space.server_names = ["time", "terraria"]
    space.audit_rows.extend(
        [
            row(1, layer="listing", name=None, reason="2 of 2 tools listed"),
            row(2),
            row(
                3,
                pane="p2",
                role="reviewer",
                server="terraria",
                name="world_hardmode",
                decision="deny",
                rule='gates["terraria/world_hardmode"]',
                reason="terraria/world_hardmode runs only when the human has asked for it in this pane",
            ),
            row(
                4,
                pane="p2",
                role="reviewer",
                layer="ask",
                server="terraria",
                name="world_hardmode",
                decision="allow_once",
                reason="asked a human: allowed once",
            ),
            row(
                5,
                pane="p3",
                role="researcher",
                name="convert_time",
                decision="deny",
                rule='tools.default = "deny"',
                reason="time/convert_time is not read-only; the role denies the rest",
            ),
            row(
                6,
                pane="p4",
                role="ops",
                server="polter",
                name="escalate",
                layer="phase",
                decision="allow",
                reason="escalated by the human",
            ),
        ]
    )
    return space


CAPABILITIES = Capabilities(
    pane="p2",
    title="Shell",
    role="reviewer",
    role_found=True,
    phase="research",
    description="Reads freely, asks before commenting; never merges, pushes or deletes",
    notes=["Phase research: only research tools can be used; call escalate on the polter server to act."],
    servers=[
        ServerCapability(
            name="polter",
            decision="allow",
            rule=None,
            reason="Polter's own floor tools",
            state="running",
            tools=[
                ToolCapability(
                    name="whoami",
                    decision="allow",
                    visible=True,
                    rule=None,
                    reason="a floor tool",
                    read_only=True,
                    destructive=False,
                )
            ],
        ),
        ServerCapability(
            name="time",
            decision="allow",
            rule='servers.default = "allow"',
            reason="the role's default for servers is allow",
            state="running",
            tools=[
                ToolCapability(
                    name="get_current_time",
                    decision="allow",
                    visible=True,
                    rule='tools.allow "@read-only"',
                    reason="read-only tools are allowed",
                    read_only=True,
                    destructive=False,
                ),
                ToolCapability(
                    name="convert_time",
                    decision="deny",
                    visible=False,
                    rule="phases.research",
                    reason="the research phase allows read-only tools only",
                    read_only=False,
                    destructive=True,
                ),
            ],
        ),
    ],
    skills=[
        SkillCapability(
            name="code-review", decision="allow", rule='skills.allow "*review*"', reason="skills.allow matches"
        )
    ],
)


def test_the_ask_modal(snap_compare: Any) -> None:
    app = AskApp(
        make_ask(), region=Region(55, 16, 55, 16), position=(1, 2), pane_label="Pane 4 reviewer", clock=lambda: 0.0
    )
    assert snap_compare(app, terminal_size=SIZE)


def test_the_elicitation_form(snap_compare: Any) -> None:
    """A server's form over the pane whose call asked: every field type, defaults filled in, required starred."""
    from support.ui import make_elicitation

    from polter.window.elicitation_screen import ElicitationScreen

    screen = ElicitationScreen(make_elicitation(), pane_label="Pane 2 right", region=Region(30, 0, 80, 44))
    assert snap_compare(Over(screen), terminal_size=(110, 44))


def test_the_audit_screen(snap_compare: Any, tmp_path: Path) -> None:
    app = Over(AuditScreen(session_with_rows()))
    assert snap_compare(app, terminal_size=SIZE)


def test_the_audit_screen_filtered_by_decision_with_listings(snap_compare: Any, tmp_path: Path) -> None:
    screen = AuditScreen(session_with_rows())

    async def filtered(pilot: Any) -> None:
        screen.query_one("#filter-decision", Select).value = "deny"
        screen.action_toggle_listings()
        await pilot.pause()

    assert snap_compare(Over(screen), terminal_size=(120, SIZE[1]), run_before=filtered)  # wide: the checkbox shows


def test_the_capabilities_screen(snap_compare: Any, tmp_path: Path) -> None:
    session = RemoteSession(SessionFiles("snapshot", Path("/nonexistent")))
    screen = CapabilitiesScreen(session, reviewer_pane(session), "Pane 2", capabilities=CAPABILITIES)
    assert snap_compare(Over(screen), terminal_size=SIZE)


async def test_a_reason_wider_than_the_window_is_cut_at_its_edge_and_shown_whole_below() -> None:
    """No horizontal scrollbar under the table: the highlighted row's reason shows whole under it."""
    long_reason = "the role's default for servers is allow " + "and so on " * 20
    wide = CAPABILITIES.model_copy(
        update={"servers": [CAPABILITIES.servers[1].model_copy(update={"reason": long_reason})]}
    )
    session = RemoteSession(SessionFiles("snapshot", Path("/nonexistent")))
    app = Over(CapabilitiesScreen(session, reviewer_pane(session), "Pane 2", capabilities=wide))
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        assert table.virtual_size.width > table.size.width  # the reason does not fit
        assert not table.show_horizontal_scrollbar
        assert str(app.screen.query_one("#capabilities-detail", Static).render()) == f"time: {long_reason}"


def test_the_help_screen(snap_compare: Any) -> None:
    assert snap_compare(Over(HelpScreen("ctrl+b")), terminal_size=(110, 50))


def test_the_confirmation(snap_compare: Any) -> None:
    from polter.window.confirm import ConfirmScreen

    screen = ConfirmScreen(
        "Restart pane 2 (claude)?",
        "Its program is still running; restarting ends it and everything it started.",
        yes="Restart",
    )
    assert snap_compare(Over(screen), terminal_size=(90, 20))


async def test_a_long_confirmation_wraps_and_loses_no_word() -> None:
    """Quitting with four panes running names them all: the dialog wraps, it does not clip."""
    from support.snapshots import screen_lines

    from polter.window.confirm import ConfirmScreen

    detail = "Panes 1 (admin agent), 2 (moderator agent), 3 (researcher agent), 4 (your shell)."
    app = Over(ConfirmScreen("Quit Polter? 4 programs still running.", detail, yes="Quit"))
    async with app.run_test(size=(120, 20)) as pilot:
        await pilot.pause()
        shown = " ".join(" ".join(screen_lines(app.export_screenshot())).replace("█", " ").split())  # no border
    assert detail in shown and "Quit (y)" in shown


def test_the_prefix_hint_bar(snap_compare: Any) -> None:
    from polter.window.prefix import PREFIX_HINTS
    from polter.window.prefix import PrefixScreen

    assert snap_compare(Over(PrefixScreen("^b", PREFIX_HINTS)), terminal_size=(110, 8))


def test_the_audit_screen_filters(tmp_path: Path) -> None:
    screen = AuditScreen(session_with_rows())
    shown = [r for r in screen.session.audit_rows if screen.matches(r)]
    assert [r.id for r in shown] == [2, 3, 4, 5, 6]  # listings hidden by default
    screen.pane, screen.server = "p2", "terraria"
    assert [r.id for r in screen.session.audit_rows if screen.matches(r)] == [3, 4]
    screen.pane, screen.server, screen.decision = None, None, "deny"
    assert [r.id for r in screen.session.audit_rows if screen.matches(r)] == [3, 5]
    assert NOW.tzinfo is UTC


@pytest.mark.parametrize("width", [80, 60, 120])
async def test_the_audit_filters_fit_an_80_column_terminal(width: int) -> None:
    """At 3 x 24 cells the selects, with the title and the listings checkbox, need 112 columns: in 80 the third
    select was cut and the count pushed off the screen. Narrower, the selects share the row with the count, each
    prompt on one line (cut with an ellipsis, never wrapped); the footer's ``l`` still toggles the listings. This
    styles the label inside Textual's ``SelectCurrent`` (``Static#label``): a Textual that renames it fails here."""
    app = Over(AuditScreen(session_with_rows()))
    async with app.run_test(size=(width, 20)) as pilot:
        await pilot.pause()
        screen = app.screen
        filters = screen.query_one("#audit-filters")
        shown = [child for child in filters.children if child.display]
        assert all(child.region.right <= width - 1 for child in shown), [(c, c.region) for c in shown]
        count = screen.query_one("#audit-count", Label)
        assert str(count.content) == "5 of 6" and count.region.width >= len("5 of 6")
        for select in screen.query(Select):
            assert select.outer_size.height == 3, select  # one line of prompt between its borders
        prompts = [str(label.render()) for label in screen.query("SelectCurrent Static#label").results(Static)]
        assert len(prompts) == 3, prompts
        if width == 80:
            assert prompts == ["every pane", "every decision", "every server"]
        assert screen.query_one(Checkbox).display is (width >= 112)
        assert screen.query_one("#audit-title", Label).display is (width >= 112)


async def test_the_audit_filters_work_from_their_selects_and_new_rows_arrive_live(tmp_path: Path) -> None:
    space = session_with_rows()
    space.panes = [reviewer_pane(space)]
    screen = AuditScreen(space)
    async with Over(screen).run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = screen.query_one(DataTable)

        def shown() -> list[int]:
            return [int(str(key.value)) for key in table.rows]

        assert shown() == [2, 3, 4, 5, 6] and "5 of 6" in str(screen.query_one("#audit-count", Label).content)
        screen.query_one("#filter-pane", Select).value = "p2"
        await pilot.pause()
        assert shown() == [3, 4]
        screen.query_one("#filter-decision", Select).value = "allow_once"
        await pilot.pause()
        assert shown() == [4]
        screen.query_one("#filter-pane", Select).clear()
        screen.query_one("#filter-decision", Select).clear()
        screen.query_one("#filter-server", Select).value = "time"
        await pilot.pause()
        assert shown() == [2, 5]  # "every pane" and "every decision" again: those filters are off
        await pilot.press("l")  # listings too
        assert shown() == [1, 2, 5]

        # The gateway logs two more decisions: the one of the filtered server shows, the other does not.
        for new in (row(7, server="terraria", name="world_rain"), row(8, decision="deny")):
            space.take_event(AuditEvent(row=new))
        await pilot.pause()
        assert shown() == [1, 2, 5, 8] and table.cursor_row == 3  # following the newest
        assert "4 of 8" in str(screen.query_one("#audit-count", Label).content)


def test_the_workspace_screen_with_agent_panes(snap_compare: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """The main screen with the real gateway: headers with adapter, role, phase and state."""
    from support.gateway import write_roles
    from support.panes import wait_for_text
    from support.session import HostedApp
    from support.waiting import wait_until
    from support.workspace_app import shell_plans, wait_until_settled

    from polter.adapters.plugins import discover
    from polter.paths import config_dir
    from polter.launch.planning import Launch

    monkeypatch.setenv("PS1", r"$ \[\e[?25l\]")  # the prompt hides the cursor: no blink in the picture
    write_roles(config_dir() / "roles")
    app = HostedApp(launch=Launch(shell_plans("open", "phased", "reader"), discover(entry_points=False)))

    async def settle(pilot: Any) -> None:
        await wait_until(lambda: app._session_screen is not None and app.session_screen.ready, timeout=60)
        screen = app.session_screen
        await wait_until(lambda: len(screen.grid.panes) == 3, message="the panes")
        panes = screen.grid.panes
        # No focused header in the picture. The app's own focus on pane 1 is deferred (focus() is a
        # call_later), so it must land before it is dropped; restyling is a refresh away, so early.
        await wait_until(lambda: app.focused is panes[0].terminal, message="the app's focus on pane 1")
        app.set_focus(None)
        for pane in panes:
            await wait_for_text(pane.terminal, "$")
        await wait_until_settled(app)

        def status_colours() -> set[str]:
            return {str(pane.header.query_one("#pane-status").rich_style.color) for pane in panes}

        await wait_until(lambda: len(status_colours()) == 1, message=lambda: f"headers alike: {status_colours()}")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 24), run_before=settle)


def test_a_snapshot_mismatch_is_told_as_the_screen_lines_that_differ() -> None:
    from support.snapshots import mismatch, screen_lines

    svg = (
        Path(__file__).parent
        / "__snapshots__"
        / "test_screen_snapshots"
        / "test_the_workspace_screen_with_agent_panes.svg"
    ).read_text()
    lines = screen_lines(svg)
    assert lines[1].split() == ["$", "$"] and lines[0].split() == [
        "1",
        "open",
        "shell",
        "Shell",
        "open",
        "idle",
        "running",
        "2",
        "phased",
        "shell",
        "Shell",
        "phased",
        "research",
        "idle",
        "running",
    ]
    told = mismatch(svg, svg.replace(">research<", ">action&#160;&#160;<"))
    assert "-" + lines[0] in told and "+" + lines[0].replace("research", "action  ") in told
    told = mismatch(svg, svg.replace("{ fill: #57a5e2 }", "{ fill: #000000 }"))  # the role badges' colour
    assert told.startswith("the same text;") and "row 0 column 38 'open': fill: #57a5e2 → fill: #000000" in told


async def test_the_audit_screen_shows_the_clis_own_tools_and_filters_them() -> None:
    space = session_with_rows()
    space.audit_rows.append(
        row(
            7,
            layer="hook",
            server=None,
            name="Bash",
            builtin="shell",
            target="git push origin main && rm -rf build/cache/of/a/long/path/name",
            decision="deny",
            rule='builtins.deny["shell(git push*)"]',
            reason="the role denies `git push origin main`",
        )
    )
    screen = AuditScreen(space)
    async with Over(screen).run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = screen.query_one(DataTable)
        call = str(table.get_row("7")[COLUMNS.index("call")])
        assert call.startswith("Bash (shell) git push origin main") and call.endswith("…"), call
        screen.query_one("#filter-server", Select).value = OWN_TOOLS
        await pilot.pause()
        assert [str(key.value) for key in table.rows] == ["7"]
        table.move_cursor(row=0)
        await pilot.pause()
        detail = str(screen.query_one("#audit-detail", Static).content)
        assert "git push origin main && rm -rf build/cache/of/a/long/path/name" in detail, detail
