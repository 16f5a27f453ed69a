"""Tool-surface changes: list_changed reaches only the affected pane's sessions (both protocol eras),
the next tool result carries a notice, role files reload live, upstream changes are passed on."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from support.gateway import Harness
from support.waiting import wait_until

pytestmark = pytest.mark.asyncio(loop_scope="module")


def _tool_changes(messages: list[Any]) -> int:
    return sum(isinstance(m, types.ToolListChangedNotification) for m in messages)


@contextlib.asynccontextmanager
async def _listening(client: Client, events: list[Any]) -> AsyncIterator[None]:
    """A 2026-07-28 client hears list_changed only on a subscriptions/listen stream."""
    async with client.listen(tools_list_changed=True) as stream:
        import asyncio

        async def collect() -> None:
            async for event in stream:
                events.append(event)

        task = asyncio.create_task(collect())
        try:
            yield
        finally:
            task.cancel()


async def test_role_switch_notifies_that_pane_only_legacy(harness: Harness) -> None:
    switched, bystander = await harness.pane("reader"), await harness.pane("reader")
    heard: list[Any] = []
    other: list[Any] = []
    async with harness.client("fixture", switched.token, on_message=heard.append) as client, \
            harness.client("fixture", bystander.token, on_message=other.append) as bystander_client:
        assert len((await client.list_tools()).tools) == 3
        await bystander_client.list_tools()
        await wait_until(lambda: harness.gateway.channels.count(switched.pane.id) == 1, message="session known")
        await harness.admin.set_role(switched.pane.id, "open")
        await wait_until(lambda: _tool_changes(heard) == 1, message="list_changed for the switched pane")
        assert len((await client.list_tools()).tools) == 6
        result = await client.call_tool("read_notes", {})
        assert result.content[0].text.startswith("[polter] This pane's tools changed: its role is now open")
        assert result.content[1].text == "(no notes)"
        again = await client.call_tool("read_notes", {})
        assert len(again.content) == 1, "the notice comes once"
        await bystander_client.call_tool("read_notes", {})
    assert _tool_changes(other) == 0, "the other pane heard nothing"


async def test_role_switch_notifies_that_pane_only_2026(harness: Harness) -> None:
    switched, bystander = await harness.pane("reader"), await harness.pane("reader")
    heard: list[Any] = []
    other: list[Any] = []
    async with harness.client("fixture", switched.token, mode="auto") as client, \
            harness.client("fixture", bystander.token, mode="2026-07-28") as bystander_client, \
            _listening(client, heard), _listening(bystander_client, other):
        assert client.protocol_version == "2026-07-28" and client.server_capabilities.tools.list_changed
        await wait_until(lambda: harness.gateway.channels.count(switched.pane.id) == 1, message="stream open")
        await wait_until(lambda: harness.gateway.channels.count(bystander.pane.id) == 1, message="stream open")
        await harness.admin.set_role(switched.pane.id, "open")
        await wait_until(lambda: heard, message="tools list_changed on the listen stream")
        assert len((await client.list_tools()).tools) == 6
    assert not other


async def test_legacy_clients_are_told_tools_list_changed_is_supported(harness: Harness) -> None:
    pane = await harness.pane("open")
    for server in ("fixture", "polter"):
        async with harness.client(server, pane.token) as client:
            assert client.server_capabilities.tools.list_changed is True


async def test_a_corrupted_role_file_keeps_the_last_good_role_in_force(own_harness: Harness) -> None:
    pane = await own_harness.pane("reader")
    heard: list[Any] = []
    async with own_harness.client("fixture", pane.token, on_message=heard.append) as client:
        await client.list_tools()
        (own_harness.roles_dir / "reader.toml").write_text("description = 'broken\n[tools\n", encoding="utf-8")
        status = await own_harness.admin.reload_roles()
        assert any("reader.toml" in problem for problem in status.problems)
        assert "reader" in status.names and status.kept == ["reader"]
        refused = await client.call_tool("write_note", {"text": "x"})
        assert refused.is_error and "Polter refused" in refused.content[0].text, "still the old, strict role"
        assert len((await client.list_tools()).tools) == 3
        # Fixing the file changes the role, live: the watcher reloads it without being asked.
        (own_harness.roles_dir / "reader.toml").write_text(
            '[servers]\ndefault = "allow"\n[tools]\ndefault = "allow"\n[skills]\ndefault = "allow"\n', encoding="utf-8")
        await wait_until(lambda: _tool_changes(heard) >= 1, message="list_changed after the role file was fixed")
        assert len((await client.list_tools()).tools) == 6


async def test_a_deleted_role_file_leaves_the_pane_unable_to_call(own_harness: Harness) -> None:
    pane = await own_harness.pane("open")
    async with own_harness.client("fixture", pane.token) as client:
        assert not (await client.call_tool("read_notes", {})).is_error
        (own_harness.roles_dir / "open.toml").unlink()
        await own_harness.admin.reload_roles()
        result = await client.call_tool("read_notes", {})
        assert result.is_error and "polter:role-missing" in result.content[-1].text


async def test_an_upstream_list_change_is_refreshed_and_passed_on(own_harness: Harness) -> None:
    pane, other = await own_harness.pane("open"), await own_harness.pane("reader")
    heard: list[Any] = []
    other_heard: list[Any] = []
    async with own_harness.client("fixture", pane.token, on_message=heard.append) as client, \
            own_harness.client("fixture", other.token, on_message=other_heard.append) as other_client:
        await other_client.list_tools()
        assert (await client.call_tool("add_tool", {"name": "brand_new"})).content[0].text == "added brand_new"
        await wait_until(lambda: _tool_changes(heard) and _tool_changes(other_heard), message="both panes told")
        assert "brand_new" in {tool.name for tool in (await client.list_tools()).tools}
        assert "brand_new" in {tool.name for tool in (await other_client.list_tools()).tools}, "read-only: visible"
        assert (await client.call_tool("brand_new", {})).content[0].text == "I am brand_new"


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_the_floor_server_answers_both_eras(harness: Harness, mode: str) -> None:
    pane = await harness.pane("phased")
    async with harness.client("polter", pane.token, mode=mode) as floor:
        assert {tool.name for tool in (await floor.list_tools()).tools} == {"whoami", "escalate", "panes", "read"}
        whoami = await floor.call_tool("whoami", {})
        assert whoami.structured_content["phase"] == "research"


async def test_the_roles_status_describes_each_role_and_its_file(harness: Harness) -> None:
    status = await harness.admin.roles()
    assert [role.name for role in status.roles] == status.names
    phased = next(role for role in status.roles if role.name == "phased")
    assert phased.phases and phased.description == "Research first, then act"
    assert phased.file == str(harness.roles_dir / "phased.toml")
    assert not next(role for role in status.roles if role.name == "open").phases
