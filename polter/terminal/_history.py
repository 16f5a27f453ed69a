"""Scrollback: rows that left the top of the main screen, kept compact and invisible to the GC.

A flood of output pushes one row per line, so appending is on the hot path. Each new row is stored as its
text (a ``str`` when every cell holds one character, else a tuple of cell strings) in one deque and its
styles in another: one `Style` when the whole row has one, else a tuple with a style per cell — cheap to make,
and a flood pushes thousands of rows a second. Trailing blanks of the default style are not kept (at once for a
row of one style, when compacting for the others): they are what a reader pads a row with.

While a pane is quiet the session host calls :meth:`History.compact`, which does the rest off the hot path:

- the newest rows' per-cell style tuples become runs, a flat tuple ``(style, count, style, count, ...)``, when
  that is shorter;
- older rows are **sealed**, :data:`BLOCK` at a time, into one zlib-compressed ``marshal`` string each: a full
  scrollback of 10,000 rows is then some 80 strings of a few KiB instead of 20,000 objects (docs/terminal.md
  has the figures). A read of a sealed row opens its block again; the last two opened are kept, since readers
  go through the scrollback a screen or a window's fetch at a time.

Strings are never tracked by Python's cyclic GC, and tuples of strings, styles and ints stop being tracked
after their first collection, so a full scrollback adds no work to later collections. Rows keep the width they
had; readers get them padded or clipped to the current width.
"""

from __future__ import annotations

import marshal
import zlib
from collections import deque
from itertools import chain, groupby
from typing import Final, TypeAlias, cast

from polter.terminal._style import DEFAULT_STYLE, Style, intern

__all__ = ["BLOCK", "History", "fit_row"]

BLOCK: Final = 128
"""Rows sealed into one compressed block (a window fetches the scrollback 128 rows at a time)."""

Text: TypeAlias = str | tuple[str, ...]
Styles: TypeAlias = Style | tuple[Style | int, ...]
Opened: TypeAlias = tuple[list[Text], list[Styles]]
PlainStyle: TypeAlias = tuple[str | bool | None, ...]
"""A `Style` as ``marshal`` takes it."""
Sealed: TypeAlias = PlainStyle | tuple[PlainStyle | int, ...]


class History:
    """A bounded sequence of rows, oldest first; index -1 is the newest."""

    def __init__(self, limit: int) -> None:
        self._limit = max(0, limit)
        self._texts: deque[Text] = deque()
        """The open rows (the newest), not sealed yet."""
        self._styles: deque[Styles] = deque()
        self._sealed: deque[bytes] = deque()
        """Blocks of :data:`BLOCK` rows each, oldest first, older than every open row."""
        self._dropped = 0
        """Rows of the oldest sealed block already gone past the limit."""
        self._opened: list[tuple[bytes, Opened]] = []
        """The blocks read last (at most two), newest first."""
        self.pushed = 0
        """Rows ever appended: row ``-k`` is the ``pushed - k``-th, a number that stays with the row
        while it is kept (so a reader can cache rows by it)."""
        self.epoch = 0
        """Changes whenever rows were taken back or cleared: numbers seen before may name other rows."""
        self._loose = 0
        """How many of the newest rows may still hold per-cell style tuples (see :meth:`compact`)."""

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def sealed_rows(self) -> int:
        """Rows stored in compressed blocks."""
        return len(self._sealed) * BLOCK - self._dropped

    def __len__(self) -> int:
        return self.sealed_rows + len(self._texts)

    def append(self, chars: list[str], styles: list[Style]) -> None:
        """Keep a copy of a row (the caller may reuse the lists)."""
        if not self._limit:
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
                self._loose += 1
        else:
            self._styles.append(tuple(styles))
            self._loose += 1
        if len(self._texts) + len(self._sealed) * BLOCK - self._dropped > self._limit:
            self._drop(1)

    def extend(self, texts: list[str], styles: list[Style | tuple[Style | int, ...]]) -> None:
        """Keep rows already in their compacted form (the flood fast path builds them so), oldest first."""
        if not self._limit or not texts:
            return
        self.pushed += len(texts)
        self._texts.extend(texts)
        self._styles.extend(styles)
        if self._loose:  # newer than a loose row: the rows left to compact are counted from the newest
            self._loose += len(texts)
        excess = len(self._texts) + len(self._sealed) * BLOCK - self._dropped - self._limit
        if excess > 0:
            self._drop(excess)

    def _drop(self, count: int) -> None:
        """Forget the ``count`` oldest rows (past the limit)."""
        while count and self._sealed:
            taken = min(count, BLOCK - self._dropped)
            self._dropped += taken
            count -= taken
            if self._dropped == BLOCK:
                self._opened = [entry for entry in self._opened if entry[0] is not self._sealed[0]]
                self._sealed.popleft()
                self._dropped = 0
        for _ in range(min(count, len(self._texts))):
            self._texts.popleft()
            self._styles.popleft()
        self._loose = min(self._loose, len(self._styles))

    def left_to_compact(self) -> int:
        """Rows :meth:`compact` has still to store more compactly."""
        return self._loose + (len(self._texts) // BLOCK) * BLOCK

    def compact(self, budget: int = 2000) -> int:
        """Store up to ``budget`` rows more compactly: the newest per-cell style tuples as runs, then the
        oldest open rows sealed into compressed blocks; how many rows are left to do. Costs a few microseconds
        a row: call it while output is quiet."""
        done = 0
        while self._loose and done < budget:
            index = -self._loose
            self._texts[index], self._styles[index] = _compacted(self._texts[index], self._styles[index])
            self._loose -= 1
            done += 1
        while len(self._texts) >= BLOCK and done < budget:
            self._seal()
            done += BLOCK
        return self.left_to_compact()

    def _seal(self) -> None:
        """The :data:`BLOCK` oldest open rows into one compressed block."""
        plain: dict[Style, PlainStyle] = {}
        texts: list[Text] = []
        encoded: list[Sealed] = []
        for _ in range(BLOCK):
            text, styles = _compacted(self._texts.popleft(), self._styles.popleft())
            texts.append(text)
            if isinstance(styles, Style):
                encoded.append(_plain(styles, plain))
            else:
                encoded.append(tuple(_plain(item, plain) if isinstance(item, Style) else item for item in styles))
        self._loose = min(self._loose, len(self._styles))
        self._sealed.append(zlib.compress(marshal.dumps((tuple(texts), tuple(encoded))), 6))

    def _open(self, block: bytes) -> Opened:
        """A sealed block's rows, read again (the last two opened are kept)."""
        for kept, opened in self._opened:
            if kept is block:
                return opened
        texts, encoded = marshal.loads(zlib.decompress(block))
        known: dict[PlainStyle, Style] = {}
        styles: list[Styles] = []
        for entry in encoded:
            if entry and type(entry[0]) is tuple:  # runs: (style, count, style, count, ...)
                styles.append(tuple(_style(item, known) if type(item) is tuple else item for item in entry))
            else:
                styles.append(_style(entry, known))
        rows: Opened = (list(texts), styles)
        self._opened = [(block, rows), *self._opened[:1]]
        return rows

    def _stored(self, index: int) -> tuple[Text, Styles]:
        """Row ``index`` (negative, -1 the newest) as it is stored, its block opened if it is sealed."""
        position = len(self) + index
        if not 0 <= position < len(self):
            raise IndexError(f"no scrollback row {index} (there are {len(self)})")
        sealed = self.sealed_rows
        if position >= sealed:
            return self._texts[position - sealed], self._styles[position - sealed]
        position += self._dropped
        texts, styles = self._open(self._sealed[position // BLOCK])
        return texts[position % BLOCK], styles[position % BLOCK]

    def stored(self) -> list[tuple[Text, Styles]]:
        """Every row as it is stored (sealed ones opened), oldest first: what tests compare."""
        return [self._stored(index) for index in range(-len(self), 0)]

    def row(self, index: int, columns: int) -> tuple[list[str], list[Style]]:
        """Row ``index`` (negative, -1 the newest) as lists of exactly ``columns`` cells."""
        text, styles = self._stored(index)
        return fit_row(text, styles, columns)

    def pop(self, columns: int) -> tuple[list[str], list[Style]]:
        """Take the newest row back (a screen growing taller pulls rows down from history)."""
        if not self._texts and self._sealed:
            self._unseal_newest()
        self.epoch += 1
        self.pushed -= 1
        self._loose = max(0, self._loose - 1)
        return fit_row(self._texts.pop(), self._styles.pop(), columns)

    def _unseal_newest(self) -> None:
        texts, styles = self._open(self._sealed[-1])
        skip = self._dropped if len(self._sealed) == 1 else 0
        self._sealed.pop()
        if not self._sealed:
            self._dropped = 0
        self._opened = []
        self._texts.extend(texts[skip:])
        self._styles.extend(styles[skip:])

    def clear(self) -> None:
        self.epoch += 1
        self._loose = 0
        self._texts.clear()
        self._styles.clear()
        self._sealed.clear()
        self._dropped = 0
        self._opened = []


def _compacted(text: Text, entry: Styles) -> tuple[Text, Styles]:
    """A row with its per-cell style tuple stored as runs where runs are shorter, without its trailing default
    blanks (a row of one style, or already in runs, is as compact as it gets)."""
    if isinstance(entry, Style) or (len(entry) > 1 and type(entry[1]) is int):
        return text, entry
    styles = cast(tuple[Style, ...], entry)  # a style per cell (not yet runs: no counts in it)
    if isinstance(text, str):
        end = _content_end(text, styles)
        text, styles = text[:end], styles[:end]
    runs: tuple[Style | int, ...] = tuple(
        chain.from_iterable((style, len(list(cells))) for style, cells in groupby(styles))
    )
    if len(runs) <= 2:
        return text, cast(Style, runs[0]) if runs else DEFAULT_STYLE  # one style left (or a blank row)
    return text, runs if len(runs) < len(styles) else styles


def _plain(style: Style, plain: dict[Style, PlainStyle]) -> PlainStyle:
    """``style`` as a plain tuple for ``marshal``, the same object for equal styles (marshal writes it once)."""
    found = plain.get(style)
    if found is None:
        found = plain[style] = tuple(style)
    return found


def _style(fields: PlainStyle, known: dict[PlainStyle, Style]) -> Style:
    found = known.get(fields)
    if found is None:
        found = known[fields] = intern(Style._make(fields))
    return found


def _content_end(text: str, styles: tuple[Style, ...]) -> int:
    """Where a row's trailing blanks of the default style begin (a blank of another style is content)."""
    end = len(text.rstrip(" "))
    tail = styles[end:]
    if tail.count(DEFAULT_STYLE) != len(tail):
        end += max(offset for offset, style in enumerate(tail) if style != DEFAULT_STYLE) + 1
    return end


def fit_row(chars: Text, styles: Styles, columns: int) -> tuple[list[str], list[Style]]:
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
