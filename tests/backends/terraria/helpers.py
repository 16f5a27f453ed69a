"""Helpers for the Terraria backend's tests: MCP calls that must succeed or fail, a closed port."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, TypeVar

from mcp import Client
from mcp.types import CallToolResult, TextContent

T = TypeVar("T")

# The catalogue (docs/terraria.md): tool names and which are read-only or destructive.
READ_ONLY = {
    "server_status", "server_info", "server_motd", "world_info", "player_list", "player_info", "user_list",
    "user_info", "ban_list", "ban_info", "group_list", "group_info", "region_list", "region_info", "warp_list",
    "wiki_search", "item_lookup",
}
DESTRUCTIVE = {
    "world_hardmode", "server_stop", "world_butcher", "player_kick", "player_ban", "player_kill", "region_delete",
    "server_raw_command", "group_permissions",
}
ACTING = {
    "server_broadcast", "server_save", "server_reload", "server_stop", "server_raw_command", "world_time_set",
    "world_rain", "world_wind", "world_bloodmoon", "world_event", "world_invasion", "world_hardmode",
    "world_butcher", "give_item", "player_kick", "player_ban", "player_unban", "player_mute", "player_kill",
    "player_heal", "player_godmode", "player_buff", "player_teleport", "npc_spawn", "region_protect",
    "region_allow", "region_delete", "group_permissions", "user_set_group",
}


@asynccontextmanager
async def hosted(manager: AbstractAsyncContextManager[T]) -> AsyncIterator[T]:
    """Enter and exit ``manager`` in one background task, and hand its value to the caller."""
    entered: asyncio.Future[T] = asyncio.get_running_loop().create_future()
    release = asyncio.Event()

    async def host() -> None:
        try:
            async with manager as value:
                entered.set_result(value)
                await release.wait()
        except BaseException as exc:
            if not entered.done():
                entered.set_exception(exc)
            raise

    task = asyncio.create_task(host())
    try:
        yield await entered
    finally:
        release.set()
        await task


def closed_port() -> int:
    """A port on 127.0.0.1 that nothing listens on (bound, then released)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def text_of(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


async def call(client: Client, tool: str, **arguments: object) -> CallToolResult:
    """Call a tool that must succeed."""
    result = await client.call_tool(tool, arguments)
    assert not result.is_error, f"{tool} failed: {text_of(result)}"
    return result


async def fail(client: Client, tool: str, **arguments: object) -> str:
    """Call a tool that must fail; its error text."""
    result = await client.call_tool(tool, arguments)
    assert result.is_error, f"{tool} should have failed but said: {text_of(result)}"
    return text_of(result)


async def data(client: Client, tool: str, **arguments: object) -> Any:
    """Call a read-only tool that must succeed; its structured result."""
    result = await call(client, tool, **arguments)
    assert result.structured_content is not None
    assert json.loads(text_of(result)) == result.structured_content
    return result.structured_content
