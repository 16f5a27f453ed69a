"""Scrollback: rows that left the top of the main screen, kept compact and invisible to the GC.

A flood of output pushes one row per line, so this is on the hot path. Each row is stored as
its text (a ``str`` when every cell holds one character, else a tuple of cell strings) in one
deque and its styles in another: one `Style` when the whole row has one, else a tuple with a style
per cell — cheap to make, and a flood pushes thousands of rows a second. :meth:`History.compact`
later turns those tuples into runs, a flat tuple ``(style, count, style, count, ...)``, when that is
shorter: 10,000 rows of 120 columns in two colours take 11.9 MB as per-cell tuples and 2.6 MB as runs
(text included); the session host compacts while a pane is quiet. Strings are never tracked by
Python's cyclic GC and tuples of strings, styles and ints stop being tracked after their first
collection, so a full scrollback of 10,000 rows adds no work to later collections.
Rows keep the width they had; readers get them padded or clipped to the current width.
"""

from __future__ import annotations

from collections import deque
from itertools import chain, groupby
from typing import cast

from polter.terminal._style import DEFAULT_STYLE, Style

__all__ = ["History", "fit_row"]


class History:
    """A bounded sequence of rows, oldest first; index -1 is the newest."""

    def __init__(self, limit: int) -> None:
        self._texts: deque[str | tuple[str, ...]] = deque(maxlen=max(0, limit))
        self._styles: deque[Style | tuple[Style | int, ...]] = deque(maxlen=max(0, limit))
        self.pushed = 0
        """Rows ever appended: row ``-k`` is the ``pushed - k``-th, a number that stays with the row
        while it is kept (so a reader can cache rows by it)."""
        self.epoch = 0
        """Changes whenever rows were taken back or cleared: numbers seen before may name other rows."""
        self._loose = 0
        """The newest rows whose styles may still be per-cell tuples (see :meth:`compact`)."""

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
        if styles.count(first) == len(styles):
            self._styles.append(first)
        else:
            self._styles.append(tuple(styles))
            self._loose = min(self._loose + 1, len(self._styles))

    def compact(self, budget: int = 2000) -> int:
        """Store up to ``budget`` of the newest per-cell style tuples as runs where runs are shorter;
        how many rows are left to compact. Costs a few microseconds a row: call it while output is quiet."""
        stored = self._styles
        done = 0
        while self._loose and done < budget:
            index = -self._loose
            styles = stored[index]
            if not isinstance(styles, Style) and not (len(styles) > 1 and type(styles[1]) is int):
                runs = tuple(chain.from_iterable((style, len(list(cells))) for style, cells in groupby(styles)))
                if len(runs) < len(styles):
                    stored[index] = runs
            self._loose -= 1
            done += 1
        return self._loose

    def row(self, index: int, columns: int) -> tuple[list[str], list[Style]]:
        """Row ``index`` (negative, -1 the newest) as lists of exactly ``columns`` cells."""
        return fit_row(self._texts[index], self._styles[index], columns)

    def pop(self, columns: int) -> tuple[list[str], list[Style]]:
        """Take the newest row back (a screen growing taller pulls rows down from history)."""
        self.epoch += 1
        self.pushed -= 1
        self._loose = max(0, self._loose - 1)
        return fit_row(self._texts.pop(), self._styles.pop(), columns)

    def clear(self) -> None:
        self.epoch += 1
        self._loose = 0
        self._texts.clear()
        self._styles.clear()


def fit_row(
    chars: str | tuple[str, ...], styles: Style | tuple[Style | int, ...], columns: int
) -> tuple[list[str], list[Style]]:
    """A stored row as lists of exactly ``columns`` cells, padded or clipped."""
    cells = list(chars)
    if isinstance(styles, Style):
        cell_styles = [styles] * len(cells)
    elif len(styles) > 1 and type(styles[1]) is int:  # runs: (style, count, style, count, ...)
        cell_styles = []
        for index in range(0, len(styles), 2):
            cell_styles += [cast(Style, styles[index])] * cast(int, styles[index + 1])
    else:
        cell_styles = cast("list[Style]", list(styles))
    if len(cells) > columns:
        if cells[columns] == "":
            cells[columns - 1] = " "  # a wide character cut in half
        del cells[columns:], cell_styles[columns:]
    elif len(cells) < columns:
        cells.extend([" "] * (columns - len(cells)))
        cell_styles.extend([DEFAULT_STYLE] * (columns - len(cell_styles)))
    return cells, cell_styles
