"""Starting a session host in the background, where no window, terminal or login session can end it.

``polter`` runs ``python -m polter.cli._host_process --name NAME --ready-fd FD -- [polter's options]``, the
host process's entry point (:mod:`polter.cli._host_process`, which turns the options into a launch plan).
The host starts in a new session (``setsid``) with no terminal, forks once more so that it can never
acquire one (a session leader that opens a terminal would), shrugs off SIGHUP and SIGINT, and writes
its output to ``NAME.log`` in the state dir. Where systemd runs a user manager, it also runs in a scope of its own
(``systemd-run --user --scope``), out of the login session's cgroup, so that logging out of SSH does
not end it even with ``KillUserProcesses=yes`` (which also needs ``loginctl enable-linger``; see
docs/app.md). It tells ``polter`` through the pipe ``FD`` when its socket accepts windows, or why it
could not start.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Final

from polter.errors import SessionError
from polter.paths import state_dir
from polter.wire.registry import SessionFiles, session_files

__all__ = ["log_path", "start_host"]

HOST_ENTRY: Final = "polter.cli._host_process"
"""The module a host process runs (the command line's, as the gateway's and the egress proxy's are)."""
START_TIMEOUT: Final = 30.0
"""Seconds a starting host may take until its socket accepts (it only opens the socket and the lock)."""


def log_path(name: str) -> Path:
    folder = state_dir() / "sessions"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder / f"{name}.log"


def _systemd_scope(name: str) -> list[str]:
    """``systemd-run --user --scope ...`` where a systemd user manager answers, else nothing."""
    runner = shutil.which("systemd-run")
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runner is None or not runtime or not (Path(runtime) / "systemd" / "private").exists():
        return []
    probe = [runner, "--user", "--scope", "--quiet", "--collect", "true"]
    try:
        if subprocess.run(probe, capture_output=True, timeout=5, check=False).returncode != 0:
            return []
    except (OSError, subprocess.TimeoutExpired):
        return []
    return [runner, "--user", "--scope", "--quiet", "--collect", f"--unit=polter-{name}-{os.getpid()}"]


def start_host(name: str, options: list[str]) -> SessionFiles:
    """Start the host of session ``name`` for ``polter OPTIONS`` (the command line's words, which the host's
    entry point plans the launch from) and return once it accepts windows.

    Raises:
        SessionError: the host could not start (the name is taken, a bad option, ...), saying why.
    """
    files = session_files(name)
    read_end, write_end = os.pipe()
    command = [sys.executable, "-m", HOST_ENTRY, "--name", name, "--ready-fd", str(write_end), "--"]
    log = log_path(name)
    with open(log, "ab") as output:
        process = subprocess.Popen(
            [*_systemd_scope(name), *command, *options],
            stdin=subprocess.DEVNULL,
            stdout=output,
            stderr=output,
            pass_fds=(write_end,),
            start_new_session=True,
        )
    os.close(write_end)
    try:
        answer = _read_answer(read_end, START_TIMEOUT)
    finally:
        os.close(read_end)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=5)  # the first process forks the host and ends at once
    if answer == "ready":
        return files
    if answer:
        raise SessionError(answer)
    tail = log.read_text(errors="replace").strip().splitlines()[-3:] if log.exists() else []
    raise SessionError(f"the session host did not start ({log}: {' / '.join(tail) or 'no output'})")


def _read_answer(fd: int, timeout: float) -> str:
    deadline = time.monotonic() + timeout
    data = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
    return data.decode(errors="replace").strip()
