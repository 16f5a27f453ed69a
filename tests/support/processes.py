"""Whether a process still runs, as the tests need it: a zombie (exited, not yet reaped) runs nothing."""

from __future__ import annotations

from pathlib import Path


def process_running(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie waiting for its parent to reap it."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"  # the state follows the command name, which may hold spaces
