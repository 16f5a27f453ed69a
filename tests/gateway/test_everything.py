"""The reference MCP server from npm (@modelcontextprotocol/server-everything), over stdio and over its
own streamable-HTTP mode, behind the gateway, for 2025-era and 2026-07-28 clients: tools, progress,
prompts and resources under one policy; an HTTP upstream that goes away and a stdio one killed in the
middle of a call, both coming back."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from mcp import Client
from support.gateway import ROLES, start_gateway
from support.loopback import ServerProcess
from support.tools import npm_bin
from support.waiting import wait_until

from polter.servers import HttpServer, StdioServer

pytestmark = pytest.mark.e2e

EVERYTHING = ("@modelcontextprotocol/server-everything", "2026.8.31", "mcp-server-everything")
ROLE = """
    description = "No sampling, elicitation or toggles; zipping asks"
    [servers]
    default = "allow"
    [tools]
    default = "allow"
    deny = ["*/trigger-sampling-*", "*/trigger-*elicitation*", "*/toggle-*"]
    ask = ["*/gzip-file-as-resource"]
    [skills]
    default = "allow"
"""
MODES = ("legacy", "2026-07-28")
LONG = "trigger-long-running-operation"


class HttpEverything(ServerProcess):
    def __init__(self, binary: Path) -> None:
        super().__init__()
        self.binary = binary

    def start(self) -> None:
        env = {**os.environ, "PORT": str(self.port), "PATH": f"{self.binary.parent}:{os.environ.get('PATH', '')}"}
        self.process = subprocess.Popen([str(self.binary), "streamableHttp"], env=env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)



@pytest.fixture
def everything() -> Iterator[tuple[Path, HttpEverything]]:
    binary = npm_bin(*EVERYTHING)
    http = HttpEverything(binary)
    http.start()
    yield binary, http
    http.stop()


async def test_server_everything_over_stdio_and_http_behind_the_gateway(
    tmp_path: Path, everything: tuple[Path, HttpEverything]
) -> None:
    binary, http = everything
    await wait_until(http.listening, timeout=60, message="server-everything (HTTP) listening")
    servers = {
        "everything": StdioServer(command=str(binary), args=["stdio"],
                                  env={"PATH": f"{binary.parent}:{os.environ.get('PATH', '')}"}),
        "everything-http": HttpServer(url=f"http://127.0.0.1:{http.port}/mcp"),
    }
    async with start_gateway(tmp_path, servers=servers, roles={**ROLES, "careful": ROLE}) as harness:
        pane = await harness.pane("careful")
        for server in servers:
            for mode in MODES:
                async with harness.client(server, pane.token, mode=mode) as client:
                    assert (client.protocol_version == "2026-07-28") == (mode == "2026-07-28"), client.protocol_version
                    await _everything_behind_the_gateway(client, f"{server} {mode}")
        # The HTTP upstream goes away: an error result, never a bypass; it comes back when the server does.
        http.stop()
        async with harness.client("everything-http", pane.token) as client:
            down = await client.call_tool("echo", {"message": "anyone?"})
            assert down.is_error and "broken, not forbidden" in down.content[0].text
            http.start()
            await wait_until(http.listening, timeout=60, message="server-everything (HTTP) back")
            upstream = harness.gateway.pool.get("everything-http")
            await wait_until(lambda: upstream.state == "running", timeout=60, message="gateway reconnected")
            back = await client.call_tool("echo", {"message": "back"})
            assert not back.is_error and "back" in back.content[0].text


async def _everything_behind_the_gateway(client: Client, label: str) -> None:
    """Tools, progress, a deny, an ask without a controller, prompts and resources, through one client."""
    names = {tool.name for tool in (await client.list_tools()).tools}
    assert {"echo", "get-sum", LONG} <= names, (label, names)
    assert not any(name.startswith(("trigger-sampling", "toggle-")) for name in names), label
    echoed = await client.call_tool("echo", {"message": f"hello {label}"})
    assert f"hello {label}" in echoed.content[0].text
    steps: list[float] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        steps.append(progress)

    done = await client.call_tool(LONG, {"duration": 0.3, "steps": 3}, progress_callback=on_progress)
    assert not done.is_error and "Steps: 3" in done.content[0].text, label
    await wait_until(lambda: sorted(steps) == [1, 2, 3], message=f"{label}: upstream progress passed on")
    refused = await client.call_tool("toggle-simulated-logging", {})
    assert refused.is_error and "Polter refused" in refused.content[0].text, label
    asked = await client.call_tool("gzip-file-as-resource", {})
    assert asked.is_error and "no controller is listening" in asked.content[0].text, label
    prompts = (await client.list_prompts()).prompts
    assert prompts, f"{label}: prompts pass through"
    simple = next(prompt for prompt in prompts if not prompt.arguments)
    assert (await client.get_prompt(simple.name, {})).messages
    resources = (await client.list_resources()).resources
    assert resources, f"{label}: resources pass through"
    assert (await client.read_resource(str(resources[0].uri))).contents


def _stdio_everything_pids(binary: Path) -> list[int]:
    """The server-everything processes this test process started over stdio (the gateway's upstream)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            command = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        if parent == os.getpid() and b"stdio" in command and any(binary.name.encode() in part for part in command):
            found.append(int(entry.name))
    return found


async def test_server_everything_killed_mid_call_gives_an_error_and_comes_back(
    tmp_path: Path, everything: tuple[Path, HttpEverything]
) -> None:
    binary, _ = everything
    servers = {"everything": StdioServer(command=str(binary), args=["stdio"],
                                         env={"PATH": f"{binary.parent}:{os.environ.get('PATH', '')}"})}
    async with start_gateway(tmp_path, servers=servers, roles={**ROLES, "careful": ROLE}) as harness:
        pane = await harness.pane("careful")
        upstream = harness.gateway.pool.get("everything")
        async with harness.client("everything", pane.token) as client:
            steps: list[float] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                steps.append(progress)

            await wait_until(lambda: upstream.state == "running", timeout=60, message="everything running")
            [pid] = _stdio_everything_pids(binary)
            call = asyncio.create_task(client.call_tool(LONG, {"duration": 60, "steps": 60},
                                                        progress_callback=on_progress))
            await wait_until(lambda: steps, message="the long operation under way")
            os.kill(pid, signal.SIGKILL)
            result = await call
            assert result.is_error and "broken, not forbidden" in result.content[0].text
            await wait_until(lambda: upstream.state == "running" and upstream.restarts == 1, timeout=60,
                             message="everything restarted")
            assert _stdio_everything_pids(binary) != [pid]
            back = await client.call_tool("echo", {"message": "back"})
            assert not back.is_error and "back" in back.content[0].text
