"""A window's copy of a pane's screen, kept from the session host's frames. No Textual, no PTY.

It reads like :class:`~polter.terminal.screen.TerminalScreen` (``line``, ``text``, ``cursor``, the
modes), so the pane widget draws either. The visible rows arrive in frames; scrollback rows are
fetched when first drawn, in blocks of :data:`HISTORY_BLOCK`, and cached by their number (at most
:data:`HISTORY_CACHED` rows: a window keeps what it shows, the host keeps the whole scrollback).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from polter.terminal._cursor import Cursor
from polter.terminal._style import DEFAULT_STYLE, Style
from polter.wire.frames import HistoryRows, Row, ScreenFrame, ScreenModes, style_from

__all__ = ["HISTORY_BLOCK", "MirrorScreen"]

HISTORY_BLOCK: Final = 128
"""Scrollback rows asked for at once (numbers ``k * HISTORY_BLOCK`` …)."""
HISTORY_CACHED: Final = 4096
"""Scrollback rows a window keeps; the blocks asked for longest ago go first."""

Runs = list[tuple[str, Style]]


class MirrorScreen:
    """The screen of a pane as its frames describe it. ``fetch(first, count)`` asks the host for
    scrollback rows; their answer goes to :meth:`apply_history`."""

    def __init__(self, columns: int = 80, lines: int = 24, *, fetch: Callable[[int, int], None] | None = None) -> None:
        self.columns = columns
        self.lines = lines
        self.fetch = fetch
        self.modes = ScreenModes()
        self.history_size = 0
        self.history_pushed = 0
        self._rows: list[Runs] = [self._blank() for _ in range(lines)]
        self._cursor = Cursor(0, 0, True, "block", False)
        self._styles: dict[int, Style] = {0: DEFAULT_STYLE}
        self._style_epoch = 0
        self._history: dict[int, Runs] = {}
        self._history_key = (0, columns)
        self._asked: dict[int, int] = {}
        """History blocks asked for (oldest first), answered or not, with ``history_pushed`` when asked:
        a row numbered from there on did not exist yet, so it is asked for again."""

    def _blank(self) -> Runs:
        return [(" " * self.columns, DEFAULT_STYLE)]

    # -- frames --------------------------------------------------------------------------------

    def _learn(self, epoch: int, styles: dict[int, tuple[str | None, str | None, int]]) -> None:
        if epoch != self._style_epoch:
            self._style_epoch, self._styles = epoch, {0: DEFAULT_STYLE}
        for number, (fg, bg, bits) in styles.items():
            self._styles[number] = style_from(fg, bg, bits)

    def _runs(self, row: Row) -> Runs:
        styles = self._styles
        return [(text, styles.get(number, DEFAULT_STYLE)) for text, number in row]

    def apply(self, frame: ScreenFrame) -> set[int] | None:
        """Take in a frame; the rows to redraw (``None``: all of them)."""
        self._learn(frame.style_epoch, frame.styles)
        resized = (frame.columns, frame.lines) != (self.columns, self.lines)
        if resized:
            self.columns, self.lines = frame.columns, frame.lines
            self._rows = [self._blank() for _ in range(frame.lines)]
        for y, row in frame.rows:
            self._rows[y] = self._runs(row)
        self._cursor = Cursor(*frame.cursor)
        self.modes = frame.modes
        self.history_size, self.history_pushed = frame.history_size, frame.history_pushed
        key = (frame.history_epoch, frame.columns)
        if key != self._history_key:
            self._history_key = key
            self._history.clear()
            self._asked.clear()
        if resized or frame.full:
            return None
        return {y for y, _ in frame.rows}

    def apply_history(self, rows: HistoryRows) -> bool:
        """Take in scrollback rows the host sent; whether they are still current (worth a redraw)."""
        self._learn(rows.style_epoch, rows.styles)
        if (rows.epoch, rows.columns) != self._history_key:
            return False
        for offset, row in enumerate(rows.rows):
            self._history[rows.first + offset] = self._runs(row)
        while len(self._history) > HISTORY_CACHED and self._asked:
            block = next(iter(self._asked))
            del self._asked[block]
            for number in range(block * HISTORY_BLOCK, (block + 1) * HISTORY_BLOCK):
                self._history.pop(number, None)
        return True

    # -- reading (as TerminalScreen) -------------------------------------------------------------

    def line(self, y: int) -> Runs:
        """Row ``y`` as runs covering ``columns`` cells; negative rows are scrollback (-1 the newest).
        A scrollback row not fetched yet reads blank and is asked for."""
        if 0 <= y < self.lines:
            return self._rows[y]
        if -self.history_size <= y < 0:
            number = self.history_pushed + y
            row = self._history.get(number)
            if row is None:
                self._ask(number)
                return self._blank()
            return row
        raise IndexError(f"row {y} is outside -{self.history_size}…{self.lines - 1}")

    def _ask(self, number: int) -> None:
        block = number // HISTORY_BLOCK
        asked = self._asked.get(block)
        if (asked is not None and number < asked) or self.fetch is None:
            return
        self._asked.pop(block, None)
        self._asked[block] = self.history_pushed
        self.fetch(block * HISTORY_BLOCK, HISTORY_BLOCK)

    def text(self, y: int) -> str:
        return "".join(text for text, _ in self.line(y))

    def display(self) -> list[str]:
        """The visible text, one string per row (trailing blanks kept)."""
        return ["".join(text for text, _ in row) for row in self._rows]

    @property
    def cursor(self) -> Cursor:
        return self._cursor

    @property
    def reverse_video(self) -> bool:
        return self.modes.reverse_video

    @property
    def alternate_screen(self) -> bool:
        return self.modes.alternate_screen

    @property
    def mouse_tracking(self) -> int:
        return self.modes.mouse_tracking

    @property
    def mouse_sgr(self) -> bool:
        return self.modes.mouse_sgr

    @property
    def application_cursor_keys(self) -> bool:
        return self.modes.application_cursor_keys
