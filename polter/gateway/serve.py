"""Running the gateway: bind loopback, serve with uvicorn, publish ``gateway.json`` once ready.

The socket is bound before the app starts, so the URL (with the port the OS picked for port 0) is
known up front; ``gateway.json`` (url, pid, admin token; mode 0600) is written only when the app's
lifespan has started everything, and removed again on a clean exit.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import uvicorn
from starlette.applications import Starlette

from polter import __version__
from polter.embedded_server import EmbeddedServer
from polter.errors import ConfigError
from polter.gateway.app import create_gateway
from polter.gateway.config import GatewayConfig
from polter.gateway.hook_payloads import FindTranslator
from polter.gateway.models import GatewayState
from polter.gateway.state import write_state
from polter.paths import make_private_dirs

__all__ = ["Served", "bind_loopback", "bind_pane_socket", "running", "serve_forever"]

KEEP_ALIVE_SECONDS = 30


@dataclass(frozen=True)
class Served:
    url: str
    server: uvicorn.Server
    task: asyncio.Task[None]


def bind_loopback(host: str, port: int) -> socket.socket:
    if host not in ("127.0.0.1", "localhost", "::1"):
        raise ConfigError(f"the gateway binds loopback only, not {host!r}", field="host")
    family = socket.AF_INET6 if host == "::1" else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY on accepted sockets only when the listening
    # socket's proto says TCP; with proto 0 every response waits ~40 ms for a delayed ACK.
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1" if host == "localhost" else host, port))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on {host}:{port}: {exc.strerror}", field="port") from exc
    sock.listen(512)
    sock.setblocking(False)
    return sock


def bind_pane_socket(path: Path) -> socket.socket:
    """The panes' Unix socket (mode 0600, in a 0700 folder of its own that sandboxes mount): a stale socket of
    an earlier run is replaced."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        make_private_dirs(path.parent)
        with contextlib.suppress(FileNotFoundError):
            path.unlink()
        sock.bind(str(path))
    except OSError as exc:
        sock.close()
        raise ConfigError(f"cannot listen on the panes' socket: {exc.strerror or exc}", path=path) from exc
    os.chmod(path, 0o600)
    sock.listen(512)
    sock.setblocking(False)
    return sock


def _url(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    return f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"


@contextlib.asynccontextmanager
async def running(
    app: Starlette, *, host: str = "127.0.0.1", port: int = 0, pane_socket: Path | None = None
) -> AsyncIterator[Served]:
    """Serve ``app`` in this event loop until the block exits; yields its URL once the app is ready. With
    ``pane_socket``, also on that Unix socket (the panes' way in from their sandboxes)."""
    sock = bind_loopback(host, port)
    sockets = [sock]
    if pane_socket is not None:
        try:
            sockets.append(bind_pane_socket(pane_socket))
        except ConfigError:
            sock.close()
            raise
    url = _url(sock)
    app.state.gateway.url = url
    ready = app.state.gateway.ready
    # An idle keep-alive connection is kept well past the clients' own expiry (httpx: 5 s, the same as
    # uvicorn's default): with equal timeouts a request sent on a connection the server is closing fails.
    config = uvicorn.Config(
        app,
        log_level="warning",
        lifespan="on",
        access_log=False,
        timeout_graceful_shutdown=3,
        timeout_keep_alive=KEEP_ALIVE_SECONDS,
        ws="none",
    )
    server = EmbeddedServer(config)
    task = asyncio.create_task(server.serve(sockets=sockets), name="polter-gateway")
    waiter = asyncio.create_task(ready.wait())
    await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    if not ready.is_set():
        waiter.cancel()
        sock.close()
        await task  # re-raises the startup failure
        raise RuntimeError("the gateway stopped during startup")
    try:
        yield Served(url, server, task)
    finally:
        server.should_exit = True
        with contextlib.suppress(asyncio.CancelledError):
            await task
        _close(sockets, pane_socket)


def _close(sockets: list[socket.socket], pane_socket: Path | None) -> None:
    for each in sockets:
        each.close()
    if pane_socket is not None:
        with contextlib.suppress(OSError):
            pane_socket.unlink()


async def serve_forever(
    config: GatewayConfig,
    *,
    announce: bool = True,
    stop_with_stdin: bool = False,
    adapters: FindTranslator | None = None,
) -> None:
    """``polter gateway``: serve until SIGINT/SIGTERM, with ``gateway.json`` written while up; ``adapters``
    finds the CLIs' hook translators (see :func:`~polter.gateway.app.create_gateway`).

    ``stop_with_stdin``: also stop when standard input reaches its end. The app starts its gateway
    with a pipe it never writes to; the pipe closes when the app ends, however it ends (even killed),
    so its gateway never outlives it.
    """
    app = create_gateway(config, adapters=adapters)
    async with running(app, host=config.host, port=config.port, pane_socket=config.pane_socket) as served:
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGINT, signal.SIGTERM):
            loop.add_signal_handler(signum, lambda: setattr(served.server, "should_exit", True))
        watcher = asyncio.create_task(_stdin_closed()) if stop_with_stdin else None
        if watcher is not None:
            watcher.add_done_callback(lambda _task: setattr(served.server, "should_exit", True))
        state = GatewayState(
            url=served.url,
            pid=os.getpid(),
            admin_token=app.state.admin_token,
            started_at=datetime.now(UTC),
            version=__version__,
        )
        path = write_state(config.state_dir, state)
        if announce:
            print(f"polter gateway listening on {served.url}", flush=True)
        try:
            await asyncio.shield(served.task)
        finally:
            if watcher is not None:
                watcher.cancel()
            with contextlib.suppress(OSError, ValueError):
                if GatewayState.model_validate_json(path.read_text()).pid == os.getpid():
                    path.unlink()


async def _stdin_closed() -> None:
    """Return once standard input reaches its end (its writer closed it, or died)."""
    reader = asyncio.StreamReader()
    await asyncio.get_running_loop().connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    while await reader.read(4096):
        pass
