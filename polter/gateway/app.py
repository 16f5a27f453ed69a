"""``create_gateway(config) -> Starlette``: the whole gateway as one ASGI app.

The app's lifespan starts, in order, the audit writer, the MCP endpoints (whose session managers start at
the first MCP request: :mod:`~polter.gateway.endpoint_set`), the upstream pool and the role-file and
servers-file watchers, and stops them in reverse. Nothing is global: two gateways can run in one process
(the tests do).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.responses import JSONResponse
from starlette.routing import Route

from polter.gateway.config import GatewayConfig
from polter.gateway.control import control_routes, hook_route
from polter.gateway.core import Gateway
from polter.gateway.endpoint_set import EndpointSet
from polter.gateway.hook_payloads import FindTranslator, payload_route
from polter.gateway.panes import new_token
from polter.gateway.reload import reload_servers, watch_servers
from polter.gateway.security import GatewayAuth, loopback_security
from polter.gateway.state_reports import state_route
from polter.roles.library import RoleLibrary, default_layers

__all__ = ["create_gateway", "default_roles_dirs"]

logger = logging.getLogger(__name__)


def default_roles_dirs() -> list[Path]:
    """Bundled roles, then the user's, then the project's (later ones override earlier by name)."""
    return [layer.path for layer in default_layers()]


class _McpRouter:
    """``/mcp/{server}``: dispatch to that endpoint's session manager (a dict lookup, no regex per server)."""

    def __init__(self, endpoints: EndpointSet) -> None:
        self.endpoints = endpoints

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        endpoint = await self.endpoints.get(scope["path_params"]["server"])
        if endpoint is None:
            known = ", ".join(sorted(self.endpoints))
            await JSONResponse({"error": f"no such server; this gateway serves: {known}"}, 404)(scope, receive, send)
            return
        await endpoint(scope, receive, send)


def create_gateway(
    config: GatewayConfig,
    *,
    roles: RoleLibrary | None = None,
    admin_token: str | None = None,
    adapters: FindTranslator | None = None,
) -> Starlette:
    """Build the gateway app. ``app.state.gateway`` is the :class:`Gateway`; ``app.state.admin_token``
    the control API's token (generated when not given); ``adapters`` finds the CLIs' hook translators
    (:mod:`~polter.gateway.hook_payloads`; none: every hook payload is refused)."""
    gateway = Gateway(config, roles if roles is not None else RoleLibrary.load(config.roles_dirs), adapters=adapters)
    admin_token = admin_token or new_token()
    security = loopback_security()
    endpoints = EndpointSet(gateway, security)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        async with AsyncExitStack() as stack:
            gateway.audit.start()
            stack.push_async_callback(gateway.audit.aclose)
            await stack.enter_async_context(endpoints.run())
            await stack.enter_async_context(gateway.pool.run())
            if config.watch_roles:
                watcher = asyncio.create_task(_watch_roles(gateway), name="polter-roles-watcher")
                stack.callback(watcher.cancel)
            if config.watch_servers and config.servers_file is not None:
                servers_watcher = asyncio.create_task(
                    watch_servers(gateway, endpoints, config.servers_file), name="polter-servers-watcher"
                )
                stack.callback(servers_watcher.cancel)
            stack.callback(gateway.events.close)
            gateway.ready.set()
            yield

    routes = [
        Route("/mcp/{server}", _McpRouter(endpoints)),
        hook_route(gateway),
        payload_route(gateway),
        state_route(gateway),
        *control_routes(gateway, functools.partial(reload_servers, gateway, endpoints)),
    ]
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(
                GatewayAuth,
                panes=gateway.panes,
                admin_token_hash=hashlib.sha256(admin_token.encode()).hexdigest(),
                security=security,
                pane_socket=config.pane_socket,
            )
        ],
        lifespan=lifespan,
    )
    app.state.gateway = gateway
    app.state.admin_token = admin_token
    app.state.endpoints = endpoints
    return app


async def _watch_roles(gateway: Gateway) -> None:
    """Apply role-file changes as they happen; the library keeps the last good version of a broken role."""
    try:
        async for report in gateway.roles.watch():
            gateway.roles_reloaded(report)
    except asyncio.CancelledError:
        raise
    except Exception:
        logger.exception("the role watcher stopped; reload with POST /control/roles/reload")
