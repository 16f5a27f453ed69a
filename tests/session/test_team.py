"""Agents that work together, under roles: the floor server's team tools in a real session (the host, its real
gateway process, shell panes on real PTYs under test roles), called with the official MCP client and each pane's
own token, as the pane's agent would."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest
from support.gateway import fixture_server, write_roles
from support.session import hosted
from support.waiting import wait_until
from support.workspace_app import shell_plans

from polter.adapters.plugins import discover
from polter.gateway.client import pane_client
from polter.paths import config_dir
from polter.protocol import FLOOR_SERVER
from polter.session import protocol as wire
from polter.session.client import SessionClient
from polter.session.host import SessionHost
from polter.session.launch import Launch

ALLOW = """
[servers]
default = "allow"
[tools]
default = "allow"
[skills]
default = "allow"
"""
ROLES = {
    "lead": f"""description = "Leads: reaches every pane, opens helpers"
{ALLOW}
[gates]
"fixture/delete_all" = ["wipe"]
[team]
see = ["*"]
read = ["*"]
send = ["*"]
wait = ["*"]
open = ["helper", "lead"]
close = ["@opened"]
messages_per_minute = 1000
""",
    "helper": f"""description = "Helps: answers the pane that gave it its task"
{ALLOW}
[gates]
"fixture/delete_all" = ["wipe"]
[team]
send = ["@sender"]
""",
    "quiet": f"""description = "No [team]: sees and reads, nothing else"
{ALLOW}
""",
    "phased": f"""description = "Research first"
{ALLOW}
[phases]
research = ["@read-only"]
""",
}


async def team_session(monkeypatch: pytest.MonkeyPatch, *roles: str) -> contextlib.AbstractAsyncContextManager[SessionHost]:
    return _session(monkeypatch, roles)


@contextlib.asynccontextmanager
async def _session(monkeypatch: pytest.MonkeyPatch, roles: tuple[str, ...]) -> AsyncIterator[SessionHost]:
    monkeypatch.setenv("PS1", "$ ")
    write_roles(config_dir() / "roles", ROLES)
    launch = Launch(shell_plans(*roles), discover(entry_points=False), servers={"fixture": fixture_server()})
    async with hosted(launch=launch) as host:
        await wait_until(lambda: host.ready, timeout=60, message="the session's panes")
        client = await SessionClient.connect(host.files, on_event=lambda event: None, on_lost=lambda reason: None)
        try:
            for pane in client.state.panes:  # type: ignore[union-attr]
                client.send(wire.ResizeInput(pane=pane.id, columns=100, lines=30))
            for pane in host.panes:
                await wait_until(lambda pane=pane: "$" in text_of(host, pane.id), timeout=30, message="a prompt")
            host.client = client  # type: ignore[attr-defined]
            yield host
        finally:
            await client.aclose()


def text_of(host: SessionHost, pane_id: str) -> str:
    """The pane's scrollback and screen, as the host has them."""
    screen = host.pane(pane_id).terminal.screen
    if screen is None:
        return ""
    rows = [screen.text(y) for y in range(-screen.history_size, 0)] + screen.display()
    return "\n".join(row.rstrip() for row in rows)


def token(host: SessionHost, number: int) -> str:
    agent = host.panes[number - 1].agent
    assert agent is not None
    return agent.token


async def floor(host: SessionHost, number: int, tool: str, **arguments: Any) -> Any:
    """Call a floor tool as the agent of pane ``number`` (its own token)."""
    async with pane_client(FLOOR_SERVER, url=host.workspace.url, token=token(host, number)) as client:
        return await client.call_tool(tool, arguments)


async def fixture(host: SessionHost, number: int, tool: str, **arguments: Any) -> Any:
    async with pane_client("fixture", url=host.workspace.url, token=token(host, number)) as client:
        return await client.call_tool(tool, arguments)


def said(result: Any) -> str:
    return "\n".join(getattr(part, "text", "") for part in result.content)


def human_types(host: SessionHost, number: int, text: str) -> None:
    """Keys from a window, as the human types them."""
    pane = host.panes[number - 1].id
    client: SessionClient = host.client  # type: ignore[attr-defined]
    for character in text:
        client.send(wire.KeyInput(pane=pane, key="space" if character == " " else character, character=character))
    client.send(wire.KeyInput(pane=pane, key="enter"))


# -- panes, read, send --------------------------------------------------------------------------------------


async def test_panes_lists_the_session_and_read_returns_another_panes_screen(monkeypatch: pytest.MonkeyPatch) -> None:
    async with await team_session(monkeypatch, "lead", "helper", "quiet") as host:
        human_types(host, 1, "echo marker-$((40+2))")
        await wait_until(lambda: "marker-42" in text_of(host, "p1"))
        listed = await floor(host, 3, "panes")
        panes = json.loads(said(listed))
        assert [(pane["number"], pane["role"], pane["cli"], pane["you"]) for pane in panes] == [
            (1, "lead", "shell", False), (2, "helper", "shell", False), (3, "quiet", "shell", True)
        ]  # fmt: skip
        read = await floor(host, 3, "read", pane=1, lines=5)
        assert not read.is_error and "marker-42" in said(read)
        refused = await floor(host, 3, "send", pane=1, message="hello")
        assert refused.is_error and "team.send" in said(refused) and "may not send pane 1 (lead)" in said(refused)
        missing = await floor(host, 3, "read", pane=9)
        assert missing.is_error and "no pane 9" in said(missing) and "1 (lead), 2 (helper), 3 (quiet)" in said(missing)


async def test_send_types_the_message_marked_with_its_sender_and_limits_hold(monkeypatch: pytest.MonkeyPatch) -> None:
    async with await team_session(monkeypatch, "lead", "helper") as host:
        sent = await floor(host, 1, "send", pane=2, message="; echo delivered-$((6*7))")
        assert not sent.is_error, said(sent)
        await wait_until(lambda: "delivered-42" in text_of(host, "p2"), message=lambda: text_of(host, "p2"))
        assert "[from pane 1 · lead] ; echo delivered-$((6*7))" in text_of(host, "p2")
        assert host.team.sender_of(host.panes[1]) == "p1"
        too_long = await floor(host, 1, "send", pane=2, message="x" * (64 * 1024 + 1))
        assert too_long.is_error and "65536 bytes" in said(too_long)
        answer = await floor(host, 2, "send", pane=1, message="; echo answered")  # @sender: pane 1 gave the task
        assert not answer.is_error, said(answer)
        await wait_until(lambda: "answered" in text_of(host, "p1"))
        rows = [row for row in host.workspace.audit_rows if row.server == FLOOR_SERVER and row.name == "send"]
        assert any('to pane 2 (helper): "; echo delivered-$((6*7))" (25 characters)' in row.reason for row in rows)
