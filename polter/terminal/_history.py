"""Scrollback: rows that left the top of the main screen, kept compact and invisible to the GC.

A flood of output pushes one row per line, so this is on the hot path. Each row is stored as
its text (a ``str`` when every cell holds one character, else a tuple of cell strings) in one
deque and its styles in another: one `Style` when the whole row has one, else a tuple with a style
per cell — cheap to make, and a flood pushes thousands of rows a second. :meth:`History.compact`
later turns those tuples into runs, a flat tuple ``(style, count, style, count, ...)``, when that is shorter
(a fraction of the size for coloured rows: docs/terminal.md has the figures); the session host compacts
while a pane is quiet. Trailing blanks of the default style are not kept (at once for a row of one style,
when compacting for the others): they are what a reader pads a row with. Strings are never tracked by
Python's cyclic GC and tuples of strings, styles and ints stop being tracked after their first collection,
so a full scrollback of 10,000 rows adds no work to later collections. Rows keep the width they had; readers
get them padded or clipped to the current width.
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
        """How many of the newest rows may still hold per-cell style tuples (see :meth:`compact`)."""

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
        uniform = styles.count(first) == len(styles)
        if len(text) != len(chars):
            self._texts.append(tuple(chars))
        elif uniform and first == DEFAULT_STYLE:
            self._texts.append(text.rstrip(" "))  # the trailing blanks are what fit_row pads with
        else:
            self._texts.append(text)
        if uniform:
            self._styles.append(first)
            if self._loose:  # newer than a loose row: the rows left to compact are counted from the newest
                self._loose = min(self._loose + 1, len(self._styles))
        else:
            self._styles.append(tuple(styles))
            self._loose = min(self._loose + 1, len(self._styles))

    def extend(self, texts: list[str], styles: list[Style | tuple[Style | int, ...]]) -> None:
        """Keep rows already in their compacted form (the flood fast path builds them so), oldest first."""
        if not self._texts.maxlen or not texts:
            return
        self.pushed += len(texts)
        self._texts.extend(texts)
        self._styles.extend(styles)
        if self._loose:  # newer than a loose row: the rows left to compact are counted from the newest
            self._loose = min(self._loose + len(texts), len(self._styles))

    def compact(self, budget: int = 2000) -> int:
        """Store up to ``budget`` of the newest per-cell style tuples as runs where runs are shorter, without
        their trailing default blanks; how many rows are left to compact. Costs a few microseconds a row:
        call it while output is quiet."""
        stored = self._styles
        done = 0
        while self._loose and done < budget:
            index = -self._loose
            entry = stored[index]
            if not isinstance(entry, Style) and not (len(entry) > 1 and type(entry[1]) is int):
                styles = cast(tuple[Style, ...], entry)  # a style per cell (not yet runs: no counts in it)
                text = self._texts[index]
                if isinstance(text, str):
                    end = _content_end(text, styles)
                    self._texts[index], styles = text[:end], styles[:end]
                runs: tuple[Style | int, ...] = tuple(
                    chain.from_iterable((style, len(list(cells))) for style, cells in groupby(styles))
                )
                if len(runs) <= 2:
                    stored[index] = cast(Style, runs[0]) if runs else DEFAULT_STYLE  # one style left (or a blank row)
                else:
                    stored[index] = runs if len(runs) < len(styles) else styles
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


def _content_end(text: str, styles: tuple[Style, ...]) -> int:
    """Where a row's trailing blanks of the default style begin (a blank of another style is content)."""
    end = len(text.rstrip(" "))
    tail = styles[end:]
    if tail.count(DEFAULT_STYLE) != len(tail):
        end += max(offset for offset, style in enumerate(tail) if style != DEFAULT_STYLE) + 1
    return end


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
