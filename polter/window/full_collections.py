"""The window's full garbage collections, at moments when the human is not waiting for an echo.

CPython collects its oldest generation when enough objects have survived into it: in a window whose pane
streams output that is every few seconds, and each walks all of the window's live objects (docs/terminal.md
has the figures). A key typed during one waits for it, after the screen draws echoes at once
(:mod:`polter.window.echo_screen`) the worst wait an echo has.

:class:`FullCollections` turns CPython's automatic full collections off while the window runs (the young
generations stay automatic: they take well under a millisecond) and runs one itself once
:data:`PERIOD` has passed, at the first good moment: just after an echo was drawn (the next key is tens of
milliseconds away; :data:`AFTER_ECHO` later, so that Textual's writer thread has sent it to the terminal
first: a collection holds the GIL) or when nothing was typed for :data:`QUIET`. Cyclic garbage waits a few
seconds longer than it would have; everything else is freed by reference counting as before.
"""

from __future__ import annotations

import asyncio
import gc
import time
from typing import Final

__all__ = ["AFTER_ECHO", "PERIOD", "QUIET", "FullCollections"]

PERIOD: Final = 10.0
"""Seconds between full collections (about as often as CPython's own while a pane floods)."""
QUIET: Final = 0.5
"""Seconds without a key after which a due collection cannot land on the human's typing."""
AFTER_ECHO: Final = 0.01
"""Seconds from an echo's drawing to a due collection."""
NEVER: Final = 1 << 30
"""A threshold for the oldest generation that CPython never reaches (young collections it counts)."""


class FullCollections:
    """Full collections for one window: :meth:`start` and :meth:`stop` with it, :meth:`typed` on each key,
    :meth:`echo_drawn` after an echo reached the screen, :meth:`tick` about once a second."""

    def __init__(self) -> None:
        self._saved: tuple[int, int, int] | None = None
        self._last = time.monotonic()
        self._typed_at = 0.0
        self.collections = 0
        """How many full collections this ran (for tests and benchmarks)."""

    def start(self) -> None:
        if self._saved is None:
            self._saved = gc.get_threshold()
            young, middle, _oldest = self._saved
            gc.set_threshold(young, middle, NEVER)
        self._last = time.monotonic()

    def stop(self) -> None:
        if self._saved is not None:
            gc.set_threshold(*self._saved)
            self._saved = None

    def typed(self) -> None:
        self._typed_at = time.monotonic()

    def echo_drawn(self) -> None:
        if self._due():
            asyncio.get_running_loop().call_later(AFTER_ECHO, self._collect_if_due)

    def tick(self) -> None:
        if time.monotonic() - self._typed_at >= QUIET:
            self._collect_if_due()

    def _due(self) -> bool:
        return self._saved is not None and time.monotonic() - self._last >= PERIOD

    def _collect_if_due(self) -> None:
        if not self._due():
            return
        gc.collect()
        self._last = time.monotonic()
        self.collections += 1
