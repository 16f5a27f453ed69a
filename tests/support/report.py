"""Lines a test wants in the session's terminal summary (e.g. which CLI versions an e2e test proved).

Tests call :func:`report`; ``tests/conftest.py`` prints the lines at the end of the run, also under
pytest-xdist (workers inherit the report file's path from the controller's environment).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

ENV_REPORT = "POLTER_TEST_REPORT"


def report(line: str) -> None:
    """Add ``line`` to this run's summary (once, however many tests report it)."""
    path = os.environ.get(ENV_REPORT)
    if not path:
        return
    with open(path, "a+", encoding="utf-8") as stream:
        fcntl.flock(stream, fcntl.LOCK_EX)
        stream.seek(0)
        if line not in stream.read().splitlines():
            stream.write(line + "\n")


def start(cache: Path) -> None:
    """In the controller: a fresh report file for this run."""
    if os.environ.get(ENV_REPORT):
        return
    folder = cache / "test-report"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"run-{os.getpid()}.txt"
    path.unlink(missing_ok=True)
    os.environ[ENV_REPORT] = str(path)


def take() -> list[str]:
    """In the controller, at the end: the reported lines (the file is removed)."""
    path = Path(os.environ.get(ENV_REPORT, ""))
    if not path.is_file():
        return []
    lines = path.read_text(encoding="utf-8").splitlines()
    path.unlink()
    return lines
