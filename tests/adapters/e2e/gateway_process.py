"""The real gateway for the adapters' end-to-end tests: `polter gateway` as a subprocess over real upstreams
(`mcp-server-time` from PyPI, `@modelcontextprotocol/server-everything` from npm), driven through Polter's
own admin commands (`polter panes register/set-role/input`, `polter audit`)."""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from support.tools import npm_bin

from polter.protocol import Decision
from polter.roles import RoleLibrary, SkillRequest

POLTER = [sys.executable, "-m", "polter"]
AUDIT = ("audit", "--json", "--limit", "1000", "--pane")
"""``polter audit`` of a pane's rows (the pane's id follows), for a look and for a wait."""
EVERYTHING = ("@modelcontextprotocol/server-everything", "2026.8.31", "mcp-server-everything")


def servers_file(path: Path, extra: str = "") -> Path:
    """The servers file: ``time``, ``everything`` and the tables of ``extra``."""
    everything = npm_bin(*EVERYTHING)
    path.write_text(extra + "\n" + textwrap.dedent(f"""\
        [servers.time]
        command = {json.dumps(sys.executable)}
        args = ["-m", "mcp_server_time", "--local-timezone", "UTC"]

        [servers.everything]
        command = {json.dumps(str(everything))}
        args = ["stdio"]
        env = {{ PATH = {json.dumps(f"{everything.parent}:{os.environ.get('PATH', '')}")} }}
        """))
    return path


class PolterGateway:
    """``with PolterGateway(tmp_path, roles) as gateway: pane_id, token = gateway.register("role")``."""

    def __init__(self, tmp_path: Path, roles: dict[str, str], *, pane_socket: bool = False, servers: str = "") -> None:
        self.state_dir = tmp_path / "gateway-state"
        self.pane_socket: Path | None = None
        """With ``pane_socket``: the gateway's panes socket (what a pane's sandbox mounts; never /control), in a
        short folder of its own (a Unix socket's path has at most 107 bytes)."""
        if pane_socket:
            self.pane_socket = Path(tempfile.mkdtemp(prefix="pg-")) / "gateway" / "gateway.sock"
        self.roles_dir = tmp_path / "gateway-roles"
        self.roles_dir.mkdir()
        for name, text in roles.items():
            (self.roles_dir / f"{name}.toml").write_text(textwrap.dedent(text).lstrip())
        self.servers = servers_file(tmp_path / "servers.toml", servers)
        self.process: subprocess.Popen[str] | None = None
        self.url = ""

    def __enter__(self) -> PolterGateway:
        self.process = subprocess.Popen(
            [*POLTER, "gateway", "--servers", str(self.servers), "--roles-dir", str(self.roles_dir),
             "--state-dir", str(self.state_dir), "--ask-timeout", "5",
             *(["--pane-socket", str(self.pane_socket)] if self.pane_socket is not None else [])],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        assert self.process.stdout is not None and self.process.stderr is not None
        line = self.process.stdout.readline()
        if not line.startswith("polter gateway listening on http://127.0.0.1:"):
            self.process.kill()
            raise AssertionError(f"the gateway did not start: {line!r} {self.process.stderr.read()}")
        self.url = line.rsplit(" ", 1)[1].strip()
        return self

    def __exit__(self, *exc_info: object) -> None:
        assert self.process is not None
        self.process.terminate()
        try:
            self.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=20)
        if self.pane_socket is not None:
            shutil.rmtree(self.pane_socket.parent.parent, ignore_errors=True)

    def argv(self, *args: str) -> list[str]:
        """``polter ARGS`` against this gateway."""
        return [*POLTER, *args, "--state-dir", str(self.state_dir)]

    def polter(self, *args: str) -> str:
        result = subprocess.run(self.argv(*args), capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, f"polter {' '.join(args)}: {result.stderr}"
        return result.stdout

    def register(self, role: str) -> tuple[str, str]:
        """A new pane under ``role``: its id and its token."""
        created = json.loads(self.polter("panes", "register", "--role", role, "--json"))
        return created["pane"]["id"], created["token"]

    def set_role(self, pane_id: str, role: str) -> None:
        self.polter("panes", "set-role", pane_id, role)

    def audit(self, pane_id: str) -> list[dict[str, Any]]:
        output = self.polter(*AUDIT, pane_id)
        return [json.loads(line) for line in output.splitlines() if line.strip()]

    def wait_for_audit(self, pane_id: str, predicate: Callable[[dict[str, Any]], bool], timeout: float = 60) -> dict[str, Any]:
        """The first audit row of the pane matching ``predicate``, as ``polter audit --follow`` prints the rows so
        far and then each new one (one process for the whole wait: polling ``polter audit`` started one every 0.2 s,
        and on a loaded machine, where waits are long, added load)."""
        follow = subprocess.Popen(self.argv(*AUDIT, pane_id, "--follow"), stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
        lines: queue.Queue[str] = queue.Queue()

        def read() -> None:
            assert follow.stdout is not None
            for line in follow.stdout:
                lines.put(line)
            lines.put("")  # the end: the command stopped

        threading.Thread(target=read, daemon=True).start()
        rows: list[dict[str, Any]] = []
        deadline = time.monotonic() + timeout
        try:
            while True:
                try:
                    line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
                except queue.Empty:
                    raise AssertionError(f"no matching audit row within {timeout}s; rows: {rows[-20:]}") from None
                if not line:
                    raise AssertionError(f"polter audit --follow stopped ({follow.wait()}): {follow.communicate()[1]}")
                if line.strip():
                    rows.append(json.loads(line))
                    if predicate(rows[-1]):
                        return rows[-1]
        finally:
            follow.kill()
            follow.wait()

    def skill_policy(self, role: str) -> Callable[[str], Decision]:
        """The role's skill decisions, as the app hands them to ``prepare``."""
        compiled = RoleLibrary.load([self.roles_dir]).get(role)
        assert compiled is not None, role
        return lambda name: compiled.decide(SkillRequest(name)).decision
