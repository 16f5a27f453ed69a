"""Two facts about processes every part that keeps some needs: how one ended, in words, and whether one still
runs. Pure functions on the OS's answers (no PTY, no asyncio)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

__all__ = ["describe_exit", "process_exists"]


def describe_exit(returncode: int) -> str:
    """``exited 0``, ``exited 2``, ``killed by SIGKILL``: how a pane header says why its program ended."""
    if returncode >= 0:
        return f"exited {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    return f"killed by {name}"


def process_exists(pid: int) -> bool:
    """Whether process ``pid`` still runs (a zombie waiting for its parent does not)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # not Linux: the signal said it exists
    return stat[stat.rfind(")") + 2] != "Z"
