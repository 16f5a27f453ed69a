"""The recorded CLI output streams (``tests/fixtures/streams/``, described in its README) replayed into
Polter's own screen model.

A stream missing from the repository fails the test that needs it (``FileNotFoundError`` naming the
file): a skip would let the test pass on a machine that checks nothing.
"""

from __future__ import annotations

from pathlib import Path

from polter.terminal.screen import TerminalScreen

STREAMS = Path(__file__).resolve().parents[1] / "fixtures" / "streams"
"""The recordings, in the repository (one definition for every test and benchmark that replays them)."""


def stream_path(name: str) -> Path:
    """The recording ``<name>.bin``; raises if it is not in the repository."""
    path = STREAMS / f"{name}.bin"
    if not path.is_file():
        raise FileNotFoundError(f"the recorded stream {path} is missing from the repository (see {STREAMS}/README.md)")
    return path


def replay(name: str, size: int | None = None, columns: int = 120, lines: int = 40) -> TerminalScreen:
    """The screen after the first ``size`` bytes (all by default) of a recording; ``display()`` gives its rows."""
    screen = TerminalScreen(columns, lines)
    screen.feed(stream_path(name).read_bytes()[:size])
    return screen
