"""Every call ends: a per-server timeout (progress restarts it, max_timeout caps it), the upstream told to stop
(``notifications/cancelled``) when the call times out, its client hangs up or its pane is removed, and streams
that drop resumed (``Last-Event-ID``) or, where the upstream lost the answer, ended by the timeout.

The upstreams are real: the stdio features server, and over streamable HTTP an SDK server whose streams drop
(``support/streams_server.py``), once stopped with SIGSTOP so that not even the cancellation can be written."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest_asyncio
from support.gateway import Harness, features_server, start_gateway
from support.loopback import ServerProcess
from support.privates import requests_awaiting_answer
from support.waiting import wait_until

from polter.gateway.audit import read_rows
from polter.servers import HttpServer

STREAMS_SERVER = Path(__file__).parents[1] / "support" / "streams_server.py"


class StreamsServer(ServerProcess):
    def __init__(self, tmp_path: Path) -> None:
        super().__init__()
        self.log = (tmp_path / "streams-server.log").open("w")
        self.process = subprocess.Popen(
            [sys.executable, str(STREAMS_SERVER), str(self.port)], stdout=self.log, stderr=subprocess.STDOUT
        )

    def stop(self) -> None:
        super().stop()
        self.log.close()


@pytest_asyncio.fixture
async def streams(tmp_path: Path) -> AsyncIterator[StreamsServer]:
    server = StreamsServer(tmp_path)
    try:
        await wait_until(server.listening, timeout=30, message="the streams server listens")
        yield server
    finally:
        server.stop()


def _sent(harness: Harness, server: str) -> bool:
    """Whether the gateway has a request out at the upstream (not only a call on its way there)."""
    session = harness.gateway.pool.get(server)._session  # type: ignore[union-attr]
    return session is not None and requests_awaiting_answer(session) > 0


async def _running(harness: Harness, token: str) -> dict[str, object]:
    async with harness.client("features", token) as client:
        return json.loads((await client.call_tool("running", {})).content[0].text)


async def _until_running(harness: Harness, token: str, condition: Callable[[dict[str, Any]], bool], what: str) -> None:
    deadline = time.monotonic() + 15
    while not condition(await _running(harness, token)):
        assert time.monotonic() < deadline, f"the features server never reported {what}"


def _sleeping(state: dict[str, Any]) -> bool:
    return bool(state["sleeping"])  # (a cancel that comes before the call starts cancels nothing to see)


def _cancelled(state: dict[str, Any]) -> bool:
    return "slow 60" in state["cancelled"]


async def test_a_call_the_upstream_does_not_answer_ends_at_its_timeout_and_is_cancelled_there(tmp_path: Path) -> None:
    async with start_gateway(tmp_path, servers={"features": features_server(timeout=1)}) as harness:
        pane = await harness.pane("open")
        async with harness.client("features", pane.token) as client:
            started = time.monotonic()
            result = await client.call_tool("slow", {"seconds": 60})
            took = time.monotonic() - started
        assert result.is_error and "broken, not forbidden" in result.content[0].text
        assert "did not answer within 1 s (its timeout in the servers file)" in result.content[0].text
        assert took < 30, f"the call took {took:.1f} s: the upstream's own 60 s, not the timeout"
        await _until_running(harness, pane.token, _cancelled, "the cancellation")
        [row] = [row for row in read_rows(harness.gateway.audit.path, pane=pane.pane.id) if row.name == "slow"]
        assert row.decision == "error" and "did not answer within 1 s" in row.reason


async def test_progress_restarts_the_timeout_and_max_timeout_caps_it(tmp_path: Path) -> None:
    servers = {"features": features_server(timeout=1), "capped": features_server(timeout=1, max_timeout=2)}
    async with start_gateway(tmp_path, servers=servers) as harness:
        pane = await harness.pane("open")
        async with harness.client("features", pane.token) as client, harness.client("capped", pane.token) as short:
            # 3 s in all, progress every 0.25 s: never a second without news, so it runs to the end.
            result = await client.call_tool("tick", {"seconds": 3, "every": 0.25})
            assert not result.is_error and result.content[0].text == "ticked 12 times"
            # Whether or not the client asked for progress; and the client that asked still hears it.
            heard: list[float] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                heard.append(progress)

            result = await client.call_tool("tick", {"seconds": 3, "every": 0.25}, progress_callback=on_progress)
            assert not result.is_error
            await wait_until(lambda: len(heard) == 12, message="the caller heard every tick")
            capped_result = await short.call_tool("tick", {"seconds": 3, "every": 0.25})
        assert capped_result.is_error and "did not answer within 2 s (its max_timeout)" in capped_result.content[0].text


async def test_removing_a_pane_cancels_its_calls_upstream(tmp_path: Path) -> None:
    async with start_gateway(tmp_path, servers={"features": features_server()}) as harness:
        pane, other = await harness.pane("open"), await harness.pane("open")
        async with harness.client("features", pane.token) as client:
            call = asyncio.create_task(client.call_tool("slow", {"seconds": 60}))
            await _until_running(harness, other.token, _sleeping, "the call running")
            await harness.admin.remove(pane.pane.id)
            result = await call
        assert result.is_error and "the pane was removed" in result.content[0].text
        await _until_running(harness, other.token, _cancelled, "the cancellation")


async def test_a_client_that_hangs_up_has_its_call_cancelled_upstream(tmp_path: Path) -> None:
    """A 2025-era client is answered in plain JSON: only its HTTP connection closing says it left."""
    async with start_gateway(tmp_path, servers={"features": features_server()}) as harness:
        pane = await harness.pane("open")
        async with harness.raw(pane.token) as http:
            opened = await http.post(
                "/mcp/features",
                headers={"Accept": "application/json, text/event-stream"},
                json={
                    "jsonrpc": "2.0",
                    "id": 0,
                    "method": "initialize",
                    "params": {
                        "protocolVersion": "2025-11-25",
                        "capabilities": {},
                        "clientInfo": {"name": "t", "version": "1"},
                    },
                },
            )
            session = opened.headers["mcp-session-id"]
        body = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "tools/call",
                "params": {"name": "slow", "arguments": {"seconds": 60}},
            }
        ).encode()
        host, port = harness.url.removeprefix("http://").split(":")
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write(
            b"POST /mcp/features HTTP/1.1\r\n"
            + "".join(
                f"{key}: {value}\r\n"
                for key, value in {
                    "Host": f"{host}:{port}",
                    "Authorization": f"Bearer {pane.token}",
                    "Content-Type": "application/json",
                    "Accept": "application/json, text/event-stream",
                    "Mcp-Session-Id": session,
                    "Mcp-Protocol-Version": "2025-11-25",
                    "Content-Length": str(len(body)),
                }.items()
            ).encode()
            + b"\r\n"
            + body
        )
        await writer.drain()
        await _until_running(harness, pane.token, _sleeping, "the call running")
        writer.close()  # the client hangs up
        await _until_running(harness, pane.token, _cancelled, "the cancellation")
        await wait_until(
            lambda: any(row.name == "slow" for row in read_rows(harness.gateway.audit.path)),
            message="the abandoned call's audit row",
        )
        [row] = [row for row in read_rows(harness.gateway.audit.path, pane=pane.pane.id) if row.name == "slow"]
        assert "abandoned: the client hung up" in row.reason


async def _calls(client) -> dict[str, dict[str, int]]:  # type: ignore[no-untyped-def]
    return json.loads((await client.call_tool("calls", {})).content[0].text)


async def test_an_http_upstream_stream_that_drops_is_resumed(tmp_path: Path, streams: StreamsServer) -> None:
    upstream = HttpServer(url=streams.url, timeout=20)
    async with start_gateway(tmp_path, servers={"streams": upstream}) as harness:
        pane = await harness.pane("open")
        async with harness.client("streams", pane.token) as client:
            result = await client.call_tool("resume", {"seconds": 0.5})
            assert not result.is_error and result.content[0].text == "resumed after 0.5"


async def test_an_http_upstream_that_lost_the_answer_or_stopped_still_ends_the_call(
    tmp_path: Path, streams: StreamsServer
) -> None:
    upstream = HttpServer(url=streams.url, timeout=1)
    async with start_gateway(tmp_path, servers={"streams": upstream}) as harness:
        pane = await harness.pane("open")
        async with harness.client("streams", pane.token) as client:
            lost = await client.call_tool("lose", {})
            assert lost.is_error and "did not answer within 1 s" in lost.content[0].text
            deadline = time.monotonic() + 15
            while (await _calls(client))["cancelled"].get("lose") != 1:
                assert time.monotonic() < deadline, "the upstream never heard of the cancellation"

            # Stopped (SIGSTOP): the request, then its cancellation, go unanswered; the call ends regardless.
            hang = asyncio.create_task(client.call_tool("hang", {}))
            await wait_until(lambda: _sent(harness, "streams"), message="the call is in flight upstream")
            os.kill(streams.process.pid, signal.SIGSTOP)
            try:
                started = time.monotonic()
                result = await hang
                took = time.monotonic() - started
            finally:
                os.kill(streams.process.pid, signal.SIGCONT)
            assert result.is_error and "did not answer within 1 s" in result.content[0].text
            # Waiting for the cancellation to be written would take the SDK's own bound for it (5 s).
            assert took < 4, f"{took:.1f} s for a 1 s timeout with a stopped upstream"
            deadline = time.monotonic() + 15
            while (await _calls(client))["cancelled"].get("hang") != 1:
                assert time.monotonic() < deadline, "the upstream never heard of the cancellation once it ran again"
