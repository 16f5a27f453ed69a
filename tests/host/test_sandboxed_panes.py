"""Shell panes of a real session, each in the sandbox compiled from its role (issue 21's shell-pane row).

From inside a ``researcher`` pane, a program (``python3``) tries what an agent would: write the project and its
git hooks, read another pane's token from ``/proc``, read the gateway's state file (the admin credential), switch
its own role with ``polter panes set-role``, reach a loopback service that is not the gateway, and ``curl`` an
allowed and a denied host through the egress proxy (a loopback server stands for both: the session's proxy maps
their names to it, ``Launch.egress_test_hosts``). Only the allowed host answers; every other attempt fails and
nothing changes on disk, while the pane still reaches the gateway as itself (``polter tools``). Under
``coder`` the project write succeeds and the git hooks stay read-only. A shell pane whose role opts out (the
human's own shell) runs unconfined.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from support.loopback import answering
from support.panes import screen_text, wait_for_text
from support.workspace_app import QUIET_BASH, agent_of, host_of, panes, workspace_app

from polter.adapters.plugins import discover
from polter.paths import state_dir
from polter.launch.config import PaneSetup
from polter.launch.planning import PanePlan

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="platform: the sandbox needs Linux")

PROBE = """\
import os, socket, subprocess, sys
project, other_token, gateway_file, service, web = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
def attempt(name, action):
    try:
        action()
        print(name, "DONE")
    except Exception as error:
        print(name, "FAILED", type(error).__name__)
attempt("write-project", lambda: open(os.path.join(project, "notes.txt"), "w").write("x"))
attempt("write-hook", lambda: open(os.path.join(project, ".git/hooks/pre-commit"), "w").write("x"))
def steal():
    for pid in os.listdir("/proc"):
        if pid.isdigit():
            try:
                if other_token.encode() in open(f"/proc/{pid}/environ", "rb").read():
                    return
            except OSError:
                pass
    raise LookupError("no other pane's token in view")
attempt("read-other-token", steal)
attempt("read-gateway-file", lambda: open(gateway_file).read())
attempt("connect-service", lambda: socket.create_connection(("127.0.0.1", service), timeout=3).close())
done = subprocess.run(["polter", "panes", "set-role", "p1", "ops"], capture_output=True, text=True)
print("set-role", "REFUSED" if done.returncode and "the human's" in done.stderr else f"ANSWERED {done.returncode}")
done = subprocess.run(["polter", "tools"], capture_output=True, text=True)
print("tools", "OK" if done.returncode == 0 and "role" in done.stdout else f"BROKEN {done.stderr[-200:]}")
def curl(host):
    done = subprocess.run(["curl", "-sS", "-m", "30", "-o", "-", "-w", "\\n%{http_code}", f"http://{host}:{web}/"],
                          capture_output=True, text=True)
    body, _, code = done.stdout.rpartition("\\n")
    print(f"curl-{host.split('.')[0]}", "ANSWERED" if code == "200" and body == f"hello {host}" else f"REFUSED-{code}")
curl("allowed.test")
curl("denied.test")
print("PROBE-END")
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    subprocess.run(["git", "init", "-q", str(folder)], check=True)
    (folder / "probe.py").write_text(PROBE)
    return folder


@pytest.fixture
def service() -> Iterator[int]:
    """A loopback service outside every pane."""
    with answering(socket.create_server(("127.0.0.1", 0))) as server:
        yield server.getsockname()[1]


@pytest.fixture
def web() -> Iterator[int]:
    """A loopback web server standing for two hosts, allowed.test and denied.test (the proxy's test hook maps
    both to it): it answers ``hello HOST``."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - stdlib signature
            pass

        def do_GET(self) -> None:
            body = f"hello {(self.headers.get('host') or '').split(':')[0]}".encode()
            self.send_response(200)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()
    thread.join()


WEB_ROLES = {
    name: f'extends = "{name}"\n[builtins]\ndeny = ["web(domain:denied.test)"]\n' for name in ("researcher", "coder")
}
"""The bundled researcher and coder (which both allow the web), denied one host."""
TEST_HOSTS = {"allowed.test": "127.0.0.1", "denied.test": "127.0.0.1"}


def plans(project: Path, *roles: str, command: list[str] | None = QUIET_BASH) -> list[PanePlan]:
    shell = discover(entry_points=False).get("shell")
    return [
        PanePlan(PaneSetup(adapter="shell", role=role, cwd=project, command=command), shell, "chosen by the test")
        for role in roles
    ]


def type_line(app: Any, pane: Any, line: str) -> None:
    hosted = host_of(app).pane(pane.remote.id)
    hosted.paste(line)
    hosted.key("enter", None)


async def probe(app: Any, index: int, project: Path, service: int, web: int) -> dict[str, str]:
    pane = panes(app)[index]
    other = panes(app)[1 - index]
    other_token = agent_of(app, other).token
    command = f"python3 probe.py {project} {other_token} {state_dir() / 'gateway.json'} {service} {web}"
    type_line(app, pane, command)
    await wait_for_text(pane.terminal, "PROBE-END", timeout=60)
    text = screen_text(pane.terminal)
    results = {}
    for line in text.splitlines():
        words = line.split()
        if len(words) >= 2 and words[0] in {
            "write-project",
            "write-hook",
            "read-other-token",
            "read-gateway-file",
            "connect-service",
            "set-role",
            "tools",
            "curl-allowed",
            "curl-denied",
        }:
            results[words[0]] = words[1]
    return results


async def test_a_researcher_shell_pane_cannot_reach_what_it_should_not(
    monkeypatch: Any, project: Path, service: int, web: int
) -> None:
    opened = plans(project, "researcher", "coder")
    async with workspace_app(monkeypatch, opened, roles=WEB_ROLES, egress_test_hosts=TEST_HOSTS) as (app, _pilot):
        assert (state_dir() / "gateway.json").exists()
        results = await probe(app, 0, project, service, web)
        assert results == {
            "write-project": "FAILED",
            "write-hook": "FAILED",
            "read-other-token": "FAILED",
            "read-gateway-file": "FAILED",
            "connect-service": "FAILED",
            "set-role": "REFUSED",
            "tools": "OK",
            "curl-allowed": "ANSWERED",
            "curl-denied": "REFUSED-403",
        }, screen_text(panes(app)[0].terminal)
        assert not (project / "notes.txt").exists() and not (project / ".git/hooks/pre-commit").exists()
        assert agent_of(app, panes(app)[0]).role == "researcher"


async def test_a_coder_shell_pane_writes_the_project_and_not_the_git_hooks(
    monkeypatch: Any, project: Path, service: int, web: int
) -> None:
    opened = plans(project, "researcher", "coder")
    async with workspace_app(monkeypatch, opened, roles=WEB_ROLES, egress_test_hosts=TEST_HOSTS) as (app, _pilot):
        results = await probe(app, 1, project, service, web)
        assert results["write-project"] == "DONE" and results["write-hook"] == "FAILED", results
        assert {results[name] for name in ("read-other-token", "read-gateway-file", "connect-service")} == {"FAILED"}
        assert (results["curl-allowed"], results["curl-denied"]) == ("ANSWERED", "REFUSED-403"), results
        assert (project / "notes.txt").read_text() == "x"
        assert not (project / ".git/hooks/pre-commit").exists()


HUMAN = """\
extends = "coder"
description = "The human's own shell"

[sandbox]
shell = "unconfined"
"""


async def test_a_shell_pane_whose_role_opts_out_runs_unconfined(monkeypatch: Any, project: Path) -> None:
    """The user's own shell (``$SHELL``, here ``sh``) under a role that opts out; a pane running a ``command`` of
    its own is an agent's and stays confined under the same role."""
    monkeypatch.setenv("SHELL", "/bin/sh")
    opened = [*plans(project, "human", command=None), *plans(project, "human")]
    async with workspace_app(monkeypatch, opened, roles={"human": HUMAN}) as (app, _pilot):
        human, coder = panes(app)
        for pane in (human, coder):
            type_line(app, pane, 'echo "IN-$POLTER_SANDBOX-X"')
        await wait_for_text(human.terminal, "IN--X")
        await wait_for_text(coder.terminal, "IN-1-X")


async def test_the_egress_proxy_dying_closes_the_network_and_the_session_brings_it_back(
    monkeypatch: Any, project: Path
) -> None:
    """Killed, the proxy takes every pane's network with it (closed, never open); the windows are told, the
    session host starts it again, and the pane's proxy answers again at the same place."""
    import os
    import signal

    from support.waiting import wait_until
    from support.workspace_app import workspace_of

    from polter.host.workspace import NetworkChanged

    async with workspace_app(monkeypatch, plans(project, "coder"), roles={}) as (app, _pilot):
        workspace = workspace_of(app)
        changes: list[NetworkChanged] = []
        workspace.subscribe(lambda event: changes.append(event) if isinstance(event, NetworkChanged) else None)
        [pane] = panes(app)
        check = (
            "curl -s --noproxy '' -o /dev/null -w 'PROXY-%{http_code}-END\\n' -x \"$HTTPS_PROXY\" http://127.0.0.1:1/"
        )
        type_line(app, pane, check)
        await wait_for_text(pane.terminal, "PROXY-403-END")  # the proxy itself refuses an undeclared loopback port
        pid = workspace.egress.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)
        await wait_until(lambda: [change.up for change in changes] == [False, True], timeout=30, message="the restart")
        assert workspace.egress.pid not in (None, pid)
        type_line(app, pane, "clear; " + check)
        await wait_for_text(pane.terminal, "PROXY-403-END")
