"""The team tools at the gateway's edge: without a session host listening they say so, and a call in progress ends
with an error when the host stops listening (it restarted); the host's side is in tests/host/test_team.py."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from support.gateway import ROLES, controller, start_gateway
from support.waiting import wait_until

from polter.gateway.models import TeamMember, TeamReply, TeamRequest

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
wait = ["*"]
"""


def said(result: object) -> str:
    return "\n".join(getattr(part, "text", "") for part in result.content)  # type: ignore[attr-defined]


async def test_without_a_session_host_a_team_call_says_so(tmp_path: Path) -> None:
    async with start_gateway(tmp_path, servers={}, roles={**ROLES, "lead": LEAD}) as harness:
        pane = await harness.pane("lead")
        async with harness.client("polter", pane.token) as client:
            listed = {tool.name for tool in (await client.list_tools()).tools}
            assert {"panes", "read", "send", "wait"} <= listed and not {"open", "close"} & listed
            result = await client.call_tool("panes", {})
        assert result.is_error and "no session host is listening" in said(result)


async def test_a_call_in_progress_ends_when_the_session_host_stops_listening(tmp_path: Path) -> None:
    async with start_gateway(tmp_path, servers={}, roles={**ROLES, "lead": LEAD}) as harness:
        pane = await harness.pane("lead")
        async with harness.client("polter", pane.token) as client:
            async with controller(harness) as host:
                call = asyncio.ensure_future(client.call_tool("panes", {}))
                await wait_until(lambda: any(event.type == "team" for event in host.events), message="the team event")
            result = await asyncio.wait_for(call, 30)
        assert result.is_error and "the session host stopped listening" in said(result)
        rows = [row for row in await harness.admin.audit() if row.name == "panes"]
        assert rows and rows[-1].decision == "error"


def team_requests(host: Any, action: str) -> list[TeamRequest]:
    requests = [TeamRequest.model_validate(event.data) for event in host.events if event.type == "team"]
    return [request for request in requests if request.action == action]


async def test_a_wait_in_progress_ends_when_the_session_host_stops_listening(tmp_path: Path) -> None:
    """The session host restarting (it stops listening to the gateway) is reported to the agents that wait on a
    pane: the wait ends with an error saying so, and no cycle of waits remembers it."""
    async with start_gateway(tmp_path, servers={}, roles={**ROLES, "lead": LEAD}) as harness:
        lead, other = await harness.pane("lead"), await harness.pane("lead")
        members = [TeamMember(pane=pane.pane.id, number=number, title="agent", cli="shell", role="lead",
                              state="working") for number, pane in enumerate((lead, other), start=1)]  # fmt: skip
        async with harness.client("polter", lead.token) as client:
            async with controller(harness) as host:
                call = asyncio.ensure_future(client.call_tool("wait", {"pane": 2, "until": "done", "timeout": 60}))
                await wait_until(lambda: team_requests(host, "roster"), message="the roster asked of the host")
                [roster] = team_requests(host, "roster")
                await harness.admin.answer_team(roster.id, TeamReply(members=members))
                await wait_until(lambda: team_requests(host, "wait"), message="the wait handed to the host")
                assert harness.gateway.team.waiting == {lead.pane.id: other.pane.id}
            result = await asyncio.wait_for(call, 30)
        assert result.is_error and "the session host stopped listening (did it restart?)" in said(result), said(result)
        assert harness.gateway.team.waiting == {}
