"""A small uvicorn server on 127.0.0.1 that runs inside the caller's event loop.

Used by the simulator (in tests and by ``polter terraria sim``) and by the event intake. The socket
is bound at construction, so the port (``0`` = any free one) is known before serving starts.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
from types import TracebackType

import uvicorn
from starlette.types import ASGIApp

from polter.embedded_server import EmbeddedServer

__all__ = ["LocalHttpServer"]


class LocalHttpServer:
    """``async with LocalHttpServer(app) as server:`` serves ``app`` on ``server.port`` until the block ends."""

    def __init__(self, app: ASGIApp, *, port: int = 0, handle_signals: bool = False) -> None:
        self._socket = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._socket.bind(("127.0.0.1", port))
        self.port: int = self._socket.getsockname()[1]
        config = uvicorn.Config(app, log_level="warning", lifespan="off", access_log=False, server_header=False)
        self._server = uvicorn.Server(config) if handle_signals else EmbeddedServer(config)
        self._task: asyncio.Task[None] | None = None

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def start(self) -> None:
        self._task = asyncio.create_task(self._server.serve(sockets=[self._socket]))
        while not self._server.started:
            if self._task.done():
                self._task.result()  # raises what stopped it
                raise RuntimeError("the HTTP server stopped before it started")
            await asyncio.sleep(0.005)

    async def wait(self) -> None:
        if self._task is not None:
            await self._task

    async def stop(self) -> None:
        if self._task is None:
            return
        self._server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        self._task = None

    async def __aenter__(self) -> LocalHttpServer:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()
