"""What the human sees and does of agents working together (docs/team.md), in the window against the real gateway:
the header's sender and queue, prefix then s, the palette's "Send to panes…" (the human's words) and "Team view"."""

from __future__ import annotations

from typing import Any

from support.keys import type_keys
from support.gateway import ROLES, fixture_server
from support.workspace_app import SCRIPTED_AGENT, agent_of, badges, host_of, palette, panes, shell_plans, workspace_app
from support.waiting import wait_until

from polter.gateway.client import pane_client
from polter.protocol import FLOOR_SERVER
from polter.window.audit_screen import AuditScreen
from polter.window.text_prompt import TextEchoScreen

LEAD = """
description = "Sends to every pane"
[servers]
default = "allow"
[tools]
default = "allow"
[skills]
default = "allow"
[team]
send = ["*"]
"""
TEAM_ROLES = {**ROLES, "lead": LEAD}


async def answer(app: Any, pilot: Any, text: str) -> None:
    await wait_until(lambda: isinstance(app.screen, TextEchoScreen), message="the prompt")
    await type_keys(pilot, text, enter=True)


async def test_send_to_panes_types_the_humans_words_which_open_a_gate(monkeypatch: Any) -> None:
    async with workspace_app(monkeypatch, shell_plans("open", "gated"), roles=TEAM_ROLES,
                             servers={"fixture": fixture_server()}) as (app, pilot):  # fmt: skip
        _one, two = panes(app)
        token = agent_of(app, two).token
        url = host_of(app).workspace.url
        async with pane_client("fixture", url=url, token=token) as client:
            assert (await client.call_tool("delete_all", {})).is_error  # the gate is shut
            await palette(pilot, ("send to panes", "Send to panes…"))
            await answer(app, pilot, "2")
            await answer(app, pilot, "echo wipe it")
            await wait_until(lambda: "wipe it" in "\n".join(host_of(app).pane(two.remote.id).terminal.screen.display()))
            opened = await client.call_tool("delete_all", {})
            assert not opened.is_error, opened.content


async def test_the_header_shows_the_sender_prefix_s_goes_there_and_the_team_view_lists_the_call(
    monkeypatch: Any,
) -> None:
    plans = [*shell_plans("lead"), *shell_plans("open", command=SCRIPTED_AGENT)]
    async with workspace_app(monkeypatch, plans, roles=TEAM_ROLES) as (app, pilot):
        one, two = panes(app)
        async with pane_client(FLOOR_SERVER, url=host_of(app).workspace.url, token=agent_of(app, one).token) as client:
            sent = await client.call_tool("send", {"pane": 2, "message": "work 0.5"})
            assert not sent.is_error, sent.content
        await wait_until(lambda: badges(two).get("task") == "from pane 1 · lead", message=lambda: str(badges(two)))
        two.terminal.focus()
        await pilot.pause()
        await pilot.press("ctrl+b", "s")
        await wait_until(lambda: app.session_screen.active_pane is one, message="pane 1 focused")
        await palette(pilot, ("team view", "Team view"))
        await wait_until(lambda: isinstance(app.screen, AuditScreen), message="the team view")
        view = app.screen
        assert isinstance(view, AuditScreen) and view.server == FLOOR_SERVER
        await wait_until(lambda: view.shown > 0, message="the send's row")
