"""The hook client (``hook_client.py``, and ``polter hook``): the CLI's payload forwarded untouched with the
pane's token, the gateway's reply printed as the CLI's answer; every failure on the way is a veto (exit 2)."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from polter.adapters.plugins import HOOK_CLIENT

PAYLOAD = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "mcp__time__get_current_time",
                      "tool_input": {"timezone": "UTC"}, "mcp_server": {"name": "time"}})


class FakeHookEndpoint:
    """Answers POST /hook/<adapter>/payload with a scripted status and body, and remembers what it was sent."""

    def __init__(self) -> None:
        self.status = 200
        self.body = b"0\n0\n"
        self.chunked = False
        """Send the body as uvicorn does when an app gives no length (``Transfer-Encoding: chunked``)."""
        self.received: list[tuple[str, str | None, Any]] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers["content-length"])
                endpoint.received.append((self.path, self.headers.get("authorization"), self.rfile.read(length)))
                self.send_response(endpoint.status)
                body = endpoint.body
                if endpoint.chunked:
                    self.send_header("transfer-encoding", "chunked")
                    body = b"".join(b"%x\r\n%s\r\n" % (len(part), part) for part in (body[:3], body[3:]) if part)
                    body += b"0\r\n\r\n"
                else:
                    self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def gateway() -> Iterator[FakeHookEndpoint]:
    endpoint = FakeHookEndpoint()
    thread = threading.Thread(target=endpoint.server.serve_forever, daemon=True)
    thread.start()
    yield endpoint
    endpoint.server.shutdown()
    endpoint.server.server_close()


def env_for(gateway: FakeHookEndpoint) -> dict[str, str]:
    return {"POLTER_GATEWAY_URL": gateway.url, "POLTER_TOKEN": "tok-1", "PATH": "/usr/bin:/bin"}


def run_hook(argv: list[str], payload: str, env: dict[str, str], *, via: str = "client") -> subprocess.CompletedProcess[str]:
    """Run the hook as the CLIs do: the client script (``python -I -S``), or ``polter hook``."""
    command = [sys.executable, "-I", "-S", str(HOOK_CLIENT)] if via == "client" else [sys.executable, "-m", "polter", "hook"]
    return subprocess.run([*command, *argv], input=payload, capture_output=True, text=True, env=env, timeout=60)


@pytest.mark.parametrize("via", ["client", "polter hook"])
def test_the_payload_reaches_the_gateway_untouched_with_the_panes_token(gateway: FakeHookEndpoint, via: str) -> None:
    result = run_hook(["claude-code", "/home/someone/my project", "/run/p1"], PAYLOAD, env_for(gateway), via=via)
    assert (result.returncode, result.stdout, result.stderr) == (0, "", "")
    [(path, auth, body)] = gateway.received
    assert path == "/hook/claude-code/payload?reply=command&project=/home/someone/my%20project&runtime=/run/p1"
    assert (auth, body) == ("Bearer tok-1", PAYLOAD.encode())


def test_the_gateways_reply_is_printed_with_its_exit_code(gateway: FakeHookEndpoint) -> None:
    answer = '{"decision": "deny", "reason": "Polter: no"}\n'
    gateway.body = f"0\n{len(answer.encode())}\n{answer}".encode()
    result = run_hook(["gemini-cli"], PAYLOAD, env_for(gateway))
    assert (result.returncode, json.loads(result.stdout)["decision"], result.stderr) == (0, "deny", "")
    gateway.body = "2\n0\nPolter: refused ünïcode\n".encode()
    result = run_hook(["opencode"], PAYLOAD, env_for(gateway))
    assert (result.returncode, result.stdout, result.stderr) == (2, "", "Polter: refused ünïcode\n")


@pytest.mark.parametrize(
    ("status", "body", "reason"),
    [
        (200, b"<html>not a reply</html>", "the gateway's answer cannot be read"),
        (200, b"0\n999\nshort", "the gateway's answer cannot be read"),
        (500, b"boom", "Polter: the gateway answered HTTP 500: boom; the call is refused"),
        (401, b"unknown token", "Polter: the gateway answered HTTP 401: unknown token; the call is refused"),
    ],
)
def test_garbage_or_an_error_from_the_gateway_is_a_veto(gateway: FakeHookEndpoint, status: int, body: bytes, reason: str) -> None:
    gateway.status, gateway.body = status, body
    result = run_hook(["codex"], PAYLOAD, env_for(gateway))
    assert result.returncode == 2 and reason in result.stderr and "the call is refused" in result.stderr


@pytest.mark.parametrize("status", [200, 404])
def test_a_chunked_answer_is_read_whole(gateway: FakeHookEndpoint, status: int) -> None:
    gateway.chunked, gateway.status = True, status
    gateway.body = b"2\n0\nPolter: no\n" if status == 200 else b"no such endpoint"
    result = run_hook(["codex"], PAYLOAD, env_for(gateway))
    expected = "Polter: no\n" if status == 200 else "Polter: the gateway answered HTTP 404: no such endpoint; the call is refused\n"
    assert (result.returncode, result.stderr) == (2, expected)


def test_an_unreachable_gateway_is_a_veto(gateway: FakeHookEndpoint) -> None:
    env = env_for(gateway)
    gateway.server.shutdown()
    gateway.server.server_close()
    result = run_hook(["gemini-cli"], PAYLOAD, env)
    assert result.returncode == 2 and "cannot be reached" in result.stderr


def test_without_polters_environment_the_call_is_refused() -> None:
    result = run_hook(["claude-code"], PAYLOAD, {"PATH": "/usr/bin:/bin"})
    assert result.returncode == 2 and "POLTER_GATEWAY_URL and POLTER_TOKEN not set" in result.stderr


def test_the_client_imports_nothing_but_the_standard_library(gateway: FakeHookEndpoint) -> None:
    """``-X importtime`` lists every module the hook loaded: none of Polter's, none of a third party's, and
    not even the standard library's slow starters."""
    result = subprocess.run(
        [sys.executable, "-I", "-S", "-X", "importtime", str(HOOK_CLIENT), "codex"],
        input=PAYLOAD, capture_output=True, text=True, env=env_for(gateway), timeout=60,
    )
    assert result.returncode == 0, result.stderr
    modules = {line.split("|")[-1].strip().split(".")[0] for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert "_socket" in modules
    # socket.py, typing and the IDNA codec (with re and enum) cost a hook run milliseconds each
    forbidden = {"polter", "pydantic", "json", "httpx", "asyncio", "urllib", "http", "email", "socket", "typing",
                 "re", "enum"}  # fmt: skip
    assert not modules & forbidden, modules
    assert "encodings.idna" not in {line.split("|")[-1].strip() for line in result.stderr.splitlines()}
