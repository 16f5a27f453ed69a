"""A faithful TShock 5.2 REST simulator for tests and demos (``polter terraria sim``).

In-process use (tests)::

    world = World(seed=7)
    async with SimulatorServer(world) as sim:
        ...  # sim.url, sim.token; then inspect ``world``
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from types import TracebackType

import uvicorn

from polter.backends.terraria.simulator.rest import create_app
from polter.backends.terraria.simulator.world import ServerConfig, World

__all__ = ["ServerConfig", "SimulatorServer", "World", "create_app"]


class SimulatorServer:
    """Serves a :class:`World` over HTTP on 127.0.0.1 inside the running event loop."""

    def __init__(self, world: World, *, port: int = 0) -> None:
        self.world = world
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind(("127.0.0.1", port))
        self.port: int = self._socket.getsockname()[1]
        config = uvicorn.Config(create_app(world), log_level="warning", lifespan="off", access_log=False,
                                server_header=False)
        self._server = uvicorn.Server(config)
        self._task: asyncio.Task[None] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def token(self) -> str:
        """The application REST token (``ApplicationRestTokens`` in TShock's config): superadmin."""
        return self.world.application_token

    async def start(self) -> None:
        self._task = asyncio.create_task(self._server.serve(sockets=[self._socket]))
        while not self._server.started:
            if self._task.done():
                self._task.result()
            await asyncio.sleep(0.005)

    async def stop(self) -> None:
        if self._task is None:
            return
        self._server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None

    async def serve_forever(self) -> None:
        await self.start()
        assert self._task is not None
        await self._task

    async def __aenter__(self) -> SimulatorServer:
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.stop()
