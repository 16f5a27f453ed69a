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


_LAZY_SDK = """
import json, sys
from polter.gateway.sdk_imports import import_sdk_lazily
assert import_sdk_lazily()
import polter.gateway.app, polter.gateway.serve, polter.gateway.upstreams
at_boot = sorted(name for name in sys.modules if name.split(".")[0] in ("mcp", "mcp_types"))
import polter.gateway.endpoints  # what the gateway's first MCP request loads
at_start = sorted(name for name in sys.modules if name.split(".")[0] in ("mcp", "cryptography", "httpx2"))
import mcp.types
from mcp.server.lowlevel import Server
import mcp
still_lean = "mcp.client.client" not in sys.modules and "mcp.server.mcpserver" not in sys.modules
from mcp import Client, MCPError
from mcp.server import MCPServer
print(json.dumps({"at_boot": at_boot, "at_start": at_start, "still_lean": still_lean, "again": import_sdk_lazily(),
                  "names": [Client.__module__, MCPError.__module__, MCPServer.__module__, mcp.types.Tool.__name__]}))
"""


def test_the_gateway_loads_the_sdk_lazily_and_every_name_the_sdk_exports_still_resolves() -> None:
    """``import_sdk_lazily`` (what ``polter gateway`` runs first): the gateway's modules load without the
    SDK's server side until its endpoints are built, and with them without the SDK's client, high-level server
    and cryptography; a name of the packages' own ``__init__`` loads it at first use; a second call does nothing."""
    import json
    import subprocess
    import sys

    result = subprocess.run([sys.executable, "-c", _LAZY_SDK], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"mcp {SDK_VERSION}: polter/gateway/sdk_imports.py broke: {result.stderr}"
    found = json.loads(result.stdout)
    server_side = [name for name in found["at_boot"] if name.startswith(("mcp.server.session", "mcp_types.methods"))]
    assert not server_side, f"mcp {SDK_VERSION}: the gateway's modules load {server_side} before an MCP request"
    loaded = set(found["at_start"])
    assert "mcp.server.lowlevel.server" in loaded and "mcp.shared.exceptions" in loaded
    unwanted = sorted(
        name
        for name in loaded
        if name.startswith(
            ("mcp.client.", "mcp.server.mcpserver", "mcp.server.request_state", "cryptography", "httpx2")
        )
    )
    assert not unwanted, (
        f"mcp {SDK_VERSION}: the gateway's modules now load {unwanted} (see polter/gateway/sdk_imports.py)"
    )
    assert found["still_lean"], f"mcp {SDK_VERSION}: a submodule import ran a package's whole __init__"
    assert found["names"] == ["mcp.client.client", "mcp.shared.exceptions", "mcp.server.mcpserver.server", "Tool"]
    assert found["again"] is False


def test_routings_log_levels_are_the_sdks() -> None:
    """``routing.LEVELS`` is written out (so routing loads without ``mcp_types``): it must stay the SDK's."""
    from typing import get_args

    from polter.gateway.routing import LEVELS

    assert LEVELS == get_args(types.LoggingLevel), f"mcp {SDK_VERSION} changed LoggingLevel"
