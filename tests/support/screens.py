"""Replaying the recorded CLI output streams (``/work/shared/fixtures/streams``) into a screen model.

Uses Polter's own screen model (``polter.terminal.screen.TerminalScreen``) when it is there; otherwise plain
pyte, with the private sequences pyte cannot parse (``CSI > 4;0 m``, ``CSI < u``) removed first.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from pathlib import Path

import pytest

STREAMS = Path(os.environ.get("POLTER_STREAMS_DIR", "/work/shared/fixtures/streams"))
_PRIVATE = re.compile(rb"\x1b\[[<>=][0-9;?]*[a-zA-Z]")


class ReplayedScreen:
    """The screen after the first ``size`` bytes of a recorded stream; ``display()`` returns its rows."""

    def __init__(self, rows: Sequence[str]) -> None:
        self.rows = list(rows)

    def display(self) -> list[str]:
        return self.rows


def stream_path(name: str) -> Path:
    path = STREAMS / f"{name}.bin"
    if not path.is_file():
        pytest.skip(f"the recorded stream {path} is not available")
    return path


def replay(name: str, size: int | None = None, columns: int = 120, lines: int = 40) -> ReplayedScreen:
    data = stream_path(name).read_bytes()[:size]
    try:
        from polter.terminal.screen import TerminalScreen  # type: ignore[import-not-found]
    except ImportError:
        import pyte

        screen = pyte.Screen(columns, lines)
        pyte.ByteStream(screen).feed(_PRIVATE.sub(b"", data))
        return ReplayedScreen(screen.display)
    terminal = TerminalScreen(columns, lines)
    terminal.feed(data)
    display = terminal.display
    return ReplayedScreen(display() if callable(display) else display)
