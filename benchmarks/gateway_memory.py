"""Where the gateway's memory goes, before any call and after some, against references of the same run.

1. Imports, stage by stage, each stage in a fresh interpreter that imports everything of the stages
   before it too (so each row is what that stage adds): bare Python, the standard library the gateway
   uses, pydantic, the SDK's own dependencies (anyio, httpx2, starlette, uvicorn, sse-starlette,
   cryptography, ...), the SDK's wire types (``mcp_types``: both protocol eras), the rest of the SDK
   (``import mcp``), Polter's gateway modules, and the event loop and HTTP parser it runs on.
   Beside them, a what-if: the SDK modules the gateway uses, imported from a copy of the SDK whose
   package ``__init__`` files are empty (mcp 2.3's import everything: the client, the high-level
   ``MCPServer``, OAuth and request-state cryptography), i.e. what a lazily importing SDK would cost.
2. The real ``polter gateway`` process: RSS and PSS (``/proc/PID/smaps_rollup``) once it listens, with no
   upstream and with the fixture upstream, before any call and after 200 calls.
3. Before and after: the same as 2 for the gateway of another commit (``--reference``, by default the
   ``main`` branch), run from a ``git archive`` of it with the same interpreter and packages.

RSS counts shared library pages fully; PSS shares them out, so it is the process's own cost.
Run: ``.venv/bin/python benchmarks/gateway_memory.py [--reference REF]``. The last line is JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from io import BytesIO
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

import httpx  # noqa: E402

FIXTURE_SERVER = ROOT / "tests" / "support" / "fixture_server.py"

STAGES: list[tuple[str, list[str]]] = [
    ("python", []),
    ("standard library (ssl, asyncio, sqlite3, json, logging)", ["ssl", "asyncio", "sqlite3", "json", "logging"]),
    ("pydantic", ["pydantic"]),
    (
        "the SDK's dependencies (anyio, httpx2, starlette, uvicorn, sse-starlette, cryptography, multipart, otel)",
        [
            "anyio",
            "httpx2",
            "starlette.applications",
            "uvicorn",
            "sse_starlette",
            "cryptography.hazmat.bindings._rust",
            "python_multipart",
            "opentelemetry.trace",
        ],
    ),  # fmt: skip
    ("the SDK's wire types (mcp_types, both protocol eras)", ["mcp_types"]),
    ("the rest of the SDK (import mcp: client, servers, MCPServer, auth)", ["mcp"]),
    ("Polter's gateway", ["polter.cli.gateway", "polter.gateway.app", "polter.gateway.serve"]),
    ("uvloop and httptools", ["uvloop", "uvicorn.protocols.http.httptools_impl", "uvicorn.loops.uvloop"]),
]

_MEMORY = """
import importlib, sys
for name in sys.argv[1:]:
    importlib.import_module(name)
fields = dict(line.split(":", 1) for line in open("/proc/self/smaps_rollup").read().splitlines()[1:])
print(int(fields["Rss"].split()[0]), int(fields["Pss"].split()[0]))
"""


SDK_MODULES_USED = [
    "mcp.server.lowlevel.server", "mcp.server.context", "mcp.server.connection", "mcp.server.session",
    "mcp.server.streamable_http_manager", "mcp.server.transport_security", "mcp.server.subscriptions",
    "mcp.server.auth.middleware.bearer_auth", "mcp.server.auth.provider", "mcp.shared.dispatcher",
    "mcp.client.session", "mcp.client.stdio", "mcp.client.streamable_http",
]  # fmt: skip
"""What ``polter/gateway`` imports from the SDK (``grep -h "from mcp" polter/gateway/*.py``)."""


def lazy_sdk_cost(work: Path) -> float:
    """RSS (MB) of bare Python plus :data:`SDK_MODULES_USED` from a copy of the SDK with empty package
    ``__init__`` files: what the gateway's SDK imports would cost if the SDK imported lazily."""
    import mcp

    copy = work / "lazy-sdk"
    shutil.copytree(Path(mcp.__file__).parent, copy / "mcp", ignore=shutil.ignore_patterns("__pycache__"))
    for package in ("", "server", "client"):
        (copy / "mcp" / package / "__init__.py").write_text("")
    output = subprocess.run(
        [sys.executable, "-c", _MEMORY, *SDK_MODULES_USED], capture_output=True, text=True, check=True,
        env={**os.environ, "PYTHONPATH": str(copy)},
    ).stdout.split()  # fmt: skip
    return round(int(output[0]) / 1024, 1)


def memory_of(pid: int) -> dict[str, float]:
    fields = dict(line.split(":", 1) for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:])
    return {key.lower() + "_mb": round(int(fields[key].split()[0]) / 1024, 1) for key in ("Rss", "Pss", "Pss_Anon")}


def import_stages(python_path: str) -> list[dict[str, Any]]:
    rows, names, previous = [], [], 0.0
    for title, modules in STAGES:
        names += modules
        output = subprocess.run(
            [sys.executable, "-c", _MEMORY, *names], capture_output=True, text=True, check=True,
            env={**os.environ, "PYTHONPATH": python_path},
        ).stdout.split()  # fmt: skip
        rss = int(output[0]) / 1024
        rows.append({"stage": title, "adds_mb": round(rss - previous, 1), "rss_mb": round(rss, 1)})
        previous = rss
    return rows


async def gateway(tree: Path, workdir: Path, upstream: bool, calls: int) -> dict[str, Any]:
    """Start ``polter gateway`` from ``tree``; its memory once listening and after ``calls`` calls."""
    workdir.mkdir(parents=True)
    servers = workdir / "servers.toml"
    servers.write_text(
        f"[servers.fixture]\ncommand = {json.dumps(sys.executable)}\nargs = {json.dumps([str(FIXTURE_SERVER)])}\n"
        if upstream
        else "",
        encoding="utf-8",
    )
    process = subprocess.Popen(
        [sys.executable, "-m", "polter", "gateway", "--servers", str(servers), "--state-dir", str(workdir / "state")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=workdir,
        env={**os.environ, "PYTHONPATH": str(tree)},
    )  # fmt: skip
    try:
        assert process.stdout is not None
        line = process.stdout.readline()
        assert line.startswith("polter gateway listening on"), line
        url = line.rsplit(" ", 1)[1].strip()
        token = json.loads((workdir / "state" / "gateway.json").read_text())["admin_token"]
        async with httpx.AsyncClient(base_url=url, headers={"Authorization": f"Bearer {token}"}) as admin:
            if upstream:  # wait for the upstream, whose start is not the gateway's memory
                for _ in range(600):
                    status = (await admin.get("/control/status")).json()
                    if all(server["state"] == "running" for server in status["servers"]):
                        break
                    await asyncio.sleep(0.05)
            idle = memory_of(process.pid)
            pane = (await admin.post("/control/panes", json={"role": "coder"})).json()
        loaded: dict[str, float] = {}
        if upstream and calls:
            loaded = await _calls(url, pane["token"], calls, process.pid)
        return {"idle": idle, f"after_{calls}_calls": loaded} if loaded else {"idle": idle}
    finally:
        process.terminate()
        process.wait(timeout=30)


async def _calls(url: str, token: str, calls: int, pid: int) -> dict[str, float]:
    headers = {"Authorization": f"Bearer {token}", "Accept": "application/json, text/event-stream"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as http:
        client = {"name": "memory", "version": "1"}
        opening = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": client}
        opened = await http.post(
            "/mcp/fixture", json={"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": opening}
        )
        session = {"Mcp-Session-Id": opened.headers["mcp-session-id"], "Mcp-Protocol-Version": "2025-11-25"}
        await http.post("/mcp/fixture", json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=session)
        for index in range(calls):
            call = {"name": "read_notes" if index % 2 else "write_note", "arguments": {"text": "m"}}
            body = {"jsonrpc": "2.0", "id": index + 1, "method": "tools/call", "params": call}
            response = await http.post("/mcp/fixture", json=body, headers=session)
            assert response.status_code == 200, response.text
    return memory_of(pid)


def export(reference: str, into: Path) -> Path:
    """The ``polter`` package (with its bundled roles and plugins) of commit ``reference``."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", reference, "polter", "roles", "plugins"],
        capture_output=True, check=True,
    ).stdout  # fmt: skip
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


async def main(options: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {"imports": import_stages(str(ROOT))}
    print("imports (each stage in a fresh interpreter, on top of the stages above it):")
    for row in results["imports"]:
        print(f"  {row['adds_mb']:+6.1f} MB  -> {row['rss_mb']:5.1f} MB  {row['stage']}")
    with tempfile.TemporaryDirectory(prefix="polter-memory-") as directory:
        work = Path(directory)
        eager = next(row["rss_mb"] for row in results["imports"] if row["stage"].startswith("the rest of the SDK"))
        lazy = lazy_sdk_cost(work)
        results["sdk_what_if_lazy"] = {"eager_import_mcp_mb": eager, "lazy_modules_used_mb": lazy}
        print(
            f"the SDK as the gateway imports it (import mcp, with all it needs): {eager} MB; the modules it uses "
            f"from a lazily importing SDK: {lazy} MB ({lazy - eager:+.1f} MB)"
        )
        trees = {"this tree": ROOT, f"reference ({options.reference})": export(options.reference, work / "ref")}
        for name, tree in trees.items():
            results[name] = {
                "no upstream": await gateway(tree, work / name / "none", upstream=False, calls=0),
                "fixture upstream": await gateway(tree, work / name / "one", upstream=True, calls=options.calls),
            }
            for setup, figures in results[name].items():
                for moment, memory in figures.items():
                    print(f"{name:24} {setup:17} {moment:16} RSS {memory['rss_mb']:5.1f} MB  "
                          f"PSS {memory['pss_mb']:5.1f} MB  (anonymous {memory['pss_anon_mb']:5.1f} MB)")  # fmt: skip
    ours, theirs = results["this tree"], results[f"reference ({options.reference})"]
    results["idle_rss_change_mb"] = round(
        ours["no upstream"]["idle"]["rss_mb"] - theirs["no upstream"]["idle"]["rss_mb"], 1
    )
    print(f"idle RSS with no upstream, this tree minus the reference: {results['idle_rss_change_mb']:+.1f} MB")
    return results


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference", default="main", help="the commit to compare with (default: main)")
    parser.add_argument("--calls", type=int, default=200)
    print(json.dumps(asyncio.run(main(parser.parse_args()))))
