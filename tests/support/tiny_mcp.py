"""A tiny stand-in for the gateway's MCP side: ``/mcp/<server>`` endpoints on 127.0.0.1 that require one bearer
token and serve an ``echo`` and a ``secret_op`` tool. It checks that a CLI reaches every endpoint with the
pane's token, without the gateway (the gateway's own tests and the adapters' e2e tests use the real one)."""

from __future__ import annotations

import contextlib
import json
import threading
import time
from typing import Any

import uvicorn
from mcp.server import MCPServer
from starlette.types import Message, Receive, Scope, Send

__all__ = ["TinyMcp"]


def _server(name: str) -> MCPServer:
    server = MCPServer(name)

    @server.tool(description=f"Echo back the given text ({name} test tool).")
    def echo(text: str) -> str:
        return f"ECHO:{text}"

    @server.tool(description=f"A tool a role may deny ({name} test tool).")
    def secret_op() -> str:
        return "SECRET DONE"

    return server


class TinyMcp:
    """Run with ``with TinyMcp(token, ["time", "polter"]) as mcp: ... mcp.url ... mcp.seen``."""

    def __init__(self, token: str, servers: list[str]) -> None:
        self.token = token
        self.apps = {
            f"/mcp/{name}": _server(name).streamable_http_app(streamable_http_path=f"/mcp/{name}") for name in servers
        }
        self.seen: list[tuple[str, str, str | None]] = []
        """(method, path, Authorization header) of every request."""
        self.calls: list[tuple[str, str]] = []
        """(endpoint path, tool name) of every tools/call that reached a server."""
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        path = scope.get("path", "").rstrip("/")
        headers = {key.decode().lower(): value.decode() for key, value in scope.get("headers", [])}
        self.seen.append((scope.get("method", ""), path, headers.get("authorization")))
        if scope.get("method") == "POST":
            receive = await self._record_call(path, receive)
        app = self.apps.get(path)
        status = 404 if app is None else 401 if headers.get("authorization") != f"Bearer {self.token}" else 0
        if status:
            await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"text/plain")]})
            await send({"type": "http.response.body", "body": b"no"})
            return
        await app(scope, receive, send)

    async def _record_call(self, path: str, receive: Receive) -> Receive:
        """Read the body to note JSON-RPC ``tools/call`` requests, then hand the same body on."""
        messages = []
        while True:
            message = await receive()
            messages.append(message)
            if message["type"] != "http.request" or not message.get("more_body"):
                break
        try:
            body = json.loads(b"".join(m.get("body", b"") for m in messages) or b"{}")
        except ValueError:
            body = {}
        for call in body if isinstance(body, list) else [body]:
            if isinstance(call, dict) and call.get("method") == "tools/call":
                self.calls.append((path, (call.get("params") or {}).get("name", "")))
        replay = iter(messages)

        async def replayed() -> Message:
            return next(replay, None) or await receive()

        return replayed

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        async with contextlib.AsyncExitStack() as stack:
            for app in self.apps.values():
                await stack.enter_async_context(app.router.lifespan_context(app))
            await receive()
            await send({"type": "lifespan.startup.complete"})
            await receive()
        await send({"type": "lifespan.shutdown.complete"})

    @property
    def url(self) -> str:
        assert self._server is not None
        socket = self._server.servers[0].sockets[0]
        host, port = socket.getsockname()[:2]
        return f"http://{host}:{port}"

    def __enter__(self) -> TinyMcp:
        self._server = uvicorn.Server(uvicorn.Config(self, host="127.0.0.1", port=0, log_level="warning", lifespan="on"))
        self._thread = threading.Thread(target=self._server.run, name="tiny-mcp", daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the tiny MCP server did not start")
            time.sleep(0.02)
        return self

    def __exit__(self, *exc_info: Any) -> None:
        assert self._server is not None and self._thread is not None
        self._server.should_exit = True
        self._thread.join(10)

    def authorized_paths(self) -> set[str]:
        return {path for _method, path, auth in self.seen if auth == f"Bearer {self.token}"}
