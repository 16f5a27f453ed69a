"""Scrollback: rows that left the top of the main screen, kept compact and invisible to the GC.

A flood of output pushes one row per line, so appending is on the hot path. Each new row is stored as its
text (a ``str`` when every cell holds one character, else a tuple of cell strings) in one list and its styles
in another: one `Style` when the whole row has one, a flat tuple of runs ``(style, count, style, count, ...)``
(as the flood fast path makes them), or a tuple with a style per cell (as the general loop copies a row out of
its cells: cheap to make). Trailing blanks of the default style are not kept (at once for a row of one style,
when compacting for the others): they are what a reader pads a row with.

Rows are **sealed**, :data:`BLOCK` at a time, into one string: the pickle of their texts and styles (pickle
writes a style the rows share once, and does it all in C). Compact rows are sealed as they come, once
:data:`OPEN_ROWS` wait: a flood leaves no trail of row objects behind it, whose freed memory would stay
scattered among live objects and never go back to the system. While a pane is quiet the session host calls
:meth:`History.compact`, which does the rest off the hot path: the newest per-cell style tuples become runs
where that is shorter, the rows left are sealed, and every block is compressed (zlib). A full scrollback of
10,000 rows is then some 80 strings of a few hundred bytes (docs/terminal.md has the figures). A read of a
sealed row opens its block again; the last two opened are kept, since readers go through the scrollback a
screen or a window's fetch at a time.

Strings are never tracked by Python's cyclic GC, and tuples of strings, styles and ints stop being tracked
after their first collection, so a full scrollback adds no work to later collections. Rows keep the width they
had; readers get them padded or clipped to the current width.
"""

from __future__ import annotations

import pickle
import zlib
from itertools import chain, groupby
from typing import Final, TypeAlias, cast

from polter.terminal._style import DEFAULT_STYLE, Style, intern

__all__ = ["BLOCK", "OPEN_ROWS", "History", "fit_row"]

BLOCK: Final = 128
"""Rows sealed into one block (a window fetches the scrollback 128 rows at a time)."""
OPEN_ROWS: Final = 2 * BLOCK
"""Compact rows kept open before the oldest :data:`BLOCK` are sealed as they come."""
_PICKLED: Final = 0x80
"""The first byte of a pickle; a compressed block starts with zlib's (0x78)."""
_SEPARATOR: Final = "\x00"

Text: TypeAlias = str | tuple[str, ...]
Styles: TypeAlias = Style | tuple[Style | int, ...]
Opened: TypeAlias = tuple[list[Text], list[Styles]]
PlainStyle: TypeAlias = tuple[str | bool | None, ...]
"""A `Style` as a plain tuple of its fields."""


class History:
    """A bounded sequence of rows, oldest first; index -1 is the newest."""

    def __init__(self, limit: int) -> None:
        self._limit = max(0, limit)
        self._texts: list[Text] = []
        """The open rows (the newest), not sealed yet."""
        self._styles: list[Styles] = []
        self._sealed: list[bytes] = []
        """Blocks of :data:`BLOCK` rows each, oldest first, older than every open row."""
        self._raw = 0
        """How many of the newest sealed blocks are not compressed yet."""
        self._dropped = 0
        """Rows of the oldest sealed block already gone past the limit."""
        self._opened: list[tuple[bytes, Opened]] = []
        """The blocks read last (at most two), newest first."""
        self.pushed = 0
        """Rows ever appended: row ``-k`` is the ``pushed - k``-th, a number that stays with the row
        while it is kept (so a reader can cache rows by it)."""
        self.epoch = 0
        """Changes whenever rows were taken back or cleared: numbers seen before may name other rows."""
        self._per_cell: list[int] = []
        """The numbers (see :attr:`pushed`) of the open rows that hold a style per cell, oldest first."""

    @property
    def limit(self) -> int:
        return self._limit

    @property
    def sealed_rows(self) -> int:
        """Rows stored in sealed blocks."""
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
        else:
            self._styles.append(tuple(styles))
            self._per_cell.append(self.pushed - 1)
        self._settle()

    def extend(self, texts: list[str], styles: list[Style | tuple[Style | int, ...]]) -> None:
        """Keep rows already in their compacted form (the flood fast path builds them so), oldest first."""
        if not self._limit or not texts:
            return
        self.pushed += len(texts)
        self._texts.extend(texts)
        self._styles.extend(styles)
        self._settle()

    def _settle(self) -> None:
        """Seal the oldest rows while enough wait, then keep the limit."""
        if len(self._texts) >= OPEN_ROWS:
            self._seal((len(self._texts) - BLOCK) // BLOCK)
        excess = len(self) - self._limit
        if excess > 0:
            self._drop(excess)

    def _drop(self, count: int) -> None:
        """Forget the ``count`` oldest rows (past the limit)."""
        while count and self._sealed:
            taken = min(count, BLOCK - self._dropped)
            self._dropped += taken
            count -= taken
            if self._dropped == BLOCK:
                self._forget_opened(self._sealed.pop(0))
                self._raw = min(self._raw, len(self._sealed))
                self._dropped = 0
        if count:
            del self._texts[:count], self._styles[:count]
            first = self.pushed - len(self._texts)  # the number of the oldest open row
            while self._per_cell and self._per_cell[0] < first:
                del self._per_cell[0]

    def left_to_compact(self) -> int:
        """Rows :meth:`compact` has still to store more compactly."""
        return len(self._per_cell) + len(self._texts) // BLOCK * BLOCK + self._raw * BLOCK

    def compact(self, budget: int = 2000) -> int:
        """Store up to ``budget`` rows more compactly: the newest per-cell style tuples as runs, the open rows
        sealed, the sealed blocks compressed; how many rows are left to do. Costs a few microseconds a row:
        call it while output is quiet."""
        done = 0
        while self._per_cell and done < budget:
            index = self._per_cell.pop() - self.pushed  # the newest first
            self._texts[index], self._styles[index] = _compacted(self._texts[index], self._styles[index])
            done += 1
        while len(self._texts) >= BLOCK and done < budget:
            self._seal(1)
            done += BLOCK
        while self._raw and done < budget:
            index = len(self._sealed) - self._raw
            block = self._sealed[index]
            self._sealed[index] = zlib.compress(block, 6)
            self._forget_opened(block)
            self._raw -= 1
            done += BLOCK
        return self.left_to_compact()

    def _seal(self, blocks: int) -> None:
        """The ``blocks`` * :data:`BLOCK` oldest open rows into that many blocks (pickled, compressed later); the
        open rows are cut once (a flood's read brings thousands of rows at a time)."""
        first = self.pushed - len(self._texts)  # the number of the oldest open row
        per_cell = self._per_cell
        for start in range(0, blocks * BLOCK, BLOCK):
            texts, styles = self._texts[start : start + BLOCK], self._styles[start : start + BLOCK]
            while per_cell and per_cell[0] < first + start + BLOCK:  # rows the general loop copied from their cells
                index = per_cell.pop(0) - first - start
                texts[index], styles[index] = _compacted(texts[index], styles[index])
            self._sealed.append(_pickled(texts, styles))
        del self._texts[: blocks * BLOCK], self._styles[: blocks * BLOCK]
        self._raw += blocks

    def _open(self, block: bytes) -> Opened:
        """A sealed block's rows, read again (the last two opened are kept)."""
        for kept, opened in self._opened:
            if kept is block:
                return opened
        rows = _unpickled(block if block[0] == _PICKLED else zlib.decompress(block))
        self._opened = [(block, rows), *self._opened[:1]]
        return rows

    def _forget_opened(self, block: bytes) -> None:
        """``block`` is gone or stored anew: its opened rows no longer stand for a kept block."""
        self._opened = [entry for entry in self._opened if entry[0] is not block]

    def _stored(self, index: int) -> tuple[Text, Styles]:
        """Row ``index`` (negative, -1 the newest) as it is stored, its block opened if it is sealed."""
        size = len(self)
        position = size + index
        if not 0 <= position < size:
            raise IndexError(f"no scrollback row {index} (there are {size})")
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
        if self._per_cell and self._per_cell[-1] == self.pushed - 1:
            self._per_cell.pop()
        self.pushed -= 1
        return fit_row(self._texts.pop(), self._styles.pop(), columns)

    def _unseal_newest(self) -> None:
        texts, styles = self._open(self._sealed[-1])
        skip = self._dropped if len(self._sealed) == 1 else 0
        self._sealed.pop()
        self._raw = min(self._raw, len(self._sealed))
        if not self._sealed:
            self._dropped = 0
        self._opened = []
        self._texts[:0] = texts[skip:]
        self._styles[:0] = styles[skip:]

    def clear(self) -> None:
        self.epoch += 1
        self._per_cell.clear()
        self._texts.clear()
        self._styles.clear()
        self._sealed.clear()
        self._raw = 0
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


def _pickled(texts: list[Text], styles: list[Styles]) -> bytes:
    """A block's rows as one string. Pickle's own cost is per object, and a flood seals every row it pushes
    (a million for ``seq``), so the common blocks take a shortcut: texts that are all strings go as one string
    (joined by NUL, which no cell holds), styles that are all one go once."""
    joined: str | list[Text] = texts
    try:
        candidate = _SEPARATOR.join(cast(list[str], texts))  # TypeError at a row of wide characters (a tuple)
    except TypeError:
        pass
    else:
        if candidate.count(_SEPARATOR) == len(texts) - 1:
            joined = candidate
    first = styles[0]
    if styles.count(first) != len(styles):
        return pickle.dumps((len(texts), joined, styles), pickle.HIGHEST_PROTOCOL)
    one: Styles | PlainStyle = tuple(first) if isinstance(first, Style) else first  # (pickle reduces a Style slowly)
    return pickle.dumps((len(texts), joined, [one]), pickle.HIGHEST_PROTOCOL)


def _unpickled(data: bytes) -> Opened:
    """A block's rows again, each style the interned object (pickle makes new ones)."""
    count, joined, shared = pickle.loads(data)
    texts: list[Text] = list(joined.split(_SEPARATOR)) if isinstance(joined, str) else joined
    styles: list[Styles] = []
    for entry in shared:
        if not isinstance(entry[0], tuple):  # a style (or its plain tuple): its first field is a colour or None
            styles.append(intern(Style._make(entry)))
        else:  # runs, or a style per cell
            styles.append(tuple(intern(item) if isinstance(item, Style) else item for item in entry))
    return texts, styles if len(styles) == count else styles * count


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
