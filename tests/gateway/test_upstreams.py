"""The upstream pool: shared upstreams, crashes give errors (never a bypass) and come back."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import mcp_types as types
import pytest
from support.gateway import fixture_server, start_gateway, time_server
from support.privates import requests_awaiting_answer
from support.waiting import wait_until

from polter.gateway.audit import read_rows
from polter.servers import StdioServer


async def test_an_upstream_killed_mid_call_gives_an_error_and_comes_back(tmp_path: Path) -> None:
    async with start_gateway(tmp_path, servers={"fixture": fixture_server(), "time": time_server()}) as harness:
        pane = await harness.pane("open")
        async with harness.client("fixture", pane.token) as client, harness.client("time", pane.token) as time_client:
            pid = int((await client.call_tool("pid", {})).content[0].text)
            slow = asyncio.create_task(client.call_tool("slow", {"seconds": 30}))
            await wait_until(lambda: harness.gateway.pool.get("fixture").state == "running", message="running")
            await wait_until(lambda: _has_child_request(harness), message="slow call in flight")
            os.kill(pid, signal.SIGKILL)
            result = await slow
            assert result.is_error and "broken, not forbidden" in result.content[0].text
            # The other upstream is unaffected meanwhile.
            assert not (await time_client.call_tool("get_current_time", {"timezone": "UTC"})).is_error
            await wait_until(lambda: harness.gateway.pool.get("fixture").state == "running", message="restarted")
            new_pid = int((await client.call_tool("pid", {})).content[0].text)
            assert new_pid != pid
            assert harness.gateway.pool.get("fixture").restarts == 1
        status = await harness.admin.status()
        fixture = next(server for server in status.servers if server.name == "fixture")
        assert fixture.state == "running" and fixture.restarts == 1


def _has_child_request(harness) -> bool:  # type: ignore[no-untyped-def]
    upstream = harness.gateway.pool.get("fixture")
    session = upstream._session
    return session is not None and requests_awaiting_answer(session) > 0


async def test_a_call_while_the_upstream_is_down_is_an_error_not_a_bypass(tmp_path: Path) -> None:
    broken = StdioServer(command="/nonexistent/polter-test-server")
    async with start_gateway(tmp_path, servers={"broken": broken}) as harness:
        pane = await harness.pane("open")
        await wait_until(lambda: harness.gateway.pool.get("broken").state == "restarting", message="failed start")
        async with harness.client("broken", pane.token) as client:
            assert (await client.list_tools()).tools == []
            result = await client.call_tool("anything", {})
        assert result.is_error and "broken, not forbidden" in result.content[0].text
        assert "not running" in result.content[0].text
        status = await harness.admin.status()
        assert "command not found" in (status.servers[0].error or "")


async def test_each_upstream_runs_once_for_all_panes(tmp_path: Path) -> None:
    async with start_gateway(tmp_path) as harness:
        first, second = await harness.pane("open"), await harness.pane("open")
        async with harness.client("fixture", first.token) as one, harness.client("fixture", second.token) as two:
            await one.call_tool("write_note", {"text": "shared"})
            assert (await two.call_tool("read_notes", {})).content[0].text == "shared"
            assert (await one.call_tool("pid", {})).content[0].text == (await two.call_tool("pid", {})).content[0].text


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_upstream_progress_reaches_the_calling_pane_only(tmp_path: Path, mode: str) -> None:
    async with start_gateway(tmp_path) as harness:
        caller, bystander = await harness.pane("open"), await harness.pane("open")
        heard: list[tuple[float, float | None, str | None]] = []
        late: list[Any] = []  # a 2025-era client may get a progress note after the result (other stream)
        other: list[Any] = []

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            heard.append((progress, total, message))

        async with harness.client("fixture", caller.token, mode=mode, on_message=late.append) as client, \
                harness.client("fixture", bystander.token, mode=mode, on_message=other.append) as watcher:
            await watcher.list_tools()
            await wait_until(lambda: harness.gateway.channels.count(caller.pane.id) == (mode == "legacy"),
                             message="the caller's session is known")
            result = await client.call_tool("slow", {"seconds": 0, "steps": 3}, progress_callback=on_progress)
            assert result.content[0].text == "slept 0.0"

            def progress_notes() -> list[types.ProgressNotification]:
                return [m for m in late if isinstance(m, types.ProgressNotification)]

            # The client hands each note to the call's callback (or, once the call is over, to the handler).
            await wait_until(lambda: {p for p, _, _ in heard} | {m.params.progress for m in progress_notes()}
                             == {1, 2, 3}, message="three progress steps")
            assert {m.params.message for m in progress_notes()} | {m for _, _, m in heard} == {
                "step 1 of 3", "step 2 of 3", "step 3 of 3"}
            # Without a progress token nothing is sent.
            before = len(progress_notes())
            await client.call_tool("slow", {"seconds": 0, "steps": 2})
            await watcher.call_tool("read_notes", {})
            assert len(progress_notes()) == before
        assert not [m for m in other if isinstance(m, types.ProgressNotification)]


@pytest.mark.parametrize("mode", ["legacy", "2026-07-28"])
async def test_a_call_the_client_cancels_is_cancelled_upstream_and_audited(tmp_path: Path, mode: str) -> None:
    async with start_gateway(tmp_path) as harness:
        pane = await harness.pane("open")
        async with harness.client("fixture", pane.token, mode=mode) as client:
            await wait_until(lambda: harness.gateway.pool.get("fixture").state == "running", message="running")
            call = asyncio.create_task(client.call_tool("slow", {"seconds": 60}))
            await wait_until(lambda: _has_child_request(harness), message="slow call in flight upstream")
            call.cancel()
            with pytest.raises(asyncio.CancelledError):
                await call

            async def notes() -> str:
                return (await client.call_tool("read_notes", {})).content[0].text

            deadline = asyncio.get_running_loop().time() + 15
            while "slow 60.0 cancelled" not in await notes():
                assert asyncio.get_running_loop().time() < deadline, "the upstream never heard of the cancel"
            assert not _has_child_request(harness)
        await wait_until(lambda: any(row.reason == "allowed; the caller cancelled the call" for row in read_rows(
            harness.gateway.audit.path, pane=pane.pane.id)), message="the cancelled call's audit row")


async def test_a_failing_upstream_is_retried_with_exponential_backoff(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    from polter.gateway import upstreams

    waits: list[float] = []
    done = asyncio.Event()

    async def no_wait(seconds: float) -> None:  # the supervisor's only sleep is its backoff
        waits.append(seconds)
        if len(waits) == 10:
            done.set()
        await asyncio.sleep(0)

    # The upstreams module's own view of asyncio, with a sleep that records instead of waiting.
    monkeypatch.setattr(upstreams, "asyncio", SimpleNamespace(**{**vars(asyncio), "sleep": no_wait}))

    async def changed(server: str, kind: str) -> None:
        pass

    upstream = upstreams.Upstream("broken", StdioServer(command="/nonexistent/polter-test-server"),
                                  log_dir=tmp_path, on_change=changed)
    supervisor = asyncio.ensure_future(upstream.supervise())
    try:
        await asyncio.wait_for(done.wait(), 30)
    finally:
        supervisor.cancel()
    assert waits[:10] == [0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0, 30.0]
    assert upstream.state == "restarting" and upstream.restarts >= 10 and "command not found" in upstream.error
