"""Both layers against a real upstream: the listing is filtered per role, every call is decided."""

from __future__ import annotations

import asyncio
import time

import pytest
from support.gateway import Harness
from support.waiting import wait_until

from polter.gateway.audit import read_rows
from polter.gateway.execution import GATE_GRACE_SECONDS

pytestmark = pytest.mark.asyncio(loop_scope="module")

ALL_FIXTURE_TOOLS = {"read_notes", "write_note", "delete_all", "pid", "slow", "add_tool"}
READ_ONLY_TOOLS = {"read_notes", "pid", "slow"}


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_listing_is_filtered_per_role(harness: Harness, mode: str) -> None:
    reader = await harness.pane("reader")
    writer = await harness.pane("open")
    async with harness.client("fixture", reader.token, mode=mode) as client:
        assert {tool.name for tool in (await client.list_tools()).tools} == READ_ONLY_TOOLS
    async with harness.client("fixture", writer.token, mode=mode) as client:
        assert {tool.name for tool in (await client.list_tools()).tools} == ALL_FIXTURE_TOOLS


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_denied_call_is_refused_with_rule_and_reason_and_never_reaches_the_upstream(
    harness: Harness, mode: str
) -> None:
    reader = await harness.pane("reader")
    async with harness.client("fixture", reader.token, mode=mode) as client:
        result = await client.call_tool("write_note", {"text": "should never be written"})
        assert result.is_error
        text = result.content[0].text
        assert text.startswith("Polter refused fixture/write_note (forbidden, not broken)")
        assert "tools.default" in text and "reader" in text
        assert result.meta is not None and result.meta["polter"]["decision"] == "deny"
        notes = await client.call_tool("read_notes", {})
        assert not notes.is_error and "should never be written" not in notes.content[0].text


async def test_an_allowed_call_is_forwarded_and_audited(harness: Harness) -> None:
    pane = await harness.pane("open", title="writer")
    async with harness.client("fixture", pane.token) as client:
        assert len((await client.list_tools()).tools) == len(ALL_FIXTURE_TOOLS)
        assert (await client.call_tool("write_note", {"text": "hello"})).content[0].text == "noted: hello"
        assert "hello" in (await client.call_tool("read_notes", {})).content[0].text.splitlines()

    def listings() -> list:  # type: ignore[type-arg]
        return [row for row in read_rows(harness.gateway.audit.path, pane=pane.pane.id) if row.layer == "listing"]

    await wait_until(listings, message="the listing's audit row (written without waiting for its commit)")
    listing = listings()[0]
    assert (listing.server, listing.role, listing.decision) == ("fixture", "open", "allow")
    assert listing.reason == f"{len(ALL_FIXTURE_TOOLS)} of {len(ALL_FIXTURE_TOOLS)} tools listed"
    rows = read_rows(harness.gateway.audit.path, pane=pane.pane.id)
    calls = [(row.layer, row.name, row.decision) for row in rows if row.layer == "call"]
    assert calls == [("call", "write_note", "allow"), ("call", "read_notes", "allow")]
    write = next(row for row in rows if row.name == "write_note")
    assert write.role == "open" and write.server == "fixture" and write.args_digest.startswith("sha256:")
    assert write.args is None, "raw arguments are kept only when the user opts in"
    assert write.latency_ms > 0 and write.time is not None


async def test_a_server_denied_by_the_role_lists_nothing_and_refuses_prompts_and_resources(harness: Harness) -> None:
    from mcp import MCPError

    from polter.gateway.endpoints import POLICY_DENIED

    pane = await harness.pane("no-fixture")
    async with harness.client("fixture", pane.token) as client:
        assert (await client.list_tools()).tools == []
        assert (await client.list_prompts()).prompts == []
        assert (await client.list_resources()).resources == []
        with pytest.raises(MCPError) as refused:
            await client.get_prompt("greet", {"who": "x"})
        assert refused.value.error.code == POLICY_DENIED and "servers.deny" in refused.value.error.message
        with pytest.raises(MCPError):
            await client.read_resource("note://first")
        result = await client.call_tool("read_notes", {})
        assert result.is_error and "servers.deny" in result.content[0].text


async def test_prompts_and_resources_pass_through_under_the_same_policy(harness: Harness) -> None:
    pane = await harness.pane("open")
    async with harness.client("fixture", pane.token) as client:
        assert [prompt.name for prompt in (await client.list_prompts()).prompts] == ["greet"]
        prompt = await client.get_prompt("greet", {"who": "Ada"})
        assert "Hello, Ada!" in prompt.messages[0].content.text
        assert [str(r.uri) for r in (await client.list_resources()).resources] == ["note://first"]
        assert (await client.read_resource("note://first")).contents[0].text


async def test_a_missing_role_fails_closed_for_calls_and_open_for_listing(harness: Harness) -> None:
    pane = await harness.pane("no-such-role")
    async with harness.client("fixture", pane.token) as client:
        assert {tool.name for tool in (await client.list_tools()).tools} == ALL_FIXTURE_TOOLS
        result = await client.call_tool("read_notes", {})
        assert result.is_error and "polter:role-missing" in result.content[0].text
    info = await harness.admin.pane(pane.pane.id)
    assert not info.role_found


async def test_gated_tool_needs_the_humans_words(harness: Harness) -> None:
    pane = await harness.pane("gated")
    async with harness.client("fixture", pane.token) as client:
        assert "delete_all" in {tool.name for tool in (await client.list_tools()).tools}, "gated tools stay listed"
        refused = await client.call_tool("delete_all", {})
        assert refused.is_error and 'gates["fixture/delete_all"]' in refused.content[0].text
        await harness.admin.input(pane.pane.id, "please tidy up")
        assert (await client.call_tool("delete_all", {})).is_error
        await harness.admin.input(pane.pane.id, "请把笔记清空")
        assert (await client.call_tool("delete_all", {})).content[0].text == "deleted"


async def test_a_gated_call_waits_briefly_for_the_line_the_human_is_submitting(harness: Harness) -> None:
    """The app writes the Enter to the CLI before it passes the line on: a fast agent's call must not lose
    that race. A call shut out by a gate waits (GATE_GRACE_SECONDS) for the pane's next line."""
    pane = await harness.pane("gated")
    gateway_pane = harness.gateway.panes.get(pane.pane.id)
    async with harness.client("fixture", pane.token) as client:
        call = asyncio.create_task(client.call_tool("delete_all", {}))
        await wait_until(lambda: gateway_pane.awaiting_input == 1, message="the call waiting for a line")
        await harness.admin.input(pane.pane.id, "please wipe the notes")
        assert (await call).content[0].text == "deleted"
    other = await harness.pane("gated")  # its human says nothing: refused once the grace is over
    async with harness.client("fixture", other.token) as client:
        started = time.monotonic()
        refused = await client.call_tool("delete_all", {})
        assert refused.is_error and 'gates["fixture/delete_all"]' in refused.content[0].text
        assert time.monotonic() - started >= GATE_GRACE_SECONDS


async def test_phases_hide_and_refuse_until_escalated_and_a_new_line_starts_over(harness: Harness) -> None:
    pane = await harness.pane("phased")
    assert pane.pane.phase == "research"
    changed: list[object] = []
    async with harness.client("fixture", pane.token, on_message=changed.append) as client, \
            harness.client("polter", pane.token) as floor:
        assert {tool.name for tool in (await client.list_tools()).tools} == READ_ONLY_TOOLS
        refused = await client.call_tool("write_note", {"text": "x"})
        assert refused.is_error and "research phase" in refused.content[0].text
        assert {tool.name for tool in (await floor.list_tools()).tools} == {"whoami", "escalate", "panes", "read"}
        escalated = await floor.call_tool("escalate", {"reason": "the human asked for a note"})
        assert not escalated.is_error and "action phase" in escalated.content[0].text
        await wait_until(lambda: changed, message="list_changed after escalate")
        assert {tool.name for tool in (await client.list_tools()).tools} == ALL_FIXTURE_TOOLS
        assert (await client.call_tool("write_note", {"text": "x"})).content[0].text == "noted: x"
        await harness.admin.input(pane.pane.id, "next question")
        assert (await harness.admin.pane(pane.pane.id)).phase == "research"
        assert (await client.call_tool("write_note", {"text": "y"})).is_error


async def test_whoami_reports_own_surface_with_reasons(harness: Harness) -> None:
    pane = await harness.pane("reader", title="R")
    await harness.admin.set_skills(pane.pane.id, ["deploy", "write-docs", "search"])
    async with harness.client("polter", pane.token) as floor:
        result = await floor.call_tool("whoami", {})
    data = result.structured_content
    assert data["pane"] == pane.pane.id and data["role"] == "reader" and data["title"] == "R"
    fixture = next(server for server in data["servers"] if server["name"] == "fixture")
    tools = {tool["name"]: tool for tool in fixture["tools"]}
    assert tools["write_note"]["decision"] == "deny" and not tools["write_note"]["visible"]
    assert tools["read_notes"]["decision"] == "allow" and tools["read_notes"]["visible"]
    assert tools["read_notes"]["read_only"] and "reader" in tools["write_note"]["reason"]
    skills = {skill["name"]: skill["decision"] for skill in data["skills"]}
    assert skills == {"deploy": "ask", "write-docs": "deny", "search": "allow"}
    assert data == (await harness.admin.capabilities(pane.pane.id)).model_dump(mode="json")
