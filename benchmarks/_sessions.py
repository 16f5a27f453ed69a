"""What the benchmarks share about sessions: a real session host daemon (its own process, as ``polter``
starts it) with bash panes, in private config, state and runtime dirs, and a window on it."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

BASH = shutil.which("bash") or "/bin/bash"
ROOT = Path(__file__).resolve().parents[1]


@contextmanager
def private_dirs() -> Iterator[Path]:
    """Fresh config, state and runtime dirs for this process and what it starts (never the user's)."""
    scratch = Path(tempfile.mkdtemp(prefix="polter-bench-"))
    runtime = Path(tempfile.mkdtemp(prefix="pb-"))  # short: a socket path has at most 107 bytes
    saved = {name: os.environ.get(name) for name in ("POLTER_CONFIG_DIR", "POLTER_STATE_DIR", "POLTER_RUNTIME_DIR")}
    os.environ.update(POLTER_CONFIG_DIR=str(scratch / "config"), POLTER_STATE_DIR=str(scratch / "state"),
                      POLTER_RUNTIME_DIR=str(runtime), PS1="$ ")
    (scratch / "config").mkdir()
    try:
        yield scratch
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        shutil.rmtree(scratch, ignore_errors=True)
        shutil.rmtree(runtime, ignore_errors=True)


UNCONFINED = "POLTER_BENCH_UNCONFINED"
"""Set to 1: the benchmark's panes run outside the pane sandbox (the reference for what the sandbox costs)."""


def work_dir(folder: Path) -> Path:
    """The panes' directory: what a benchmark's panes read and write there is visible to them (the pane sandbox
    gives each pane a private ``/tmp``)."""
    work = folder / "work"
    work.mkdir(exist_ok=True)
    return work


def write_config(folder: Path, panes: int, *, agents: bool = True) -> Path:
    """A polter.toml with ``panes`` quiet bash panes (shell-adapter agent panes under ``coder``, so the
    gateway runs as it does for users; ``agents=False`` would still start it: panes come from the config).

    They run in the pane sandbox, as every pane does; with ``$POLTER_BENCH_UNCONFINED`` set, outside it: plain
    shell panes (``$SHELL`` is a script that starts the same bash) under a role that opts its shell out."""
    path = folder / "polter.toml"
    if os.environ.get(UNCONFINED):
        shell = folder / "quiet-bash"
        shell.write_text(f"#!/bin/sh\nexec {BASH} --norc --noprofile\n")
        shell.chmod(0o755)
        os.environ["SHELL"] = str(shell)
        roles = folder / "config" / "roles"
        roles.mkdir(parents=True, exist_ok=True)
        (roles / "bench-human.toml").write_text('extends = "coder"\n[sandbox]\nshell = "unconfined"\n')
        pane = '[[panes]]\nadapter = "shell"\nrole = "bench-human"\n'
    else:
        pane = f'[[panes]]\nadapter = "shell"\nrole = "coder"\ncommand = ["{BASH}", "--norc", "--noprofile"]\n'
    pane += f"cwd = {json.dumps(str(work_dir(folder)))}\n"
    path.write_text(pane * panes)
    return path


def start_session(name: str, config: Path) -> int:
    """Start a session host daemon as ``polter --config CONFIG --session NAME`` does; its pid."""
    from polter.host.daemon import start_host

    start_host(name, ["--config", str(config), "--session", name])
    return session_pid(name)


def session_pid(name: str) -> int:
    result = subprocess.run([sys.executable, "-m", "polter", "ls", "--json"], capture_output=True, text=True,
                            check=True, timeout=60)
    return next(int(info["pid"]) for info in json.loads(result.stdout) if info["name"] == name)


def kill_session(name: str) -> None:
    subprocess.run([sys.executable, "-m", "polter", "kill", name], capture_output=True, timeout=60, check=False)


@asynccontextmanager
async def window(name: str, size: tuple[int, int], target: Any = None) -> AsyncIterator[Any]:
    """The app attached to session ``name`` (or to ``target``: over ssh, say), headless, once every pane of the
    session is on its screen."""
    import polter.window  # noqa: F401  (the frame rate, before Textual is imported)
    from polter.wire.registry import session_files
    from polter.window.app import PolterApp

    app = PolterApp(target if target is not None else session_files(name))
    async with app.run_test(size=size) as pilot:
        await until(lambda: app._session_screen is not None and app.session_screen.is_mounted and app.session is not None
                    and app.session.ready and len(app.session_screen.grid.panes) == len(app.session.panes) > 0)
        yield app, pilot


async def until(condition: Any, timeout: float = 60.0, interval: float = 0.002) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError("the benchmark waited too long")
        await asyncio.sleep(interval)


def memory_kib(pid: int) -> dict[str, int]:
    """RSS and PSS of a process (PSS shares the pages it shares with other processes fairly)."""
    values: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("Rss", "Pss"):
            values[key.lower()] = int(rest.split()[0])
    return values


def children(pid: int) -> list[int]:
    return [int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]


def command_line(pid: int) -> str:
    return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")


class ControlClient:
    """One tmux control-mode connection (``tmux -C``): commands go in, their output comes back framed by
    ``%begin``/``%end``, with no process started per look at the screen."""

    def __init__(self, socket: str, session: str) -> None:
        self._process = subprocess.Popen(
            ["tmux", "-L", socket, "-f", "/dev/null", "-C", "attach-session", "-t", session, "-f", "no-output"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )
        self._block("attach-session")  # the attach is a command too: its (empty) block comes first

    def command(self, line: str) -> list[str]:
        assert self._process.stdin is not None
        self._process.stdin.write(line + "\n")
        self._process.stdin.flush()
        return self._block(line)

    def _block(self, line: str) -> list[str]:
        """The output of the next command's block (``line``: that command, for the error)."""
        assert self._process.stdout is not None
        output: list[str] = []
        inside = False
        for raw in self._process.stdout:
            text = raw.rstrip("\n")
            if text.startswith("%begin"):
                inside, output = True, []
            elif inside and (text.startswith("%end") or text.startswith("%error")):
                if text.startswith("%error"):
                    raise RuntimeError(f"tmux refused {line!r}: {output}")
                return output
            elif inside:
                output.append(text)
        raise RuntimeError("tmux's control connection closed")

    def close(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        self._process.wait(timeout=10)
