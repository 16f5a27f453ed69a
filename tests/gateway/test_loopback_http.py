"""The control client's own HTTP/1.1: every way an answer's body may come (a length, chunks, until the end), a
stream read line by line as it comes, and every way it can fail said as one :class:`HttpFailure`. The real
gateway's answers are covered by the control API's tests; here a loopback server answers exactly what each case
needs, bytes as written."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from polter.gateway.loopback_http import HttpFailure, LoopbackHttp

Serve = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


async def serving(answer: Serve) -> tuple[asyncio.Server, str, list[bytes]]:
    """A server on 127.0.0.1 that keeps each request's head and body (``requests``) and runs ``answer``."""
    requests: list[bytes] = []

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n") if line.lower().startswith(
            b"content-length:")), 0)  # fmt: skip
        requests.append(head + await reader.readexactly(length))
        try:
            await answer(reader, writer)
        finally:
            writer.close()

    server = await asyncio.start_server(handle, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    return server, f"http://127.0.0.1:{port}", requests


def answering(raw: bytes) -> Serve:
    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(raw)
        await writer.drain()

    return answer


@pytest.mark.parametrize(
    "raw",
    [
        b'HTTP/1.1 201 Created\r\ncontent-length: 12\r\ncontent-type: application/json\r\n\r\n{"ok": true}',
        b'HTTP/1.1 201 Created\r\nTransfer-Encoding: chunked\r\n\r\n4;ext=1\r\n{"ok\r\n7\r\n": true\r\n1\r\n}\r\n0\r\n'
        b"X-Trailer: 1\r\n\r\n",
        b'HTTP/1.0 201 Created\r\n\r\n{"ok": true}',
    ],
    ids=["length", "chunked", "until-closed"],
)
async def test_an_answer_of_a_length_in_chunks_or_until_the_end(raw: bytes) -> None:
    server, url, requests = await serving(answering(raw))
    async with server:
        http = LoopbackHttp(url, {"Authorization": "Bearer secret"})
        response = await http.request("POST", "/control/panes", json_body={"role": "coder"}, params={"a": "b c"})
    assert (response.status, response.json()) == (201, {"ok": True})
    head, _, body = requests[0].partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "POST /control/panes?a=b+c HTTP/1.1"
    assert {"Authorization: Bearer secret", "Connection: close", "Content-Type: application/json"} <= set(lines)
    assert body == b'{"role": "coder"}'


async def test_a_stream_is_read_line_by_line_as_it_comes() -> None:
    """Each event line reaches the reader while the server still holds the connection open."""
    sent, go_on = asyncio.Event(), asyncio.Event()

    async def events(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n")
        first = b'event: ask\r\ndata: {"a": 1}\n'
        writer.write(b"%x\r\n%s\r\n" % (len(first), first))
        await writer.drain()
        sent.set()
        await go_on.wait()
        writer.write(b"1\r\n\n\r\n0\r\n\r\n")
        await writer.drain()

    server, url, _ = await serving(events)
    async with server:
        seen: list[str] = []
        async with LoopbackHttp(url, {}).stream("/control/events") as (response, lines):
            assert response.status == 200
            iterator: AsyncIterator[str] = aiter(lines)
            seen += [await anext(iterator), await anext(iterator)]
            assert sent.is_set() and not go_on.is_set()  # read before the rest was written
            go_on.set()
            seen += [line async for line in iterator]
    assert seen == ["event: ask", 'data: {"a": 1}', ""]


async def test_a_connection_that_breaks_in_a_stream_is_a_failure_of_the_stream() -> None:
    async def breaks(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nline\n\r\n20\r\npart")
        await writer.drain()

    server, url, _ = await serving(breaks)
    async with server:
        async with LoopbackHttp(url, {}).stream("/control/events") as (_, lines):
            with pytest.raises(HttpFailure, match="closed in the middle"):
                [line async for line in lines]


@pytest.mark.parametrize(
    ("raw", "said"),
    [
        (b"SSH-2.0-OpenSSH_9.2\r\n", "not an HTTP/1.1 answer"),
        (b"HTTP/1.1 200 OK\r\nno colon here\r\n\r\n", "without a colon"),
        (b"HTTP/1.1 200 OK\r\ncontent-length: 50\r\n\r\nshort", "closed in the middle"),
        (b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n", "invalid literal"),
        (b"", "closed in the middle"),
    ],
    ids=["not-http", "bad-header", "short-body", "bad-chunk", "nothing"],
)
async def test_what_is_not_a_whole_http_answer_is_a_failure_that_says_why(raw: bytes, said: str) -> None:
    server, url, _ = await serving(answering(raw))
    async with server:
        with pytest.raises(HttpFailure, match=said):
            await LoopbackHttp(url, {}).request("GET", "/control/status")


async def test_no_server_and_no_answer_in_time_are_failures() -> None:
    server, url, _ = await serving(answering(b""))
    server.close()
    await server.wait_closed()
    with pytest.raises(HttpFailure, match="GET /control/status"):
        await LoopbackHttp(url, {}).request("GET", "/control/status")

    async def silent(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await asyncio.Event().wait()

    server, url, _ = await serving(silent)
    async with server:
        with pytest.raises(HttpFailure, match="no answer within 0.2 s"):
            await LoopbackHttp(url, {}, timeout=0.2).request("GET", "/control/status")


def test_only_plain_http_is_spoken() -> None:
    with pytest.raises(ValueError, match="plain HTTP"):
        LoopbackHttp("https://127.0.0.1:8443", {})
