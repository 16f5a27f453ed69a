"""``polter hook``: the CLI's payload in, the gateway asked with the pane's token, the CLI's answer out;
every failure on the way is a deny."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from polter.cli.hook import decide

PAYLOAD = json.dumps({"hook_event_name": "PreToolUse", "tool_name": "mcp__time__get_current_time",
                      "tool_input": {"timezone": "UTC"}, "mcp_server": {"name": "time"}})


class FakeHookEndpoint:
    """Answers POST /hook/<adapter> with a scripted status and body, and remembers what it was sent."""

    def __init__(self) -> None:
        self.status = 200
        self.body = b'{"decision": "allow"}'
        self.received: list[tuple[str, str | None, Any]] = []
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers["content-length"])
                endpoint.received.append((self.path, self.headers.get("authorization"), json.loads(self.rfile.read(length))))
                self.send_response(endpoint.status)
                self.send_header("content-length", str(len(endpoint.body)))
                self.end_headers()
                self.wfile.write(endpoint.body)

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
    return {"POLTER_GATEWAY_URL": gateway.url, "POLTER_TOKEN": "tok-1"}


def test_the_request_reaches_the_gateway_with_the_panes_token(gateway: FakeHookEndpoint) -> None:
    reply = decide("claude-code", PAYLOAD, env_for(gateway))
    assert (reply.stdout, reply.exit_code) == ("", 0)
    [(path, auth, body)] = gateway.received
    assert (path, auth) == ("/hook/claude-code", "Bearer tok-1")
    assert body == {"kind": "mcp_tool", "cli_tool": "mcp__time__get_current_time", "server": "time",
                    "tool": "get_current_time", "skill": None, "arguments": {"timezone": "UTC"}}


def test_a_deny_comes_back_in_the_clis_format(gateway: FakeHookEndpoint) -> None:
    gateway.body = b'{"decision": "deny", "reason": "researchers only read", "rule": "tools.deny: time/*"}'
    reply = decide("claude-code", PAYLOAD, env_for(gateway))
    decision = json.loads(reply.stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    assert decision["permissionDecisionReason"] == "Polter: researchers only read (rule: tools.deny: time/*)"
    gemini = decide("gemini-cli", json.dumps({"tool_name": "mcp_time_now"}), env_for(gateway))
    assert json.loads(gemini.stdout)["decision"] == "deny"


@pytest.mark.parametrize(
    ("status", "body", "reason"),
    [
        (200, b"<html>not json</html>", "is not a hook answer"),
        (200, b'{"decision": "maybe"}', "is not a hook answer"),
        (500, b"boom", "HTTP 500: boom"),
        (401, b"unknown token", "HTTP 401: unknown token"),
    ],
)
def test_garbage_or_an_error_from_the_gateway_is_a_deny(gateway: FakeHookEndpoint, status: int, body: bytes, reason: str) -> None:
    gateway.status, gateway.body = status, body
    reply = decide("codex", PAYLOAD, env_for(gateway))
    decision = json.loads(reply.stdout)["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny" and reason in decision["permissionDecisionReason"]


def test_an_unreachable_gateway_is_a_deny(gateway: FakeHookEndpoint) -> None:
    url = gateway.url
    gateway.server.shutdown()
    gateway.server.server_close()
    reply = decide("gemini-cli", json.dumps({"tool_name": "mcp_time_now"}), {"POLTER_GATEWAY_URL": url, "POLTER_TOKEN": "t"})
    answer = json.loads(reply.stdout)
    assert answer["decision"] == "deny" and "cannot be reached" in answer["reason"]


def test_without_polters_environment_the_call_is_refused() -> None:
    reply = decide("claude-code", PAYLOAD, {})
    assert "POLTER_GATEWAY_URL and POLTER_TOKEN not set" in reply.stdout


def test_a_payload_that_cannot_be_read_is_a_deny(gateway: FakeHookEndpoint) -> None:
    for raw in ("", "not json", "[1, 2]"):
        assert json.loads(decide("codex", raw, env_for(gateway)).stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert gateway.received == []


def test_an_unknown_adapter_vetoes_with_exit_code_2() -> None:
    reply = decide("no-such-cli", PAYLOAD, {})
    assert reply.exit_code == 2 and "'no-such-cli' adapter cannot be loaded" in reply.stderr


def test_tools_polter_has_no_say_over_are_allowed_without_asking(gateway: FakeHookEndpoint) -> None:
    reply = decide("claude-code", json.dumps({"tool_name": "Bash", "tool_input": {"command": "ls"}}), {})
    assert (reply.stdout, reply.exit_code) == ("", 0)


def test_the_hook_process_answers_and_imports_nothing_heavy(gateway: FakeHookEndpoint) -> None:
    """Run as the CLIs run it; ``-X importtime`` lists every module it loaded."""
    gateway.body = b'{"decision": "deny", "reason": "no"}'
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "polter.cli.hook", "codex"],
        input=PAYLOAD, capture_output=True, text=True, env={**env_for(gateway), "PATH": "/usr/bin:/bin"}, timeout=60,
    )
    assert result.returncode == 0
    assert json.loads(result.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    modules = {line.split("|")[-1].strip().split(".")[0] for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert "polter" in modules and "pydantic" in modules
    heavy = {"httpx", "httpx2", "mcp", "textual", "starlette", "uvicorn", "anyio", "pyte", "rich", "asyncio"}
    assert not modules & heavy, modules & heavy
