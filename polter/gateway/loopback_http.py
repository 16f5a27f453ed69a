"""HTTP/1.1 to the gateway's control API on loopback, over asyncio's streams: a JSON request and its answer on a
connection of their own, and one long answer read line by line as it comes (``/control/events``).

Why not httpx2, the MCP SDK's HTTP client (the pane client uses it): it and what it brings (httpcore2, h11,
anyio, idna) are 5 MB of every session host's memory, for a handful of local requests a second. The control
API is plain HTTP on 127.0.0.1, answered by uvicorn; this client speaks only that (no TLS, proxies, redirects or
cookies) and says so of anything else. A connection per request costs a tenth of a millisecond on loopback and
never meets a connection the server closed while it was idle.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Final
from urllib.parse import urlencode, urlsplit

__all__ = ["HttpFailure", "LoopbackHttp", "Response"]

LINE_LIMIT: Final = 1 << 20
"""The longest status line, header or streamed line read (an event's JSON is one line)."""


class HttpFailure(OSError):
    """No answer: the connection failed or broke, it timed out, or what came back was not HTTP/1.1."""


@dataclass(frozen=True)
class Response:
    status: int
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return self.body.decode("utf-8", "replace")

    def json(self) -> Any:
        return json.loads(self.body)


class LoopbackHttp:
    """Requests to ``url`` (``http://HOST:PORT``) with ``headers`` on each; ``timeout`` seconds for each request
    whole, and for a stream until its answer's headers."""

    def __init__(self, url: str, headers: Mapping[str, str], timeout: float = 30.0) -> None:
        parts = urlsplit(url)
        if parts.scheme != "http" or not parts.hostname:
            raise ValueError(f"the gateway's control API is plain HTTP on loopback (http://HOST:PORT), not {url!r}")
        self.host, self.port = parts.hostname, parts.port or 80
        self.headers = dict(headers)
        self.timeout = timeout

    async def request(
        self, method: str, path: str, *, json_body: Any = None, params: Mapping[str, Any] | None = None
    ) -> Response:
        """One request and its whole answer."""
        async with _answered(f"{method} {path}", self.timeout):
            reader, writer = await self._send(method, path, json_body, params)
            try:
                status, headers = await _read_head(reader)
                body = b"".join([piece async for piece in _body(reader, headers)])
            finally:
                writer.close()
        return Response(status, body, headers)

    @contextlib.asynccontextmanager
    async def stream(self, path: str) -> AsyncIterator[tuple[Response, AsyncIterator[str]]]:
        """``GET path``: its status and headers, and its body's lines as they come (a failure while reading them
        raises :class:`HttpFailure`)."""
        async with _answered(f"GET {path}", self.timeout):
            reader, writer = await self._send("GET", path, None, None)
            status, headers = await _read_head(reader)
        try:
            yield Response(status, headers=headers), _lines(_body(reader, headers), path)
        finally:
            writer.close()

    async def _send(
        self, method: str, path: str, json_body: Any, params: Mapping[str, Any] | None
    ) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
        reader, writer = await asyncio.open_connection(self.host, self.port, limit=LINE_LIMIT)
        target = f"{path}?{urlencode(params)}" if params else path
        body = b"" if json_body is None else json.dumps(json_body).encode()
        head = [f"{method} {target} HTTP/1.1", f"Host: {self.host}:{self.port}", "Connection: close"]
        head += [f"{name}: {value}" for name, value in self.headers.items()]
        if json_body is not None:
            head += ["Content-Type: application/json", f"Content-Length: {len(body)}"]
        writer.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + body)
        await writer.drain()
        return reader, writer


_BROKEN = (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError)
"""What a connection that failed, broke or did not answer in HTTP raises while it is read."""


@contextlib.asynccontextmanager
async def _answered(what: str, timeout: float) -> AsyncIterator[None]:
    """Within ``timeout`` seconds, or :class:`HttpFailure` saying of ``what`` why not."""
    try:
        async with asyncio.timeout(timeout):
            yield
    except TimeoutError:
        raise HttpFailure(f"{what}: no answer within {timeout:g} s") from None
    except _BROKEN as exc:
        raise HttpFailure(f"{what}: {_said(exc)}") from exc


async def _read_head(reader: asyncio.StreamReader) -> tuple[int, dict[str, str]]:
    """The status and the headers (names in lower case) of an answer."""
    version, _, rest = (await _line(reader)).partition(" ")
    code = rest.partition(" ")[0]
    if not version.startswith("HTTP/1.") or not code.isdigit():
        raise ValueError(f"not an HTTP/1.1 answer: {version} {rest}"[:200])
    headers: dict[str, str] = {}
    while line := await _line(reader):
        name, colon, value = line.partition(":")
        if not colon:
            raise ValueError(f"a header line without a colon: {line[:200]!r}")
        headers[name.strip().lower()] = value.strip()
    return int(code), headers


async def _line(reader: asyncio.StreamReader) -> str:
    line = await reader.readuntil(b"\n")
    return line.decode("latin-1").rstrip("\r\n")


async def _body(reader: asyncio.StreamReader, headers: Mapping[str, str]) -> AsyncIterator[bytes]:
    """The body as it comes: chunked, of a length, or until the connection closes."""
    if "chunked" in headers.get("transfer-encoding", "").lower():
        while size := int((await _line(reader)).partition(";")[0], 16):
            yield await reader.readexactly(size)
            await reader.readexactly(2)  # the chunk's CRLF
        while await _line(reader):  # trailers, up to the blank line
            pass
    elif "content-length" in headers:
        yield await reader.readexactly(int(headers["content-length"]))
    else:
        while piece := await reader.read(65536):
            yield piece


async def _lines(pieces: AsyncIterator[bytes], path: str) -> AsyncIterator[str]:
    """A body's lines, without their line ends (the last one even if unterminated)."""
    pending = b""
    try:
        async for piece in pieces:
            pending += piece
            *lines, pending = pending.split(b"\n")
            for line in lines:
                yield line.rstrip(b"\r").decode("utf-8", "replace")
    except _BROKEN as exc:
        raise HttpFailure(f"GET {path}: {_said(exc)}") from exc
    if pending:
        yield pending.decode("utf-8", "replace")


def _said(exc: BaseException) -> str:
    if isinstance(exc, asyncio.IncompleteReadError):
        return "the connection closed in the middle of the answer"
    return str(exc) or type(exc).__name__
