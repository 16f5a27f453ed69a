"""The /hook veto endpoint: the same decision as a gateway call, asks resolved before answering."""

from __future__ import annotations

import asyncio

from support.gateway import Harness
from support.waiting import wait_until

from polter.gateway.audit import read_rows
from polter.protocol import HookAnswer, HookRequest


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

    task = asyncio.create_task(controller())
    await wait_until(lambda: harness.gateway.events.controllers == 1, message="controller")
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
    answer = await _hook(harness, pane.token, _tool("delete_all"))
    assert answer.decision == "deny" and "no controller" in answer.reason


async def test_hook_needs_a_pane_token_and_a_valid_body(harness: Harness) -> None:
    pane = await harness.pane("open")
    async with harness.raw() as http:
        assert (await http.post("/hook/claude-code", json={})).status_code == 401
    async with harness.raw(pane.token) as http:
        bad = await http.post("/hook/claude-code", json={"kind": "mcp_tool"})
        assert bad.status_code == 422 and "cli_tool" in bad.text
