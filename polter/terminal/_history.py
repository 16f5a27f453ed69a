"""Scrollback: rows that left the top of the main screen, kept compact and invisible to the GC.

A flood of output pushes one row per line, so this is on the hot path. Each row is stored as
its text (a ``str`` when every cell holds one character, else a tuple of cell strings) in one
deque and its styles (one `Style` when the whole row has one, else a tuple) in another. Strings
are never tracked by Python's cyclic GC and tuples of strings and styles stop being tracked after
their first collection, so a full scrollback of 10,000 rows adds no work to later collections.
Rows keep the width they had; readers get them padded or clipped to the current width.
"""

from __future__ import annotations

from collections import deque

from polter.terminal._style import DEFAULT_STYLE, Style

__all__ = ["History", "fit_row"]


class History:
    """A bounded sequence of rows, oldest first; index -1 is the newest."""

    def __init__(self, limit: int) -> None:
        self._texts: deque[str | tuple[str, ...]] = deque(maxlen=max(0, limit))
        self._styles: deque[Style | tuple[Style, ...]] = deque(maxlen=max(0, limit))
        self.pushed = 0
        """Rows ever appended: row ``-k`` is the ``pushed - k``-th, a number that stays with the row
        while it is kept (so a reader can cache rows by it)."""
        self.epoch = 0
        """Changes whenever rows were taken back or cleared: numbers seen before may name other rows."""

    @property
    def limit(self) -> int:
        return self._texts.maxlen or 0

    def __len__(self) -> int:
        return len(self._texts)

    def append(self, chars: list[str], styles: list[Style]) -> None:
        """Keep a copy of a row (the caller may reuse the lists)."""
        if not self._texts.maxlen:
            return
        self.pushed += 1
        text = "".join(chars)
        first = styles[0]
        self._texts.append(text if len(text) == len(chars) else tuple(chars))
        self._styles.append(first if styles.count(first) == len(styles) else tuple(styles))

    def row(self, index: int, columns: int) -> tuple[list[str], list[Style]]:
        """Row ``index`` (negative, -1 the newest) as lists of exactly ``columns`` cells."""
        return fit_row(self._texts[index], self._styles[index], columns)

    def pop(self, columns: int) -> tuple[list[str], list[Style]]:
        """Take the newest row back (a screen growing taller pulls rows down from history)."""
        self.epoch += 1
        self.pushed -= 1
        return fit_row(self._texts.pop(), self._styles.pop(), columns)

    def clear(self) -> None:
        self.epoch += 1
        self._texts.clear()
        self._styles.clear()


def fit_row(
    chars: str | tuple[str, ...], styles: Style | tuple[Style, ...], columns: int
) -> tuple[list[str], list[Style]]:
    """A stored row as lists of exactly ``columns`` cells, padded or clipped."""
    cells = list(chars)
    cell_styles = [styles] * len(cells) if isinstance(styles, Style) else list(styles)
    if len(cells) > columns:
        if cells[columns] == "":
            cells[columns - 1] = " "  # a wide character cut in half
        del cells[columns:], cell_styles[columns:]
    elif len(cells) < columns:
        cells.extend([" "] * (columns - len(cells)))
        cell_styles.extend([DEFAULT_STYLE] * (columns - len(cell_styles)))
    return cells, cell_styles
