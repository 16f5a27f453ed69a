"""The gateway's MCP endpoints by name (``/mcp/polter`` and one per upstream), built at the first MCP request.

Until a pane's CLI sends one, the gateway has not loaded the SDK's server side: its sessions, transports and
the wire models of every protocol era, 7 MB of a gateway's 54 at start (``docs/architecture.md``, "Memory").
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections.abc import AsyncIterator, Iterator
from typing import TYPE_CHECKING

from polter.gateway.panes import current_pane
from polter.roles.engine import FLOOR_SERVER

if TYPE_CHECKING:
    from mcp.server.transport_security import TransportSecuritySettings

    from polter.gateway.core import Gateway
    from polter.gateway.endpoints import Endpoint

__all__ = ["EndpointSet"]


class EndpointSet:
    """The gateway's endpoints by name, built together at the first :meth:`get`. Each is served (its session
    managers running) by a task of its own, so a servers-file reload can add and remove endpoints while the
    gateway runs; removing one ends its sessions."""

    def __init__(self, gateway: Gateway, security: TransportSecuritySettings) -> None:
        self.gateway, self.security = gateway, security
        self._endpoints: dict[str, Endpoint] | None = None
        """Built, and served while running, at the first request; ``None`` before."""
        self._serving: dict[str, tuple[asyncio.Event, asyncio.Task[None]]] = {}
        self._running = False
        self.changing = asyncio.Lock()
        """Held while the set of servers changes (a servers-file reload, the endpoints' first build)."""

    def __iter__(self) -> Iterator[str]:
        """The names served (built or not)."""
        return iter(self._endpoints if self._endpoints is not None else [FLOOR_SERVER, *self.gateway.pool.names])

    async def get(self, name: str) -> Endpoint | None:
        """The endpoint ``name``, serving; the first call builds them all."""
        if self._endpoints is None:
            async with self.changing:
                if self._endpoints is None:
                    endpoints = {each: self._build(each) for each in self}
                    if self._running:
                        for endpoint in endpoints.values():
                            await self._serve(endpoint)
                    self._endpoints = endpoints
        return self._endpoints.get(name)

    def _build(self, name: str) -> Endpoint:
        from polter.gateway.endpoints import build_endpoint  # lazy: the SDK's server side (the module's docstring)

        return build_endpoint(self.gateway, name, self.security)

    async def add(self, name: str) -> None:
        """Serve the pool's upstream ``name`` on ``/mcp/<name>`` (before the first build: when it happens)."""
        if self._endpoints is None:
            return
        endpoint = self._build(name)
        if self._running:
            await self._serve(endpoint)
        self._endpoints[name] = endpoint

    async def remove(self, name: str) -> None:
        if self._endpoints is not None:
            self._endpoints.pop(name, None)
        serving = self._serving.pop(name, None)
        if serving is not None:
            stop, task = serving
            stop.set()
            await asyncio.gather(task, return_exceptions=True)

    async def _serve(self, endpoint: Endpoint) -> None:
        started, stop = asyncio.Event(), asyncio.Event()

        async def serve() -> None:
            async with endpoint.manager.run(), endpoint.streams.run():
                started.set()
                await stop.wait()

        # the first request's task builds the endpoints: their sessions' tasks must not inherit its pane
        context = contextvars.copy_context()
        context.run(current_pane.set, None)
        task = asyncio.create_task(serve(), name=f"endpoint:{endpoint.name}", context=context)
        self._serving[endpoint.name] = (stop, task)
        ready = asyncio.ensure_future(started.wait())
        await asyncio.wait({task, ready}, return_when=asyncio.FIRST_COMPLETED)
        ready.cancel()
        if task.done():
            task.result()  # raises what stopped it

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[EndpointSet]:
        self._running = True
        try:
            for endpoint in (self._endpoints or {}).values():
                await self._serve(endpoint)
            yield self
        finally:
            self._running = False
            for name in list(self._serving):
                stop, _ = self._serving[name]
                stop.set()
            await asyncio.gather(*(task for _, task in self._serving.values()), return_exceptions=True)
            self._serving.clear()
