"""What the pane sandbox adds to a pane's start: the time until a bash pane shows its prompt, sandboxed and not.

A pane starts as the session host starts it: :class:`PtyProcess` on a new terminal, the program being
``bash --norc --noprofile`` with ``PS1='$ '``; the clock runs from the spawn until the prompt arrives on the
terminal. Sandboxed, the same program runs inside the sandbox a ``coder`` pane gets (bubblewrap with its mounts,
its own PID and network namespaces, the forwarders to the gateway's socket and the egress proxy's started and
listening before bash runs). Starts alternate between the two, 20 each, so machine load hits both alike.

Target: the sandbox adds ≤ 50 ms to the p50. Run: ``.venv/bin/python benchmarks/sandbox.py``; the last line is JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from polter.sandbox.bwrap import PaneSandbox, program_folders, sandboxed, unavailable
from polter.sandbox.rules import write_rules
from polter.terminal.launch import LaunchSpec
from polter.terminal.pty import PtyProcess

STARTS = 20
TARGET_MS = 50.0
BASH = shutil.which("bash") or "/bin/bash"


async def start_until_prompt(spec: LaunchSpec) -> float:
    """Seconds from spawning ``spec`` on a terminal to its prompt on the terminal."""
    seen = bytearray()
    prompt = asyncio.Event()

    def output(data: bytes) -> None:
        seen.extend(data)
        if b"$ " in seen:
            prompt.set()

    started = time.perf_counter()
    process = PtyProcess.spawn(spec, columns=120, lines=40, on_output=output, on_exit=lambda _code: prompt.set())
    await asyncio.wait_for(prompt.wait(), 30)
    elapsed = time.perf_counter() - started
    if b"$ " not in seen:
        raise RuntimeError(f"the pane ended before its prompt: {bytes(seen)!r}")
    await process.aclose()
    return elapsed


async def measure() -> dict[str, float]:
    missing = unavailable()
    if missing is not None:
        raise SystemExit(f"sandbox.py: {missing}")
    scratch = Path(tempfile.mkdtemp(prefix="polter-bench-sandbox-"))
    project, home, runtime = scratch / "project", scratch / "home", scratch / "state" / "run" / "1" / "p1"
    for folder in (project, home, runtime):
        folder.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    sockets = []
    for name in ("gateway", "egress"):
        (scratch / name).mkdir()
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(scratch / name / f"{name}.sock"))
        listener.listen()
        sockets.append(listener)
    plain = LaunchSpec(argv=(BASH, "--norc", "--noprofile"), env={"PS1": "$ "}, cwd=project)
    sandbox = PaneSandbox(
        project=project,
        home=home,
        rules=write_rules("allow", [("write(@outside)", "ask")], project=str(project), home=str(home)),
        runtime_dir=runtime,
        hidden=(scratch / "state",),
        gateway_port=41111,
        gateway_socket_dir=scratch / "gateway",
        egress_socket_dir=scratch / "egress",
        loopback_ports=(41112,),
        keep_visible=program_folders(dict(os.environ), [BASH]),
    )
    confined = sandboxed(plain, sandbox)
    times: dict[str, list[float]] = {"unsandboxed": [], "sandboxed": []}
    try:
        await start_until_prompt(plain)  # warm the page cache for both
        await start_until_prompt(confined)
        for _ in range(STARTS):
            times["unsandboxed"].append(await start_until_prompt(plain))
            times["sandboxed"].append(await start_until_prompt(confined))
    finally:
        for listener in sockets:
            listener.close()
        shutil.rmtree(scratch, ignore_errors=True)
    figures = {
        f"{name}_{stat}_ms": round(value * 1000, 1)
        for name, samples in times.items()
        for stat, value in (("p50", statistics.median(samples)), ("p90", sorted(samples)[int(len(samples) * 0.9)]))
    }
    figures["added_p50_ms"] = round(figures["sandboxed_p50_ms"] - figures["unsandboxed_p50_ms"], 1)
    return figures


def main() -> None:
    figures = asyncio.run(measure())
    print(f"pane start to prompt, {STARTS} starts each, alternating (load {os.getloadavg()[0]:.2f}):")
    print(f"  unsandboxed p50 {figures['unsandboxed_p50_ms']} ms  p90 {figures['unsandboxed_p90_ms']} ms")
    print(f"  sandboxed   p50 {figures['sandboxed_p50_ms']} ms  p90 {figures['sandboxed_p90_ms']} ms")
    verdict = "met" if figures["added_p50_ms"] <= TARGET_MS else "MISSED"
    print(f"  added p50 {figures['added_p50_ms']} ms (target <= {TARGET_MS:.0f} ms: {verdict})")
    print(json.dumps({"benchmark": "sandbox", **figures}))


if __name__ == "__main__":
    sys.exit(main())
