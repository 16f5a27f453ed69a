"""How fast Polter's gateway forwards MCP calls, against references measured in the same run.

One upstream (``mcp-server-time``, ``get_current_time``), one client (the official MCP SDK, the
2025-era handshake that every target speaks), four ways to reach the upstream:

- ``direct_stdio``: the client spawns the server and talks stdio (the floor);
- ``direct_http``: the same server served directly over streamable HTTP (no proxy hop);
- ``polter``: through ``polter gateway`` (a real process: token check, role decision, audit commit);
- ``mcp_proxy``: through ``mcp-proxy`` 0.13 (PyPI, the peer baseline; it needs ``mcp<2``, so it runs
  from its own virtualenv in the user's cache of test tools, ``support.tools.TOOLS``).

For each: p50/p99 latency and calls/s with 1 client and with 4 concurrent clients (each its own
session), and the CPU time the serving process spent per call (``/proc/PID/stat``). Then ``tools/list``
through the gateway with 1,000 upstream tools, timed on the wire (request sent to last byte read), next to
the same listing straight from the upstream over stdio; the SDK client's own view is printed too, but it
spends most of its time parsing 1,000 tools (it is as slow against the upstream directly).

Targets (issue 7): Polter's p50 below mcp-proxy's, its 4-client calls/s above mcp-proxy's, and the
1,000-tool listing under 20 ms. Machines are noisy: compare figures of the same run only.

Run: ``.venv/bin/python benchmarks/gateway.py [--quick]``. The last line is JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import httpx2  # noqa: E402
from mcp import Client, StdioServerParameters  # noqa: E402
from mcp.client.streamable_http import streamable_http_client  # noqa: E402
from support.tools import pip_venv_bin  # noqa: E402

from polter.gateway.client import GatewayClient  # noqa: E402
from polter.gateway.state import read_state  # noqa: E402

MCP_PROXY = "mcp-proxy==0.13.0"
TIME_SERVER = [sys.executable, "-m", "mcp_server_time", "--local-timezone", "UTC"]
FIXTURE_SERVER = ROOT / "tests" / "support" / "fixture_server.py"
ARGUMENTS = {"timezone": "Europe/Berlin"}
TICK = os.sysconf("SC_CLK_TCK")
STALL_SECONDS = 10.0
"""A call unanswered this long is given up and counted as stalled (seen with the SDK's own MCPServer over
streamable HTTP under 4 concurrent sessions: now and then a call is never answered)."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime + stime


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


async def wait_for_port(port: int, process: subprocess.Popen[Any], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        with contextlib.suppress(OSError):
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        await asyncio.sleep(0.05)
    raise TimeoutError(f"nothing listens on port {port}")


ClientFactory = Callable[[], contextlib.AbstractAsyncContextManager[Client]]


def http_client(url: str, token: str | None = None, mode: str = "legacy") -> ClientFactory:
    @contextlib.asynccontextmanager
    async def make() -> AsyncIterator[Client]:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=None)) as http, \
                Client(streamable_http_client(url, http_client=http), mode=mode) as client:  # type: ignore[arg-type]
            yield client

    return make


def stdio_client(command: list[str], env: dict[str, str] | None = None) -> ClientFactory:
    return lambda: Client(StdioServerParameters(command=command[0], args=command[1:], env=env), mode="legacy")


async def run_calls(factory: ClientFactory, *, clients: int, calls: int, warmup: int,
                    tool: str = "get_current_time", arguments: dict[str, Any] = ARGUMENTS) -> dict[str, float]:
    """``clients`` concurrent sessions, each making ``calls`` sequential calls after a warm-up."""
    async with contextlib.AsyncExitStack() as stack:
        sessions = [await stack.enter_async_context(factory()) for _ in range(clients)]
        for session in sessions:
            for _ in range(warmup):
                await session.call_tool(tool, arguments)
        latencies: list[float] = []
        stalled = 0

        async def worker(session: Client) -> None:
            nonlocal stalled
            for _ in range(calls):
                started = time.perf_counter()
                try:
                    result = await asyncio.wait_for(session.call_tool(tool, arguments), STALL_SECONDS)
                except TimeoutError:
                    stalled += 1  # counted, and its time stays in the wall clock (calls/s) but not in latencies
                    continue
                latencies.append(time.perf_counter() - started)
                if result.is_error:
                    raise RuntimeError(f"the call failed: {result.content}")

        started = time.perf_counter()
        await asyncio.gather(*(worker(session) for session in sessions))
        wall = time.perf_counter() - started
    return {"p50_ms": round(percentile(latencies, 0.5) * 1000, 2), "p99_ms": round(percentile(latencies, 0.99) * 1000, 2),
            "calls_per_s": round(len(latencies) / wall, 1), "stalled": stalled}


Target = Callable[[], contextlib.AbstractAsyncContextManager[tuple[ClientFactory, int | None]]]
"""Starts what is measured, fresh for each phase; yields the client factory and the serving pid (None: none)."""


async def measure(name: str, target: Target, args: argparse.Namespace) -> dict[str, Any]:
    """1 client, then 4 concurrent clients, each phase against a freshly started target: the SDK's own
    MCPServer over HTTP stops accepting new sessions after some hundreds of calls, so no target keeps
    the sessions of an earlier phase."""
    result: dict[str, Any] = {}
    cpu = 0.0
    for phase, clients, calls, warmup in (("1_client", 1, args.calls, args.warmup),
                                          ("4_clients", 4, args.calls // 2, args.warmup // 2)):
        async with target() as (factory, pid):
            before = cpu_seconds(pid) if pid else 0.0
            result[phase] = await run_calls(factory, clients=clients, calls=calls, warmup=warmup)
            cpu += cpu_seconds(pid) - before if pid else 0.0
    one, four = result["1_client"], result["4_clients"]
    if cpu:
        total_calls = args.calls + args.warmup + 4 * (args.calls // 2 + args.warmup // 2)
        result["server_cpu_ms_per_call"] = round(cpu * 1000 / total_calls, 3)
    stalls = one["stalled"] + four["stalled"]
    print(f"{name:13} 1 client: p50 {one['p50_ms']:6.2f} ms  p99 {one['p99_ms']:6.2f} ms  {one['calls_per_s']:6.1f}/s"
          f" | 4 clients: p50 {four['p50_ms']:6.2f} ms  p99 {four['p99_ms']:6.2f} ms  {four['calls_per_s']:6.1f}/s"
          + (f" | server CPU {result['server_cpu_ms_per_call']:.2f} ms/call" if "server_cpu_ms_per_call" in result else "")
          + (f" | {stalls} call(s) STALLED > {STALL_SECONDS:g} s" if stalls else ""), flush=True)
    return result


@contextlib.asynccontextmanager
async def process(command: list[str], port: int | None = None, **kwargs: Any) -> AsyncIterator[subprocess.Popen[str]]:
    child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, **kwargs)
    try:
        if port is not None:
            await wait_for_port(port, child)
        yield child
    finally:
        child.terminate()
        try:
            child.wait(timeout=10)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()


@contextlib.asynccontextmanager
async def polter_gateway(workdir: Path, servers_toml: str) -> AsyncIterator[tuple[subprocess.Popen[str], str, str]]:
    """A real ``polter gateway`` process with one pane registered; yields (process, url, token)."""
    workdir.mkdir(parents=True, exist_ok=True)
    (workdir / "servers.toml").write_text(servers_toml, encoding="utf-8")
    state = workdir / "state"
    command = [sys.executable, "-m", "polter", "gateway", "--servers", str(workdir / "servers.toml"),
               "--state-dir", str(state)]
    env = {**os.environ, "POLTER_CONFIG_DIR": str(workdir / "config")}
    async with process(command, env=env, cwd=workdir) as child:
        assert child.stdout is not None
        line = await asyncio.to_thread(child.stdout.readline)
        if not line.startswith("polter gateway listening on "):
            raise RuntimeError(f"polter gateway did not start: {line!r}")
        url = line.rsplit(" ", 1)[1].strip()
        async with GatewayClient(url, read_state(state).admin_token) as admin:
            pane = await admin.register("coder", title="bench")
        yield child, url, pane.token


def toml_server(name: str, command: list[str], env: dict[str, str] | None = None) -> str:
    text = f"[servers.{name}]\ncommand = {json.dumps(command[0])}\nargs = {json.dumps(command[1:])}\n"
    if env:
        text += "env = { " + ", ".join(f"{key} = {json.dumps(value)}" for key, value in env.items()) + " }\n"
    return text


async def listing(factory: ClientFactory, rounds: int) -> dict[str, float]:
    """``tools/list`` as the SDK client sees it (its own parsing of 1,000 tools included)."""
    async with factory() as client:
        for _ in range(3):
            count = len((await client.list_tools()).tools)
        times = []
        for _ in range(rounds):
            started = time.perf_counter()
            await client.list_tools()
            times.append(time.perf_counter() - started)
    return {"tools": count, "p50_ms": round(percentile(times, 0.5) * 1000, 2), "min_ms": round(min(times) * 1000, 2)}


INIT = {"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}
LIST = {"jsonrpc": "2.0", "id": 1, "method": "tools/list"}


def _timed(times: list[float], tools: int) -> dict[str, float]:
    return {"tools": tools, "p50_ms": round(percentile(times, 0.5) * 1000, 2), "min_ms": round(min(times) * 1000, 2)}


async def raw_listing_http(url: str, token: str, rounds: int) -> dict[str, float]:
    """``tools/list`` on the wire (a 2025-era session, request to last byte), without client-side parsing."""
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    async with httpx2.AsyncClient(headers=headers, timeout=60) as http:
        opened = await http.post(url, json=INIT)
        http.headers.update({"Mcp-Session-Id": opened.headers["mcp-session-id"], "Mcp-Protocol-Version": "2025-11-25"})
        await http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"})
        times = []
        for index in range(rounds + 3):
            started = time.perf_counter()
            response = await http.post(url, json=LIST)
            if index >= 3:
                times.append(time.perf_counter() - started)
    return _timed(times, len(response.json()["result"]["tools"]))


async def raw_listing_stdio(command: list[str], env: dict[str, str], rounds: int) -> dict[str, float]:
    """The same listing straight from the upstream over stdio: a line written, a line read."""
    child = await asyncio.create_subprocess_exec(*command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
                                                 env=env, limit=1 << 24)
    assert child.stdin is not None and child.stdout is not None

    async def ask(message: dict[str, Any]) -> bytes:
        child.stdin.write(json.dumps(message).encode() + b"\n")  # type: ignore[union-attr]
        await child.stdin.drain()  # type: ignore[union-attr]
        return await child.stdout.readline() if "id" in message else b""  # type: ignore[union-attr]

    try:
        await ask(INIT)
        await ask({"jsonrpc": "2.0", "method": "notifications/initialized"})
        times = []
        for index in range(rounds + 3):
            started = time.perf_counter()
            line = await ask(LIST)
            if index >= 3:
                times.append(time.perf_counter() - started)
    finally:
        child.kill()
        await child.wait()
    return _timed(times, len(json.loads(line)["result"]["tools"]))


async def main(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {"benchmark": "gateway", "calls_per_client": args.calls, "cpus": os.cpu_count()}
    proxy_bin = pip_venv_bin("mcp-proxy-0.13.0", [MCP_PROXY], "mcp-proxy")
    with tempfile.TemporaryDirectory(prefix="polter-bench-") as scratch:
        workdir = Path(scratch)

        @contextlib.asynccontextmanager
        async def direct_stdio() -> AsyncIterator[tuple[ClientFactory, int | None]]:
            yield stdio_client(TIME_SERVER), None

        @contextlib.asynccontextmanager
        async def direct_http() -> AsyncIterator[tuple[ClientFactory, int | None]]:
            port = free_port()
            serve = [sys.executable, "-c", "from mcp_server_time.server import create_server; "
                     f"create_server('UTC').run('streamable-http', host='127.0.0.1', port={port})"]
            async with process(serve, port) as child:
                yield http_client(f"http://127.0.0.1:{port}/mcp"), child.pid

        def polter(mode: str) -> Target:
            @contextlib.asynccontextmanager
            async def start() -> AsyncIterator[tuple[ClientFactory, int | None]]:
                async with polter_gateway(workdir / f"polter-{time.monotonic_ns()}",
                                          toml_server("time", TIME_SERVER)) as (child, url, token):
                    yield http_client(f"{url}/mcp/time", token, mode), child.pid

            return start

        @contextlib.asynccontextmanager
        async def mcp_proxy() -> AsyncIterator[tuple[ClientFactory, int | None]]:
            port = free_port()
            proxy = [str(proxy_bin), "--host", "127.0.0.1", "--port", str(port), "--", *TIME_SERVER]
            async with process(proxy, port) as child:
                yield http_client(f"http://127.0.0.1:{port}/mcp"), child.pid

        results["direct_stdio"] = await measure("direct stdio", direct_stdio, args)
        results["direct_http"] = await measure("direct HTTP", direct_http, args)
        results["polter"] = await measure("polter", polter("legacy"), args)
        results["polter_2026"] = await measure("polter 2026", polter("2026-07-28"), args)
        results["mcp_proxy"] = await measure("mcp-proxy", mcp_proxy, args)

        many = {"FIXTURE_TOOLS": "1000"}
        fixture = [sys.executable, str(FIXTURE_SERVER)]
        environment = {**os.environ, **many}
        upstream_raw = await raw_listing_stdio(fixture, environment, args.list_rounds)
        upstream_sdk = await listing(stdio_client(fixture, environment), args.list_rounds)
        async with polter_gateway(workdir / "listing", toml_server("many", fixture, many)) as (child, url, token):
            through_raw = await raw_listing_http(f"{url}/mcp/many", token, args.list_rounds)
            through_sdk = await listing(http_client(f"{url}/mcp/many", token), args.list_rounds)
        results["tools_list_1000"] = {"polter_wire": through_raw, "upstream_stdio_wire": upstream_raw,
                                      "polter_sdk_client": through_sdk, "upstream_stdio_sdk_client": upstream_sdk}
        print(f"tools/list x{through_raw['tools']}: through polter p50 {through_raw['p50_ms']} ms on the wire "
              f"(upstream over stdio: {upstream_raw['p50_ms']} ms); as the SDK client sees it: polter "
              f"{through_sdk['p50_ms']} ms, upstream direct {upstream_sdk['p50_ms']} ms", flush=True)

    polter, proxy = results["polter"], results["mcp_proxy"]
    results["ratios"] = {
        "p50_polter_over_mcp_proxy": round(polter["1_client"]["p50_ms"] / proxy["1_client"]["p50_ms"], 3),
        "calls4_polter_over_mcp_proxy": round(polter["4_clients"]["calls_per_s"] / proxy["4_clients"]["calls_per_s"], 3),
        "p50_polter_over_direct_http": round(polter["1_client"]["p50_ms"] / results["direct_http"]["1_client"]["p50_ms"], 3),
    }
    results["targets"] = {
        "p50_below_mcp_proxy": polter["1_client"]["p50_ms"] < proxy["1_client"]["p50_ms"],
        "calls4_above_mcp_proxy": polter["4_clients"]["calls_per_s"] > proxy["4_clients"]["calls_per_s"],
        "tools_list_1000_under_20ms": results["tools_list_1000"]["polter_wire"]["p50_ms"] < 20,
    }
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=400, help="calls per client with 1 client (4 clients: half each)")
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--list-rounds", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="fewer calls, for a smoke run")
    options = parser.parse_args()
    if options.quick:
        options.calls, options.warmup, options.list_rounds = 60, 5, 8
    print(json.dumps(asyncio.run(main(options))))
