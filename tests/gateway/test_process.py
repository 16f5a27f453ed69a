"""The gateway as a real process: `polter gateway`, its state file, the admin and pane commands, and
the audit log surviving a SIGKILL in the middle of a load."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sqlite3
import stat
import subprocess
import sys
import time as time_module
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path

import pytest
from support.gateway import fixture_server, time_server, write_roles
from support.processes import among, imported_modules

from polter.gateway.audit import digest_arguments, read_rows
from polter.gateway.client import GatewayClient, pane_client
from polter.gateway.loopback_http import LoopbackHttp

POLTER = [sys.executable, "-m", "polter"]


class GatewayProcess:
    def __init__(
        self, tmp_path: Path, *extra: str, stdin: int | None = None, python: tuple[str, ...] = (), upstream: bool = True
    ) -> None:
        self.state_dir = tmp_path / "state"
        self.servers = servers = tmp_path / "servers.toml"
        fixture = fixture_server()
        servers.write_text(f'[servers.fixture]\ncommand = {json.dumps(fixture.command)}\n'
                           f'args = {json.dumps(fixture.args)}\n' if upstream else "", encoding="utf-8")
        roles = write_roles(tmp_path / "roles")
        self.process = subprocess.Popen(
            [sys.executable, *python, "-m", "polter", "gateway", "--servers", str(servers), "--roles-dir", str(roles),
             "--state-dir", str(self.state_dir), *extra],
            stdin=stdin, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        assert self.process.stdout is not None
        line = self.process.stdout.readline()
        assert line.startswith("polter gateway listening on http://127.0.0.1:"), (line, self.process.stderr.read())
        self.url = line.rsplit(" ", 1)[1].strip()

    def run(self, *args: str, token: str | None = None) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "POLTER_STATE_DIR": str(self.state_dir)}
        if token is not None:
            env.update(POLTER_TOKEN=token, POLTER_GATEWAY_URL=self.url)
        return subprocess.run([*POLTER, *args], capture_output=True, text=True, env=env, timeout=60)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)


async def wait_until_async(probe, condition, *, message: str, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    """Poll an async probe until ``condition(result)`` holds (the sync ``wait_until`` cannot await)."""
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition(await probe()):
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for: {message}")
        await asyncio.sleep(0.05)


@pytest.fixture
def gateway_process(tmp_path: Path) -> Iterator[GatewayProcess]:
    process = GatewayProcess(tmp_path)
    yield process
    process.stop()


def test_polter_gateway_publishes_a_private_state_file_and_cleans_up(gateway_process: GatewayProcess) -> None:
    state = gateway_process.state_dir / "gateway.json"
    assert stat.S_IMODE(state.stat().st_mode) == 0o600
    data = json.loads(state.read_text())
    assert data["url"] == gateway_process.url and data["pid"] == gateway_process.process.pid
    assert len(data["admin_token"]) >= 43
    assert stat.S_IMODE((gateway_process.state_dir / "audit.sqlite3").stat().st_mode) == 0o600
    gateway_process.process.send_signal(signal.SIGTERM)
    assert gateway_process.process.wait(timeout=30) == 0
    assert not state.exists(), "a clean exit removes gateway.json"


def test_port_given_is_the_port_served_and_a_taken_one_is_a_clear_error(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    (tmp_path / "first").mkdir()
    gateway = GatewayProcess(tmp_path / "first", "--port", str(port))
    try:
        assert gateway.url == f"http://127.0.0.1:{port}"
        second = subprocess.run([*POLTER, "gateway", "--port", str(port), "--state-dir", str(tmp_path / "second")],
                                capture_output=True, text=True, timeout=60)
        assert second.returncode == 2 and f"cannot listen on 127.0.0.1:{port}" in second.stderr, second.stderr
    finally:
        gateway.stop()


def test_with_stop_with_stdin_the_gateway_ends_when_its_starter_does(tmp_path: Path) -> None:
    gateway = GatewayProcess(tmp_path, "--stop-with-stdin", stdin=subprocess.PIPE)
    try:
        assert gateway.process.poll() is None and gateway.process.stdin is not None
        gateway.process.stdin.close()  # what happens when the app that started it ends, however it ends
        assert gateway.process.wait(timeout=30) == 0
        assert not (gateway.state_dir / "gateway.json").exists()
    finally:
        gateway.stop()


@pytest.mark.e2e
def test_the_admin_and_pane_commands_against_a_real_gateway(gateway_process: GatewayProcess) -> None:
    registered = gateway_process.run("panes", "register", "--role", "reader", "--title", "R", "--json")
    assert registered.returncode == 0, registered.stderr
    created = json.loads(registered.stdout)
    token, pane = created["token"], created["pane"]["id"]

    tools = gateway_process.run("tools", "--json", token=token)
    assert tools.returncode == 0, tools.stderr
    fixture = next(s for s in json.loads(tools.stdout)["servers"] if s["name"] == "fixture")
    assert {t["name"]: t["decision"] for t in fixture["tools"]}["write_note"] == "deny"
    human = gateway_process.run("tools", token=token)
    assert "fixture/write_note" in human.stdout and "deny" in human.stdout

    allowed = gateway_process.run("call", "fixture/read_notes", "{}", token=token)
    assert allowed.returncode == 0 and allowed.stdout.strip() == "(no notes)"
    refused = gateway_process.run("call", "fixture/write_note", '{"text": "x"}', token=token)
    assert refused.returncode == 1 and "Polter refused fixture/write_note" in refused.stdout
    bad = gateway_process.run("call", "fixture/read_notes", "[1]", token=token)
    assert bad.returncode == 2 and "JSON object" in bad.stderr

    assert gateway_process.run("panes", "set-role", pane, "open").returncode == 0
    assert gateway_process.run("call", "fixture/write_note", '{"text": "x"}', token=token).returncode == 0
    assert gateway_process.run("panes", "input", pane, "hello there").returncode == 0
    listing = gateway_process.run("panes", "list", "--json")
    assert json.loads(listing.stdout)[0]["role"] == "open" and json.loads(listing.stdout)[0]["last_input_at"]
    assert gateway_process.run("asks", "list").stdout.strip() == "no pending asks"

    audit = gateway_process.run("audit", "--json", "--pane", pane)
    rows = [json.loads(line) for line in audit.stdout.splitlines()]
    assert [(r["name"], r["decision"]) for r in rows if r["layer"] == "call" and r["server"] == "fixture"] == [
        ("read_notes", "allow"), ("write_note", "deny"), ("write_note", "allow")]

    assert gateway_process.run("panes", "remove", pane).returncode == 0
    gone = gateway_process.run("tools", token=token)
    assert gone.returncode != 0


@pytest.mark.e2e
def test_polter_servers_reload_and_the_watcher_apply_the_servers_file(gateway_process: GatewayProcess) -> None:
    original = gateway_process.servers.read_text(encoding="utf-8")
    gateway_process.servers.write_text(original + "[servers.time\n", encoding="utf-8")
    broken = gateway_process.run("servers", "reload")
    assert broken.returncode == 1 and f"{gateway_process.servers}:" in broken.stdout and "nothing changed" in broken.stdout

    time = time_server()
    gateway_process.servers.write_text(original + f"[servers.time]\ncommand = {json.dumps(time.command)}\n"
                                                  f"args = {json.dumps(time.args)}\n", encoding="utf-8")
    reloaded = gateway_process.run("servers", "reload", "--json")  # the watcher may have been first
    assert reloaded.returncode == 0, reloaded.stdout + reloaded.stderr
    report = json.loads(reloaded.stdout)
    assert report["applied"] and "time" in report["added"] + report["unchanged"] and "fixture" in report["unchanged"]

    def running() -> dict[str, object]:
        listed = json.loads(gateway_process.run("servers", "list", "--json", "--servers",
                                                str(gateway_process.servers)).stdout)
        return {name: (entry["running"] or {}).get("state") for name, entry in listed.items()}

    deadline = time_module.monotonic() + 60
    while running() != {"fixture": "running", "time": "running"}:
        assert time_module.monotonic() < deadline, running()
    token = json.loads(gateway_process.run("panes", "register", "--role", "open", "--json").stdout)["token"]
    called = gateway_process.run("call", "time/get_current_time", '{"timezone": "UTC"}', token=token)
    assert called.returncode == 0 and "UTC" in called.stdout


@pytest.mark.e2e
def test_headless_asks_and_a_followed_audit(gateway_process: GatewayProcess) -> None:
    """`polter asks watch` is the controller, `polter asks answer` the human, `polter audit -f` the log."""
    created = json.loads(gateway_process.run("panes", "register", "--role", "asker", "--json").stdout)
    env = {**os.environ, "POLTER_STATE_DIR": str(gateway_process.state_dir)}
    watch = subprocess.Popen([*POLTER, "asks", "watch"], stdout=subprocess.PIPE, text=True, env=env)
    follow = subprocess.Popen([*POLTER, "audit", "--follow", "--json", "--limit", "0"], stdout=subprocess.PIPE,
                              text=True, env=env)
    try:
        async def controller_connected() -> None:
            async with GatewayClient.from_state(gateway_process.state_dir) as admin:
                await wait_until_async(lambda: admin.status(), lambda status: status.controllers == 1,
                                       message="`polter asks watch` connected")

        asyncio.run(controller_connected())
        call = subprocess.Popen([*POLTER, "call", "fixture/write_note", '{"text": "asked"}'], stdout=subprocess.PIPE,
                                text=True, env={**env, "POLTER_TOKEN": created["token"],
                                                "POLTER_GATEWAY_URL": gateway_process.url})
        assert watch.stdout is not None
        line = watch.stdout.readline()
        assert line.startswith("ASK ") and "fixture/write_note" in line and "asked" in line, line
        ask_id = line.split()[1].rstrip(":")
        listed = gateway_process.run("asks", "list", "--json")
        assert [ask["id"] for ask in json.loads(listed.stdout)] == [ask_id]
        assert gateway_process.run("asks", "answer", ask_id, "allow").returncode == 0
        out, _ = call.communicate(timeout=60)
        assert call.returncode == 0 and out.strip() == "noted: asked"
        assert follow.stdout is not None
        seen = []
        while not any(row["layer"] == "call" and row["name"] == "write_note" for row in seen):
            seen.append(json.loads(follow.stdout.readline()))
        assert [row["decision"] for row in seen if row["layer"] in ("ask", "call")] == ["allow_once", "allow_once"]
    finally:
        for process in (watch, follow):
            process.terminate()
            process.wait(timeout=20)


def test_polter_hook_style_client_errors_are_clear_without_a_gateway(tmp_path: Path) -> None:
    env = {**os.environ, "POLTER_STATE_DIR": str(tmp_path / "nothing")}
    result = subprocess.run([*POLTER, "panes", "list"], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 1 and "no gateway is running" in result.stderr


@pytest.mark.e2e
def test_a_gateway_killed_mid_load_loses_no_committed_audit_row(gateway_process: GatewayProcess) -> None:
    answered: list[str] = []

    async def load() -> str:
        async with GatewayClient(gateway_process.url, json.loads(
                (gateway_process.state_dir / "gateway.json").read_text())["admin_token"]) as admin:
            pane = await admin.register("open")

        async def worker(number: int) -> None:
            async with pane_client("fixture", url=gateway_process.url, token=pane.token, mode="legacy") as client:
                for index in range(10_000):
                    text = f"w{number}-{index}"
                    await client.call_tool("write_note", {"text": text})
                    answered.append(digest_arguments({"text": text}))
                    if len(answered) == 150:
                        gateway_process.process.send_signal(signal.SIGKILL)

        results = await asyncio.gather(*(worker(n) for n in range(4)), return_exceptions=True)
        assert all(isinstance(result, BaseException) for result in results), "the load ran until the kill"
        return pane.pane.id

    pane_id = asyncio.run(load())
    gateway_process.process.wait(timeout=30)
    assert gateway_process.process.returncode == -signal.SIGKILL
    audit = gateway_process.state_dir / "audit.sqlite3"
    connection = sqlite3.connect(audit)
    assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    connection.close()
    logged = {row.args_digest for row in read_rows(audit, pane=pane_id) if row.layer == "call"}
    assert len(answered) >= 150
    missing = [digest for digest in answered if digest not in logged]
    assert not missing, f"{len(missing)} answered calls have no audit row"


def modules_after(
    gateway: GatewayProcess, work: Callable[[GatewayProcess, GatewayClient], Awaitable[None]]
) -> tuple[set[str], str]:
    """What the gateway (started with ``-X importtime``) imported once ``work`` ran with its admin client, and its
    stderr."""

    async def run() -> None:
        token = json.loads((gateway.state_dir / "gateway.json").read_text())["admin_token"]
        async with GatewayClient(gateway.url, token) as admin:
            await work(gateway, admin)

    try:
        asyncio.run(run())
    finally:
        gateway.process.terminate()
        _, stderr = gateway.process.communicate(timeout=30)
    return imported_modules(stderr), stderr


GATEWAY_NEVER_IMPORTS = (
    "mcp.client.client", "mcp.client.session_group", "mcp.client.streamable_http", "mcp.server.mcpserver",
    "mcp.server.request_state", "cryptography", "httpx2", "httpx", "rich", "textual", "tree_sitter",
    "polter.backends", "polter.host", "polter.wire", "polter.window",
)  # fmt: skip
"""What the gateway leaves out (docs/architecture.md, "Memory"): the SDK's client beyond a stdio upstream's
session, its high-level server and cryptography (``polter/gateway/sdk_imports.py``), HTTP clients (only an
HTTP upstream loads httpx2), shell parsing (only a hook's shell command loads tree-sitter), the UI and host."""


def test_the_gateway_at_start_imports_only_what_serving_needs(tmp_path: Path) -> None:
    """The real process, read by ``python -X importtime``: a stdio upstream running, a pane registered, calls
    served in both protocol eras."""
    from polter.gateway.sdk import SDK_VERSION


    async def settle(gateway: GatewayProcess, admin: GatewayClient) -> None:
        await wait_until_async(
            admin.status, lambda status: status.servers[0].state == "running", message="the upstream running"
        )
        pane = await admin.register("open")
        for mode in ("legacy", "auto"):  # both protocol eras, served
            async with pane_client("fixture", url=gateway.url, token=pane.token, mode=mode) as client:
                await client.list_tools()
                await client.call_tool("read_notes", {})

    modules, stderr = modules_after(GatewayProcess(tmp_path, python=("-X", "importtime")), settle)
    assert {"mcp.server.lowlevel.server", "mcp.client.stdio", "polter.gateway.app"} <= modules, stderr[-2000:]
    unwanted = among(modules, GATEWAY_NEVER_IMPORTS)
    assert not unwanted, f"mcp {SDK_VERSION}: the gateway imported {unwanted} (see polter/gateway/sdk_imports.py)"


GATEWAY_LOADS_AT_ITS_FIRST_MCP_REQUEST = (
    "mcp.server.session", "mcp.server.lowlevel", "mcp.server.streamable_http_manager", "mcp.server.subscriptions",
    "mcp_types.methods", "mcp_types._v2025_11_25", "mcp_types._v2026_07_28", "mcp_types._types",
    "mcp.shared.exceptions", "mcp.server.auth", "polter.gateway.endpoints", "polter.gateway.sdk",
)  # fmt: skip
"""The SDK's server side and every protocol era's wire models (``polter/gateway/endpoint_set.py``), ``mcp_types``'
models with the SDK's errors and auth (``polter/gateway/sdk_imports.py``); an upstream's client session loads the
wire models too, so a gateway without upstreams shows it."""


def test_a_gateway_no_pane_has_called_over_mcp_has_not_loaded_the_sdks_server_side(tmp_path: Path) -> None:
    """The real process without upstreams, read by ``python -X importtime`` once a pane is registered and has
    had what the host sends a shell pane (its typed line, its capabilities as it starts) and a hook answered:
    what a session of shell panes runs all its life."""

    async def register(gateway: GatewayProcess, admin: GatewayClient) -> None:
        pane = await admin.register("open")
        await admin.input(pane.pane.id, "ls")
        shown = await admin.capabilities(pane.pane.id, wait=False)
        assert [tool.name for tool in shown.servers[0].tools if tool.read_only][:1] == ["whoami"]
        hooks = LoopbackHttp(gateway.url, {"Authorization": f"Bearer {pane.token}"})
        answer = await hooks.request("POST", "/hook/claude-code", json_body={"kind": "other", "cli_tool": "Bash"})
        assert json.loads(answer.body)["decision"] == "allow" and (await admin.status()).panes == 1

    modules, stderr = modules_after(GatewayProcess(tmp_path, python=("-X", "importtime"), upstream=False), register)
    assert {"polter.gateway.app", "polter.gateway.endpoint_set", "uvicorn.server"} <= modules, stderr[-2000:]
    loaded = among(modules, GATEWAY_LOADS_AT_ITS_FIRST_MCP_REQUEST)
    assert not loaded, f"a gateway no pane has called over MCP imported {loaded} (see polter/gateway/endpoint_set.py)"



async def test_in_the_real_gateway_a_session_cannot_be_used_with_another_panes_token(
    gateway_process: GatewayProcess,
) -> None:
    """The real process, whose panes' SDK principals are built at their first MCP request: pane B naming pane A's
    session gets nothing from it, and A's session still serves A."""
    import httpx

    async with GatewayClient.from_state(gateway_process.state_dir) as admin:
        alpha, bravo = await admin.register("open"), await admin.register("open")
        await wait_until_async(
            admin.status, lambda status: status.servers[0].state == "running", message="the upstream running"
        )
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}  # fmt: skip
    listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list"}
    async with httpx.AsyncClient(base_url=gateway_process.url, timeout=30) as http:
        opened = await http.post("/mcp/fixture", json=initialize,
                                 headers={**headers, "Authorization": f"Bearer {alpha.token}"})  # fmt: skip
        assert opened.status_code == 200, opened.text
        session = {**headers, "Mcp-Session-Id": opened.headers["mcp-session-id"]}
        stolen = await http.post("/mcp/fixture", json=listing, headers={**session, "Authorization": f"Bearer {bravo.token}"})
        assert stolen.status_code == 404 and "write_note" not in stolen.text, stolen.text
        own = await http.post("/mcp/fixture", json=listing, headers={**session, "Authorization": f"Bearer {alpha.token}"})
        assert own.status_code == 200 and "read_notes" in own.text, own.text
