"""The reference MCP server from npm (@modelcontextprotocol/server-everything), over stdio and over its
own streamable-HTTP mode, behind the gateway: tools, prompts and resources under one policy, and an HTTP
upstream that goes away and comes back."""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.gateway import ROLES, start_gateway
from support.tools import npm_bin
from support.waiting import wait_until

from polter.gateway.servers import HttpServer, StdioServer

pytestmark = pytest.mark.e2e

EVERYTHING = ("@modelcontextprotocol/server-everything", "2026.8.31", "mcp-server-everything")
ROLE = """
    description = "No triggers or toggles; zipping asks"
    [servers]
    default = "allow"
    [tools]
    default = "allow"
    deny = ["*/trigger-*", "*/toggle-*"]
    ask = ["*/gzip-file-as-resource"]
    [skills]
    default = "allow"
"""


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class HttpEverything:
    def __init__(self, binary: Path) -> None:
        self.binary, self.port = binary, _free_port()
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        env = {**os.environ, "PORT": str(self.port), "PATH": f"{self.binary.parent}:{os.environ.get('PATH', '')}"}
        self.process = subprocess.Popen([str(self.binary), "streamableHttp"], env=env, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL)

    def listening(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                return True
        except OSError:
            return False

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait(timeout=20)


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
            async with harness.client(server, pane.token) as client:
                names = {tool.name for tool in (await client.list_tools()).tools}
                assert {"echo", "get-sum"} <= names, names
                assert not any(name.startswith(("trigger-", "toggle-")) for name in names)
                echoed = await client.call_tool("echo", {"message": f"hello {server}"})
                assert f"hello {server}" in echoed.content[0].text
                refused = await client.call_tool("trigger-long-running-operation", {"duration": 1, "steps": 1})
                assert refused.is_error and "Polter refused" in refused.content[0].text
                asked = await client.call_tool("gzip-file-as-resource", {})
                assert asked.is_error and "no controller is listening" in asked.content[0].text
                prompts = (await client.list_prompts()).prompts
                assert prompts, "prompts pass through"
                simple = next(prompt for prompt in prompts if not prompt.arguments)
                assert (await client.get_prompt(simple.name, {})).messages
                resources = (await client.list_resources()).resources
                assert resources, "resources pass through"
                assert (await client.read_resource(str(resources[0].uri))).contents

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
