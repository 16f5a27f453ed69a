"""``POST /hook/<adapter>/state``: a CLI's own hook reports what its agent does; the gateway passes it on to its
controllers as a ``state`` event naming the pane of the token. A report decides nothing: every answer is the same
empty one, whatever the payload, and nothing is audited or allowed by it."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

import pytest
from support.gateway import Harness
from support.waiting import wait_until

from polter.gateway.audit import read_rows
from polter.gateway.models import GatewayEvent, PaneStateReport
from polter.hook_client import __file__ as HOOK_CLIENT

pytestmark = pytest.mark.asyncio(loop_scope="module")

PERMISSION = {"hook_event_name": "PermissionRequest", "tool_name": "Bash", "tool_input": {"command": "rm -rf /"},
              "session_id": "s", "cwd": "/p", "permission_mode": "default", "transcript_path": "/t"}  # fmt: skip


class StateEvents:
    """The ``state`` events a controller hears on ``/control/events`` while it listens."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self.reports: list[PaneStateReport] = []
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> StateEvents:
        before = self.harness.gateway.events.controllers
        self._task = asyncio.create_task(self._listen())
        await wait_until(lambda: self.harness.gateway.events.controllers > before, message="the controller")
        return self

    async def _listen(self) -> None:
        event: GatewayEvent
        async for event in self.harness.admin.events():
            if event.type == "state":
                self.reports.append(PaneStateReport.model_validate(event.data))

    async def __aexit__(self, *exc_info: object) -> None:
        assert self._task is not None
        self._task.cancel()
        await asyncio.gather(self._task, return_exceptions=True)


async def post(harness: Harness, token: str | None, payload: Any, adapter: str = "claude-code", **query: str) -> Any:
    async with harness.raw(token) as http:
        body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        return await http.post(f"/hook/{adapter}/state", content=body, params=query,
                               headers={"Content-Type": "application/json"})  # fmt: skip


async def test_a_report_reaches_the_controllers_for_the_pane_of_its_token(harness: Harness) -> None:
    first, second = await harness.pane("open", title="one"), await harness.pane("reader", title="two")
    async with StateEvents(harness) as events:
        response = await post(harness, second.token, PERMISSION)
        assert (response.status_code, response.content) == (200, b"{}")
        stop = {"hook_event_name": "Stop", "last_assistant_message": "Done.", "stop_hook_active": False}
        assert (await post(harness, first.token, stop)).content == b"{}"
        await wait_until(lambda: len(events.reports) == 2, message=lambda: str(events.reports))
    asked, done = events.reports
    assert (asked.pane, asked.adapter, asked.report.state, asked.report.event) == (
        second.pane.id, "claude-code", "waiting-for-input", "PermissionRequest")  # fmt: skip
    assert asked.report.message == "Claude Code asks permission to use Bash"
    assert (done.pane, done.report.state, done.report.message, done.report.turn_ended) == (
        first.pane.id,
        "idle",
        "Done.",
        True,
    )


async def test_a_report_decides_nothing_whatever_it_says(harness: Harness) -> None:
    """The answer never depends on the payload (no decision a CLI could read), and nothing is audited: a pane
    cannot talk its way past its role through the state endpoint."""
    pane = await harness.pane("reader")
    before = read_rows(harness.gateway.audit.path, pane=pane.pane.id)
    veto_shaped = {"hook_event_name": "PreToolUse", "tool_name": "mcp__fixture__write_note", "tool_input": {}}
    decision_shaped = {**PERMISSION, "hookSpecificOutput": {"decision": {"behavior": "allow"}}}
    answers = [await post(harness, pane.token, body) for body in (PERMISSION, veto_shaped, decision_shaped,
                                                                   b"not json", b"[1, 2]", {})]  # fmt: skip
    assert {(answer.status_code, answer.content) for answer in answers} == {(200, b"{}")}
    command = await post(harness, pane.token, PERMISSION, reply="command")
    assert command.content == b"0\n0\n", "hook_client's form of 'exit 0, print nothing'"
    assert read_rows(harness.gateway.audit.path, pane=pane.pane.id) == before


async def test_the_state_endpoint_needs_a_pane_token(harness: Harness) -> None:
    assert (await post(harness, None, PERMISSION)).status_code == 401
    assert (await post(harness, "not-a-token", PERMISSION)).status_code == 401
    assert (await post(harness, harness.admin_token, PERMISSION)).status_code == 401
    unknown = await post(harness, (await harness.pane("open")).token, PERMISSION, adapter="no-such-cli")
    assert (unknown.status_code, unknown.content) == (200, b"{}"), "an adapter that cannot load drops the report"


async def run_forwarder(url: str, token: str, payload: bytes, adapter: str = "claude-code") -> tuple[int, bytes, bytes]:
    """``hook_client.py --state ADAPTER``, as Codex, Gemini CLI and Qwen Code run it."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-I", "-S", HOOK_CLIENT, "--state", adapter, stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "POLTER_GATEWAY_URL": url, "POLTER_TOKEN": token},
    )  # fmt: skip
    out, err = await process.communicate(payload)
    return process.returncode or 0, out, err


async def test_the_forwarder_reports_and_never_stands_in_the_way(harness: Harness) -> None:
    pane = await harness.pane("open")
    async with StateEvents(harness) as events:
        assert await run_forwarder(harness.url, pane.token, json.dumps(PERMISSION).encode()) == (0, b"", b"")
        await wait_until(lambda: len(events.reports) == 1, message="the forwarded report")
    assert events.reports[0].pane == pane.pane.id and events.reports[0].report.event == "PermissionRequest"
    # a gateway that is gone, a token it does not know, garbage: the CLI goes on as if there were no hook
    assert await run_forwarder("http://127.0.0.1:9", pane.token, b"{}") == (0, b"", b"")
    assert await run_forwarder(harness.url, "unknown", b"{}") == (0, b"", b"")
    assert await run_forwarder("nonsense", pane.token, b"garbage") == (0, b"", b"")
