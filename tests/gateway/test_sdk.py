"""The gateway's touches of MCP SDK internals (``polter/gateway/sdk.py``) still hold with the installed SDK.

Each runs a real low-level server through the SDK's own in-process client, in both protocol eras, and a
failure names the SDK's version: an upgrade that breaks a touch point fails here, not in a pane that no
longer hears ``list_changed``.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.server import ServerRequestContext
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from polter.gateway.sdk import SDK_VERSION, CallNext, GatewayServer, HandlerResult, session_connection, use_middleware

BROKE = f"mcp {SDK_VERSION} broke a touch point in polter/gateway/sdk.py:"
ERAS = ["legacy", "auto"]  # auto: server/discover, then the 2026-07-28 protocol


def probe(**options: Any) -> GatewayServer:
    async def list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[])

    return GatewayServer("probe", on_list_tools=list_tools, **options)


@pytest.mark.parametrize("mode", ERAS)
async def test_our_middleware_replaces_the_sdks_and_wraps_every_request(mode: str) -> None:
    seen: list[str] = []

    async def record(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        seen.append(ctx.method)
        return await call_next(ctx)

    server = probe()
    use_middleware(server, record)
    async with Client(server, mode=mode) as client:
        assert (client.protocol_version in MODERN_PROTOCOL_VERSIONS) == (mode == "auto")
        await client.list_tools()
    assert server.middleware == [record], f"{BROKE} Server.middleware is not a plain list any more"
    assert "tools/list" in seen, f"{BROKE} Server.middleware no longer wraps each request (saw {seen})"


@pytest.mark.parametrize("mode", ERAS)
async def test_instructions_are_read_from_the_callable_on_every_connection(mode: str) -> None:
    current = "the first instructions"
    server = probe(instructions=lambda: current)
    async with Client(server, mode=mode) as client:
        assert client.instructions == "the first instructions", f"{BROKE} Server.instructions is not read per client"
    current = "after a restart"
    async with Client(server, mode=mode) as client:
        assert client.instructions == "after a restart", f"{BROKE} Server.instructions is read once, not per client"


async def test_plain_instructions_still_work() -> None:
    async with Client(probe(instructions="fixed"), mode="legacy") as client:
        assert client.instructions == "fixed"


async def test_a_2025_era_client_is_told_that_list_changed_is_sent() -> None:
    async with Client(probe(), mode="legacy") as client:
        tools = client.server_capabilities.tools
        assert tools is not None and tools.list_changed, (
            f"{BROKE} the runner no longer takes the capabilities from Server.create_initialization_options()"
        )


async def test_a_2025_era_sessions_connection_is_found_and_its_end_is_announced() -> None:
    connections: list[object] = []
    ended: list[object] = []

    async def remember(ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        connection = session_connection(ctx.session)
        if connection is not None and all(connection is not known for known in connections):
            connections.append(connection)

            async def forget(connection: object = connection) -> None:
                ended.append(connection)

            connection.exit_stack.push_async_callback(forget)
        return await call_next(ctx)

    server = probe()
    use_middleware(server, remember)
    async with Client(server, mode="legacy") as client:
        await client.list_tools()
        await client.list_tools()
        assert len(connections) == 1, f"{BROKE} ServerSession._connection is gone or not one per session"
        assert not ended
    assert ended == connections, f"{BROKE} a session's Connection.exit_stack no longer runs when the session ends"
