"""What the tests need to know of real processes: whether one still runs (a zombie, exited and not yet
reaped, runs nothing), which modules one imported, and the session hosts a test left running."""

from __future__ import annotations

import contextlib
import os
import re
import signal
import time
from collections.abc import Iterable
from pathlib import Path

from polter.errors import PolterError
from polter.wire.registry import SessionFiles

_IMPORT_TIME = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)\s*$")


def process_running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie waiting for its parent to reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"  # the state follows the command name, which may hold spaces


def imported_modules(importtime_output: str) -> set[str]:
    """The modules a process imported, from what ``python -X importtime`` (or ``PYTHONPROFILEIMPORTTIME=1``)
    made it write to its standard error."""
    return {match.group(1) for line in importtime_output.splitlines() if (match := _IMPORT_TIME.match(line))}


def among(modules: set[str], packages: Iterable[str]) -> list[str]:
    """Those of ``packages`` (or modules) that ``modules`` holds, or holds a module of."""
    return sorted(
        {package for package in packages for name in modules if name == package or name.startswith(package + ".")}
    )


def end_left_sessions(runtime: Path, grace: float = 10.0) -> list[str]:
    """End the session hosts still running under a test's runtime dir ``runtime`` (a test that failed before it
    killed its session), and name them. The dir goes with the test, and with it every way to reach them: a host
    left there would run, its gateway and panes with it, until the machine stops. SIGTERM ends a host's
    programs and gateway; SIGKILL follows after ``grace`` seconds."""
    folder = runtime / "sessions"
    hosts: dict[str, int] = {}
    for path in folder.glob("*.json") if folder.is_dir() else ():
        files = SessionFiles(path.stem, folder)
        with contextlib.suppress(PolterError, OSError):
            record = files.read_record()
            if record is not None and files.host_alive():
                hosts[files.name] = record.pid
    for pid in hosts.values():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + grace
    while any(process_running(pid) for pid in hosts.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    for pid in hosts.values():
        if process_running(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    return sorted(hosts)
