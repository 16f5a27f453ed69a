"""How the gateway reaches an upstream: a stdio process or an HTTP session (the SDK's client transports),
the read stream that notices the connection's end, and what a broken connection looks like.

The SDK's client side loads with the first upstream, and httpx2 with the first HTTP one: a gateway with
no upstream yet, or with stdio upstreams alone, never imports them.
"""

from __future__ import annotations

import contextlib
import os
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, TextIO

import anyio

from polter.paths import ENV_GATEWAY_URL, ENV_TOKEN
from polter.servers import ServerConfig, StdioServer

__all__ = ["EndWatch", "connection_failure", "open_transport"]


def open_transport(
    name: str, config: ServerConfig, stack: AsyncExitStack, log_dir: Path
) -> contextlib.AbstractAsyncContextManager[Any]:
    """The SDK transport of upstream ``name`` (its read and write streams, once entered); what it opens
    besides (a stdio server's log file in ``log_dir``, an HTTP client) is closed with ``stack``. A stdio
    server never inherits a pane's identity (``POLTER_TOKEN``, ``POLTER_GATEWAY_URL``)."""
    if isinstance(config, StdioServer):
        # lazy: with the first stdio upstream (the SDK's client side)
        from mcp.client.stdio import StdioServerParameters, stdio_client

        log_dir.mkdir(parents=True, exist_ok=True)
        errlog: TextIO = stack.enter_context(open(log_dir / f"{name}.log", "a", encoding="utf-8"))
        environment = {k: v for k, v in os.environ.items() if k not in (ENV_TOKEN, ENV_GATEWAY_URL)}
        params = StdioServerParameters(
            command=config.command,
            args=config.args,
            env=environment | config.env,
            cwd=os.path.expanduser(config.cwd) if config.cwd else None,
        )
        return stdio_client(params, errlog=errlog)
    # lazy: only a gateway with an HTTP upstream loads the SDK's HTTP client and httpx2
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    client = httpx2.AsyncClient(headers=config.headers, timeout=httpx2.Timeout(30.0, read=None))
    stack.push_async_callback(client.aclose)
    return streamable_http_client(config.url, http_client=client)


class EndWatch:
    """A read stream that sets ``ended`` when the upstream's output ends (process exit, EOF)."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream
        self.ended = anyio.Event()

    async def receive(self) -> Any:
        try:
            return await self._stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            self.ended.set()
            raise

    async def aclose(self) -> None:
        self.ended.set()
        await self._stream.aclose()

    def __aiter__(self) -> EndWatch:
        return self

    async def __anext__(self) -> Any:
        try:
            return await self.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None

    async def __aenter__(self) -> EndWatch:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()


def connection_failure(exc: Exception) -> bool:
    """Whether ``exc`` says the connection to an upstream broke. httpx2 raises only in an HTTP upstream's
    transport, which imported it: a gateway with stdio upstreams alone never loads it."""
    httpx2 = sys.modules.get("httpx2")
    return isinstance(exc, (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError)) or (
        httpx2 is not None and isinstance(exc, httpx2.HTTPError)
    )
