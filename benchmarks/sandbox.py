"""What the pane sandbox adds to a pane's start: the time until a bash pane shows its prompt, sandboxed and not.

A pane starts as the session host starts it: :class:`PtyProcess` on a new terminal, the program being
``bash --norc --noprofile`` with ``PS1='$ '``; the clock runs from the spawn until the prompt arrives on the
terminal. Sandboxed, the same program runs inside the sandbox a ``coder`` pane gets in a lived-in home
(bubblewrap with its mounts: every CLI's folder and the home's code files read-only, the pane's CLI's state
writable; its own PID and network namespaces; the forwarders to the gateway's socket and the egress proxy's started and
listening before bash runs), in two homes: a developer's usual one, and one holding every file that runs code in
the human's sessions (each is a read-only mount). Starts alternate, 20 each, so machine load hits all alike.

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

from polter.adapters.plugins import discover
from polter.sandbox.bwrap import (
    HOME_CODE_FILES,
    PaneSandbox,
    program_folders,
    programs_run_outside,
    sandboxed,
    unavailable,
)
from polter.sandbox.rules import write_rules
from polter.terminal.launch import LaunchSpec
from polter.host.pty import PtyProcess

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


TYPICAL_HOME = (
    ".bashrc",
    ".profile",
    ".bash_logout",
    ".gitconfig",
    ".ssh",
    ".vimrc",
    ".tmux.conf",
    ".npmrc",
    ".docker",
)
"""A developer's home as it usually looks (of the files that run code in the human's sessions)."""


def lived_in(home: Path, code_files: tuple[str, ...]) -> tuple[Path, tuple[Path, ...]]:
    """A home as a user's looks: every bundled CLI's folder and ``code_files``, each of which the sandbox mounts
    read-only. The pane is a Claude Code pane: its folder is held, its state in it writable; the other CLIs' are
    read-only whole."""
    for name in code_files:
        (home / name).parent.mkdir(parents=True, exist_ok=True)
        (home / name).touch()
    adapters = [loaded.adapter for loaded in discover()]
    folders = [path for adapter in adapters for path in adapter.human_config(home)]
    for path in folders:
        if path.suffix:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text("{}")
        else:
            path.mkdir(parents=True, exist_ok=True)
    claude = home / ".claude"
    for name in ("projects", "todos"):
        (claude / name).mkdir(parents=True, exist_ok=True)
    (claude / "history.jsonl").touch()
    return claude, tuple(path for path in folders if path != claude)


def pane_in(scratch: Path, code_files: tuple[str, ...], plain: LaunchSpec) -> LaunchSpec:
    """``plain`` in the sandbox of a coder pane in a home of its own under ``scratch`` holding ``code_files``."""
    project, home, runtime = scratch / "project", scratch / "home", scratch / "state" / "run" / "1" / "p1"
    for folder in (project, home, runtime):
        folder.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    claude, others = lived_in(home, code_files)
    sandbox = PaneSandbox(
        project=project,
        home=home,
        rules=write_rules("allow", [("write(@outside)", "ask")], project=str(project), home=str(home)),
        runtime_dir=runtime,
        held=(claude,),
        state_paths=tuple(claude / name for name in ("projects", "todos", "history.jsonl")),
        protected=(*others, *programs_run_outside(dict(os.environ), home, project)),
        hidden=(scratch / "state",),
        gateway_port=41111,
        gateway_socket_dir=scratch.parent / "gateway",
        egress_socket_dir=scratch.parent / "egress",
        loopback_ports=(41112,),
        keep_visible=program_folders(dict(os.environ), [BASH]),
    )
    return sandboxed(plain.model_copy(update={"cwd": project}), sandbox)


async def measure() -> dict[str, float]:
    missing = unavailable()
    if missing is not None:
        raise SystemExit(f"sandbox.py: {missing}")
    scratch = Path(tempfile.mkdtemp(prefix="polter-bench-sandbox-"))
    sockets = []
    for name in ("gateway", "egress"):
        (scratch / name).mkdir()
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(str(scratch / name / f"{name}.sock"))
        listener.listen()
        sockets.append(listener)
    plain = LaunchSpec(argv=(BASH, "--norc", "--noprofile"), env={"PS1": "$ "}, cwd=scratch)
    panes = {
        "typical_home": pane_in(scratch / "typical", TYPICAL_HOME, plain),
        "every_code_file": pane_in(scratch / "every", HOME_CODE_FILES, plain),
    }
    times: dict[str, list[float]] = {"unsandboxed": [], **{name: [] for name in panes}}
    try:
        for spec in (plain, *panes.values()):  # warm the page cache for each
            await start_until_prompt(spec)
        for _ in range(STARTS):
            times["unsandboxed"].append(await start_until_prompt(plain))
            for name, spec in panes.items():
                times[name].append(await start_until_prompt(spec))
    finally:
        for listener in sockets:
            listener.close()
        shutil.rmtree(scratch, ignore_errors=True)
    figures: dict[str, float] = {
        f"{name}_{stat}_ms": round(value * 1000, 1)
        for name, samples in times.items()
        for stat, value in (("p50", statistics.median(samples)), ("p90", sorted(samples)[int(len(samples) * 0.9)]))
    }
    for name, spec in panes.items():
        figures[f"{name}_added_p50_ms"] = round(figures[f"{name}_p50_ms"] - figures["unsandboxed_p50_ms"], 1)
        figures[f"{name}_mounts"] = sum(1 for arg in spec.argv if arg in ("--bind", "--ro-bind", "--tmpfs"))
    return figures


def main() -> None:
    figures = asyncio.run(measure())
    print(f"pane start to prompt, {STARTS} starts each, alternating (load {os.getloadavg()[0]:.2f}):")
    print(
        f"  unsandboxed                 p50 {figures['unsandboxed_p50_ms']} ms  p90 {figures['unsandboxed_p90_ms']} ms"
    )
    for name in ("typical_home", "every_code_file"):
        verdict = "met" if figures[f"{name}_added_p50_ms"] <= TARGET_MS else "MISSED"
        print(
            f"  sandboxed, {name:<16} p50 {figures[f'{name}_p50_ms']} ms  p90 {figures[f'{name}_p90_ms']} ms  "
            f"({figures[f'{name}_mounts']:.0f} mounts): added p50 {figures[f'{name}_added_p50_ms']} ms "
            f"(target <= {TARGET_MS:.0f} ms: {verdict})"
        )
    print(json.dumps({"benchmark": "sandbox", **figures}))


if __name__ == "__main__":
    sys.exit(main())
