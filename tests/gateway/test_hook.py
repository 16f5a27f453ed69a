"""The /hook veto endpoint: the same decision as a gateway call, asks resolved before answering."""

from __future__ import annotations

import asyncio

import pytest
from support.gateway import Harness
from support.waiting import wait_until

from polter.gateway.audit import read_rows
from polter.protocol import HookAnswer, HookRequest

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def _hook(harness: Harness, token: str, request: HookRequest, adapter: str = "claude-code") -> HookAnswer:
    async with harness.raw(token) as http:
        response = await http.post(f"/hook/{adapter}", content=request.model_dump_json(),
                                   headers={"Content-Type": "application/json"})
    assert response.status_code == 200, response.text
    return HookAnswer.model_validate_json(response.content)


def _tool(tool: str, server: str = "fixture", **arguments: object) -> HookRequest:
    return HookRequest(kind="mcp_tool", cli_tool=f"mcp__{server}__{tool}", server=server, tool=tool,
                       arguments=dict(arguments))


async def test_hook_decides_like_the_gateway(harness: Harness) -> None:
    reader = await harness.pane("reader")
    denied = await _hook(harness, reader.token, _tool("write_note", text="x"))
    assert denied.decision == "deny" and denied.rule.startswith("tools.default") and "reader" in denied.reason
    assert (await _hook(harness, reader.token, _tool("read_notes"))).decision == "allow"
    assert (await _hook(harness, reader.token, _tool("whoami", server="polter"))).decision == "allow"
    unknown = await _hook(harness, reader.token, _tool("x", server="not-managed"))
    assert unknown.decision == "deny" and unknown.rule == "polter:unknown-server"
    other = await _hook(harness, reader.token, HookRequest(kind="other", cli_tool="Bash"))
    assert other.decision == "allow"
    skill = await _hook(harness, reader.token, HookRequest(kind="skill", cli_tool="Skill", skill="write-docs"))
    assert skill.decision == "deny" and "write" in skill.reason
    rows = read_rows(harness.gateway.audit.path, pane=reader.pane.id)
    assert [(row.layer, row.name, row.decision) for row in rows] == [
        ("hook", "write_note", "deny"), ("hook", "read_notes", "allow"), ("hook", "whoami", "allow"),
        ("hook", "x", "deny"), ("hook", "Bash", "allow"), ("hook", "write-docs", "deny"),
    ]
    assert all(row.reason.startswith("[claude-code]") for row in rows)


async def test_an_ask_answered_at_the_hook_is_not_asked_again_by_the_call(harness: Harness) -> None:
    pane = await harness.pane("asker")
    asked: list[str] = []

    async def controller() -> None:
        async for event in harness.admin.events():
            if event.type == "ask":
                asked.append(event.data["id"])
                await harness.admin.answer(event.data["id"], "allow_once")

    before = harness.gateway.events.controllers
    task = asyncio.create_task(controller())
    await wait_until(lambda: harness.gateway.events.controllers == before + 1, message="controller")
    answer = await _hook(harness, pane.token, _tool("write_note", text="via hook"))
    assert answer.decision == "allow" and len(asked) == 1
    async with harness.client("fixture", pane.token) as client:
        assert (await client.call_tool("write_note", {"text": "via hook"})).content[0].text == "noted: via hook"
        assert len(asked) == 1, "the hook's answer covered this identical call"
        assert not (await client.call_tool("write_note", {"text": "different"})).is_error
        assert len(asked) == 2, "a different call is asked again"
    task.cancel()


async def test_hook_with_no_controller_denies_an_ask(harness: Harness) -> None:
    pane = await harness.pane("asker")
    await wait_until(lambda: harness.gateway.events.controllers == 0, message="earlier controllers gone")
    answer = await _hook(harness, pane.token, _tool("delete_all"))
    assert answer.decision == "deny" and "no controller" in answer.reason


async def test_hook_needs_a_pane_token_and_a_valid_body(harness: Harness) -> None:
    pane = await harness.pane("open")
    async with harness.raw() as http:
        assert (await http.post("/hook/claude-code", json={})).status_code == 401
    async with harness.raw(pane.token) as http:
        bad = await http.post("/hook/claude-code", json={"kind": "mcp_tool"})
        assert bad.status_code == 422 and "cli_tool" in bad.text


async def _polter_hook(harness_url: str, token: str, payload: dict[str, object]) -> tuple[int, str, str]:
    """Run the real ``polter hook claude-code`` (what Claude Code runs) against the gateway."""
    import json
    import os
    import sys

    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "polter.cli.hook", "claude-code", stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "POLTER_GATEWAY_URL": harness_url, "POLTER_TOKEN": token},
    )
    out, err = await process.communicate(json.dumps(payload).encode())
    return process.returncode or 0, out.decode(), err.decode()


def _claude_payload(tool: str, **arguments: object) -> dict[str, object]:
    return {"hook_event_name": "PreToolUse", "tool_name": f"mcp__fixture__{tool}", "tool_input": arguments,
            "mcp_server": {"name": "fixture"}}


async def test_polter_hook_against_the_real_gateway_and_with_the_gateway_down(harness: Harness) -> None:
    import json

    reader = await harness.pane("reader")
    code, out, _ = await _polter_hook(harness.url, reader.token, _claude_payload("write_note", text="x"))
    decision = json.loads(out)["hookSpecificOutput"]
    assert code == 0 and decision["permissionDecision"] == "deny"
    assert "tools.default" in decision["permissionDecisionReason"]
    code, out, _ = await _polter_hook(harness.url, reader.token, _claude_payload("read_notes"))
    assert code == 0 and "deny" not in out
    rows = [row for row in read_rows(harness.gateway.audit.path, pane=reader.pane.id) if row.layer == "hook"]
    assert [(row.name, row.decision) for row in rows] == [("write_note", "deny"), ("read_notes", "allow")]

    down = "http://127.0.0.1:9"  # nothing listens on the discard port
    code, out, err = await _polter_hook(down, reader.token, _claude_payload("read_notes"))
    assert code == 2 and "cannot be reached" in err, (code, out, err)
    code, out, err = await _polter_hook(harness.url, "not-a-pane-token-" + "x" * 30, _claude_payload("read_notes"))
    assert code == 2 and "401" in err, (code, out, err)
