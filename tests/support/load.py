"""The gateway under load, with its upstream killed in the middle: one scenario for the test that asserts
(``tests/gateway/test_load.py``) and the benchmark that prints figures (``benchmarks/gateway_load.py``).

A real ``polter gateway`` process, a real upstream (``support/load_server.py``, which logs every call it
runs), a controller following the events (so asks wait for a human, who never answers), and four panes,
each sending all its calls at once over plain HTTP (so every status code is seen):

- ``read``: allowed;
- ``write``: denied by the role;
- ``launch``: gated on the word "launch", which the human typed in half of the panes only;
- ``publish``: asked, and left to time out (a deny).

Half of the panes speak the 2025-era protocol (a session), half 2026-07-28 (no session). Once a third
of the calls are answered, the upstream is killed (SIGKILL); the gateway restarts it while the rest of
the calls arrive. A fifth of each pane's calls (issued with the others) go out only once the upstream
is back, so some calls always meet the restarted upstream however long the restart takes. Before the
load, sequential ``read`` calls measure the unloaded latency: the reference the loaded figures are
compared with.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from polter.gateway.audit import read_rows
from polter.gateway.client import GatewayClient
from polter.gateway.models import AuditRow
from polter.gateway.state import read_state

__all__ = ["KINDS", "Call", "LoadResult", "percentile", "run_load"]

LOAD_SERVER = Path(__file__).with_name("load_server.py")
KINDS = {"read": 0.55, "write": 0.20, "launch": 0.15, "publish": 0.10}
"""Each pane's calls by tool, as shares of its calls."""
KEYWORD = "launch"
ROLE = """
    description = "The load test's role: reads allowed, writes denied, launching gated, publishing asked"
    [servers]
    default = "allow"
    [tools]
    default = "allow"
    deny = ["load/write"]
    ask = ["load/publish"]
    [skills]
    default = "allow"
    [gates]
    "load/launch" = ["launch"]
"""
LEGACY, MODERN = "2025-11-25", "2026-07-28"
ACCEPT = "application/json, text/event-stream"


@dataclass
class Pane:
    index: int
    id: str
    token: str
    era: str
    said_keyword: bool
    session: str | None = None

    @property
    def name(self) -> str:
        return f"pane-{self.index}"


@dataclass
class Call:
    pane: int
    tool: str
    status: int
    outcome: str
    """``ok``, ``refused`` (forbidden), ``broken`` (the upstream was down) or ``other`` (anything else)."""
    text: str
    started: float
    """When the request went out (``time.perf_counter``), after waiting for one of the pane's connections."""
    latency: float
    """From the request going out to its answer read."""
    waited: float = 0.0
    """How long the call queued in the client for a free connection (a pane has ``connections``)."""
    load: bool = True
    """False for the calls around the load (the reference, the upstream's pid)."""


@dataclass
class LoadResult:
    panes: list[Pane]
    calls: list[Call]
    reference: list[float]
    """Latencies of sequential calls before the load (the unloaded reference)."""
    upstream_log: list[tuple[str, str, int]]
    """(tool, pane name, upstream pid) for every call the upstream ran."""
    audit: list[AuditRow]
    """The gateway's call-layer audit rows of the panes."""
    pids: tuple[int, int]
    """The upstream's pid before the kill and after the restart."""
    killed_at: float
    restarted_at: float
    restarts: int
    asks_seen: int
    gateway_exit: int | None
    """None while the gateway still runs at the end (it did not crash)."""
    gateway_rss_mb: float
    gateway_cpu_s: float
    client_cpu_s: float
    """CPU time this process (the panes' HTTP clients and the controller) spent during the load."""
    elapsed: float
    load_started: float
    statuses: Counter[int] = field(default_factory=Counter)

    @property
    def load_calls(self) -> list[Call]:
        return [call for call in self.calls if call.load]

    def latencies(self, tool: str | None = None) -> list[float]:
        return [call.latency for call in self.load_calls if tool is None or call.tool == tool]

    def figures(self) -> dict[str, Any]:
        """What the benchmark prints (and the test reports): latencies in ms, rates, counts."""

        def summary(values: list[float]) -> dict[str, float]:
            return {
                "p50_ms": round(percentile(values, 0.5) * 1000, 1),
                "p99_ms": round(percentile(values, 0.99) * 1000, 1),
            }

        load = self.load_calls
        not_asked = [call.latency for call in load if call.tool != "publish"]
        span = max(call.started + call.latency for call in load) - self.load_started
        return {
            "calls": len(load),
            "panes": len(self.panes),
            "seconds": round(span, 2),
            "calls_per_s": round(len(load) / span, 1),
            "reference_unloaded": summary(self.reference),
            "all_but_asks": summary(not_asked),
            "p50_ratio_to_unloaded": round(percentile(not_asked, 0.5) / percentile(self.reference, 0.5), 1),
            "by_tool": {tool: summary(self.latencies(tool)) for tool in KINDS},
            "queued_in_client": summary([call.waited for call in load]),
            "outcomes": {tool: dict(Counter(c.outcome for c in load if c.tool == tool)) for tool in KINDS},
            "statuses": {str(status): count for status, count in sorted(self.statuses.items())},
            "upstream_ran": dict(Counter(tool for tool, _, _ in self.upstream_log)),
            "upstream_down_s": round(self.restarted_at - self.killed_at, 2),
            "restarts": self.restarts,
            "audit_call_rows": len(self.audit),
            "gateway_rss_mb": self.gateway_rss_mb,
            "gateway_cpu_s": self.gateway_cpu_s,
            "gateway_cpu_ms_per_call": round(self.gateway_cpu_s * 1000 / len(self.calls), 2),
            "client_cpu_s": round(self.client_cpu_s, 2),
        }


def percentile(values: list[float], fraction: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(fraction * (len(ordered) - 1)))]


def _process_figures(pid: int) -> tuple[float, float]:
    """(RSS in MB, CPU seconds) of a live process, from /proc."""
    status = Path(f"/proc/{pid}/status").read_text()
    rss_kb = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS:"))
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return round(rss_kb / 1024, 1), round((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), 2)


class _Http:
    """Keep-alive HTTP/1.1 POSTs over asyncio streams, one request per connection at a time.

    httpx spends milliseconds of CPU per request; on a 2-core machine the load's clients then take more CPU
    than the gateway, and the figures measure them. This spends microseconds. It reads what the gateway
    sends: a ``Content-Length`` or chunked body; a kept-alive connection the server closed meanwhile is
    replaced once (the request never reached the server).
    """

    def __init__(self, url: str, headers: dict[str, str]) -> None:
        address = url.removeprefix("http://")
        host, _, port = address.partition(":")
        self.host, self.port = host, int(port)
        self.fixed = "".join(f"{name}: {value}\r\n" for name, value in {"Host": address, **headers}.items())
        self._idle: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []

    async def post(self, path: str, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, str], bytes]:
        extra = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        request = (
            f"POST {path} HTTP/1.1\r\n{self.fixed}{extra}Content-Type: application/json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n"
        ).encode("latin-1") + body
        for attempt in range(2):
            reused = bool(self._idle)
            connection = self._idle.pop() if reused else await asyncio.open_connection(self.host, self.port)
            try:
                connection[1].write(request)
                status_line = await connection[0].readline()
                if not status_line:
                    raise ConnectionResetError("the server closed the connection")
                status, response_headers, content = await self._response(connection[0], status_line)
            except (ConnectionError, asyncio.IncompleteReadError):
                connection[1].close()
                if reused and attempt == 0:
                    continue  # a kept-alive connection the server had closed: the request never arrived
                raise
            if response_headers.get("connection", "").lower() == "close":
                connection[1].close()
            else:
                self._idle.append(connection)
            return status, response_headers, content
        raise AssertionError("unreachable")

    @staticmethod
    async def _response(reader: asyncio.StreamReader, status_line: bytes) -> tuple[int, dict[str, str], bytes]:
        status = int(status_line.split()[1])
        headers: dict[str, str] = {}
        while (line := await reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        if "content-length" in headers:
            return status, headers, await reader.readexactly(int(headers["content-length"]))
        chunks = []
        while size := int((await reader.readline()).split(b";")[0], 16):  # chunked
            chunks.append(await reader.readexactly(size))
            await reader.readexactly(2)
        await reader.readline()
        return status, headers, b"".join(chunks)

    async def aclose(self) -> None:
        for _, writer in self._idle:
            writer.close()
        self._idle.clear()


class _Caller:
    """Sends ``tools/call`` for one pane over plain HTTP, in the pane's protocol era, and records each."""

    def __init__(self, url: str, pane: Pane, connections: int, calls: list[Call], statuses: Counter[int]) -> None:
        self.pane, self.calls, self.statuses = pane, calls, statuses
        self.slots = asyncio.Semaphore(connections)
        self.http = _Http(url, {"Authorization": f"Bearer {pane.token}", "Accept": ACCEPT})
        self._ids = 0

    async def open(self) -> None:
        if self.pane.era != LEGACY:
            return
        opening = {
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": LEGACY, "capabilities": {}, "clientInfo": {"name": "load", "version": "1"}},
        }  # fmt: skip
        status, headers, _ = await self.http.post("/mcp/load", json.dumps(opening).encode(), {})
        assert status == 200 and "mcp-session-id" in headers, (status, headers)
        self.pane.session = headers["mcp-session-id"]
        initialized = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
        status, _, _ = await self.http.post("/mcp/load", initialized, self._headers())
        assert status == 202, status

    def _headers(self, tool: str | None = None) -> dict[str, str]:
        if self.pane.era == LEGACY:
            assert self.pane.session is not None
            return {"Mcp-Session-Id": self.pane.session, "Mcp-Protocol-Version": LEGACY}
        headers = {"Mcp-Protocol-Version": MODERN, "Mcp-Method": "tools/call"}
        if tool is not None:
            headers["Mcp-Name"] = tool
        return headers

    async def call(
        self, tool: str, arguments: dict[str, Any], *, load: bool = True, after: asyncio.Event | None = None
    ) -> Call:
        if after is not None:
            await after.wait()
        queued = time.perf_counter()
        async with self.slots:
            return await self._send(tool, arguments, load, time.perf_counter() - queued)

    async def _send(self, tool: str, arguments: dict[str, Any], load: bool, waited: float) -> Call:
        self._ids += 1
        params: dict[str, Any] = {"name": tool, "arguments": arguments}
        if self.pane.era == MODERN:
            params["_meta"] = {
                "io.modelcontextprotocol/protocolVersion": MODERN,
                "io.modelcontextprotocol/clientCapabilities": {},
            }
        body = json.dumps({"jsonrpc": "2.0", "id": self._ids, "method": "tools/call", "params": params}).encode()
        started = time.perf_counter()
        try:
            status, headers, content = await self.http.post("/mcp/load", body, self._headers(tool))
            text = _json_body(headers, content)
        except (OSError, asyncio.IncompleteReadError, ValueError) as exc:  # reported by the test, not raised
            status, text = 0, f"{type(exc).__name__}: {exc}"
        latency = time.perf_counter() - started
        self.statuses[status] += 1
        call = Call(self.pane.index, tool, status, _outcome(status, text), _text(text), started, latency, waited, load)
        self.calls.append(call)
        return call


def _json_body(headers: dict[str, str], content: bytes) -> str:
    """The JSON-RPC message of a response: the body, or the last ``data:`` of an event stream."""
    text = content.decode("utf-8")
    if headers.get("content-type", "").startswith("text/event-stream"):
        data = [line[5:].strip() for line in text.splitlines() if line.startswith("data:")]
        return data[-1] if data else text
    return text


def _text(body: str) -> str:
    with contextlib.suppress(ValueError, KeyError, IndexError, TypeError):
        message = json.loads(body)
        if "error" in message:
            return str(message["error"].get("message"))
        return str(message["result"]["content"][0]["text"])
    return body[:300]


def _outcome(status: int, body: str) -> str:
    if status != 200:
        return "other"
    with contextlib.suppress(ValueError, KeyError, TypeError):
        result = json.loads(body)["result"]
        text = _text(body)
        if not result.get("isError"):
            return "ok"
        if "(forbidden, not broken)" in text:
            return "refused"
        if "(broken, not forbidden" in text or "broken, not forbidden" in text:
            return "broken"
    return "other"


def _plan(panes: int, calls: int, seed: int) -> list[list[str]]:
    """Each pane's tools in a shuffled order, in the shares of :data:`KINDS`."""
    plans = []
    for index in range(panes):
        tools = [tool for tool, share in KINDS.items() for _ in range(round(share * calls))]
        tools = (tools + ["read"] * calls)[:calls]
        random.Random(seed + index).shuffle(tools)
        plans.append(tools)
    return plans


@contextlib.contextmanager
def _gateway(directory: Path, ask_timeout: float) -> Any:
    roles = directory / "roles"
    roles.mkdir(parents=True)
    (roles / "load.toml").write_text(textwrap.dedent(ROLE).lstrip(), encoding="utf-8")
    servers = directory / "servers.toml"
    log = directory / "upstream-calls.log"
    servers.write_text(
        f"[servers.load]\ncommand = {json.dumps(sys.executable)}\nargs = {json.dumps([str(LOAD_SERVER)])}\n"
        f"env = {{ LOAD_CALL_LOG = {json.dumps(str(log))} }}\n",
        encoding="utf-8",
    )
    state = directory / "state"
    process = subprocess.Popen(
        [sys.executable, "-m", "polter", "gateway", "--servers", str(servers), "--roles-dir", str(roles),
         "--state-dir", str(state), "--ask-timeout", str(ask_timeout)],
        stdout=subprocess.PIPE, stderr=open(directory / "gateway.log", "w"), text=True,  # noqa: SIM115
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        if not line.startswith("polter gateway listening on http://127.0.0.1:"):
            raise AssertionError(f"the gateway did not start: {line!r}; see {directory / 'gateway.log'}")
        yield process, line.rsplit(" ", 1)[1].strip(), state, log
    finally:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(timeout=30)


async def run_load(
    directory: Path,
    *,
    panes: int = 4,
    calls: int = 1000,
    connections: int = 100,
    ask_timeout: float = 2.0,
    kill_after: float = 1 / 3,
    after_restart: float = 0.2,
    reference_calls: int = 50,
    seed: int = 15,
) -> LoadResult:
    """Run the scenario in ``directory`` (gateway state, logs, the upstream's call log) and return what
    happened. ``connections`` caps each pane's open HTTP connections (its calls queue in the client);
    ``after_restart`` is the share of each pane's calls that wait for the upstream to be back."""
    plans = _plan(panes, calls, seed)
    held_back = round(calls * after_restart)
    with _gateway(directory, ask_timeout) as (process, url, state_dir, log_path):
        async with GatewayClient(url, read_state(state_dir).admin_token) as admin:
            registered: list[Pane] = []
            for index in range(panes):
                created = await admin.register("load", title=f"pane-{index}")
                era = LEGACY if index % 2 == 0 else MODERN
                said = index < panes // 2 + panes % 2  # the first half typed the word, one of each era
                registered.append(Pane(index, created.pane.id, created.token, era, said))
                if said:
                    await admin.input(created.pane.id, f"please {KEYWORD} it")
            asks_seen = 0

            async def follow() -> None:
                nonlocal asks_seen
                async for event in admin.events():
                    asks_seen += event.type == "ask"

            controller = asyncio.create_task(follow())
            deadline = time.monotonic() + 30
            while (await admin.status()).controllers < 1:
                assert time.monotonic() < deadline, "the load test's controller never connected"
                await asyncio.sleep(0.05)

            made: list[Call] = []
            statuses: Counter[int] = Counter()
            callers = [_Caller(url, pane, connections, made, statuses) for pane in registered]
            try:
                for caller in callers:
                    await caller.open()
                first = callers[0]
                first_pid = int((await first.call("pid", {}, load=False)).text)
                for _ in range(reference_calls):  # the unloaded reference, one call at a time
                    await first.call("read", {"pane": first.pane.name}, load=False)
                reference = [call.latency for call in made if call.tool == "read"]
                before_load = len(made)
                total = panes * calls
                killed_at = restarted_at = 0.0
                restarted = asyncio.Event()

                async def kill_in_the_middle() -> None:
                    nonlocal killed_at, restarted_at
                    while len(made) - before_load < total * kill_after:
                        await asyncio.sleep(0.01)
                    os.kill(first_pid, signal.SIGKILL)
                    killed_at = time.perf_counter()
                    while True:
                        upstream = next(s for s in (await admin.status()).servers if s.name == "load")
                        if upstream.restarts >= 1 and upstream.state == "running":
                            restarted_at = time.perf_counter()
                            restarted.set()
                            return
                        await asyncio.sleep(0.02)

                killer = asyncio.create_task(kill_in_the_middle())
                client_cpu = time.process_time()
                load_started = time.perf_counter()
                await asyncio.gather(*(
                    caller.call(tool, {"pane": caller.pane.name}, after=restarted if n >= calls - held_back else None)
                    for caller, plan in zip(callers, plans, strict=True) for n, tool in enumerate(plan)
                ))  # fmt: skip
                client_cpu = time.process_time() - client_cpu
                await asyncio.wait_for(killer, 120)
                second_pid = int((await first.call("pid", {}, load=False)).text)
            finally:
                for caller in callers:
                    await caller.http.aclose()
                controller.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await controller
            restarts = next(s for s in (await admin.status()).servers if s.name == "load").restarts
        gateway_rss_mb, gateway_cpu_s = _process_figures(process.pid)
        audit_path = state_dir / "audit.sqlite3"

        def call_rows() -> list[AuditRow]:
            ids = {pane.id for pane in registered}
            return [row for row in read_rows(audit_path) if row.layer == "call" and row.pane in ids]

        deadline = time.monotonic() + 30
        while len(rows := call_rows()) < len(made) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        gateway_exit = process.poll()
        upstream_log = [
            (tool, pane, int(pid)) for tool, pane, pid in (line.split() for line in log_path.read_text().splitlines())
        ]
    return LoadResult(
        panes=registered, calls=made, reference=reference, upstream_log=upstream_log, audit=rows,
        pids=(first_pid, second_pid), killed_at=killed_at, restarted_at=restarted_at, restarts=restarts,
        asks_seen=asks_seen, gateway_exit=gateway_exit, gateway_rss_mb=gateway_rss_mb,
        gateway_cpu_s=gateway_cpu_s, client_cpu_s=client_cpu, elapsed=time.perf_counter() - load_started,
        load_started=load_started, statuses=statuses,
    )  # fmt: skip
