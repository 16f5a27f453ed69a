"""What the tests need to know of real processes: whether one still runs (a zombie, exited and not yet
reaped, runs nothing), and which modules one imported."""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

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
