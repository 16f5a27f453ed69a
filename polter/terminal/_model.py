"""The screen model: pages of cells, the cursor, scroll regions and scrollback. No parsing here.

A row is two parallel lists of ``columns`` items: the characters (one ``str`` per cell; a wide
character sits in its first cell and its second cell holds ``""``; combining marks join the
cell's string) and the `Style` of each cell. Slice assignment lets a run of text land in a row
in C, and scrolling moves whole rows. Rows that scroll off the top of the main page go to the
scrollback (`polter.terminal._history`).

The cursor column may equal ``columns``: that is the "pending wrap" state after the last column
was written with auto-wrap on; the next printable character wraps first (xterm, tmux and pyte
all behave this way). Operations that move the cursor clamp it back into the row.
"""

from __future__ import annotations

import unicodedata
from typing import TYPE_CHECKING

from pyte.charsets import VT100_MAP

from polter.terminal._history import History
from polter.terminal._page import Page, SavedCursor
from polter.terminal._style import DEFAULT_STYLE, Style, blank_style
from polter.terminal._width import NOT_NARROW, cluster_width, joins

if TYPE_CHECKING:
    from polter.terminal._flood import FloodRow

__all__ = ["ScreenModel"]


class ScreenModel:
    """Cells, cursor, margins and scrollback, with the operations a terminal performs on them."""

    def __init__(self, columns: int, lines: int, scrollback: int) -> None:
        if columns < 1 or lines < 1:
            raise ValueError(f"a screen needs at least 1×1 cells, not {columns}×{lines}")
        self.columns = columns
        self.lines = lines
        self._history = History(scrollback)
        self._dirty: set[int] = set()
        self._flood_rows: dict[int, FloodRow] = {}
        """The screen rows the flood fast path made, by the id of their cell lists (see `_flood._write_back`)."""
        self._all_dirty = True
        self._reset_state()

    def _reset_state(self) -> None:
        columns, lines = self.columns, self.lines
        self._blank_chars = [" "] * columns
        self._blank_styles_row = [DEFAULT_STYLE] * columns
        self._main = Page(columns, lines)
        self._alt = Page(columns, lines)
        self._page = self._main
        self._chars = self._main.chars
        self._styles = self._main.styles
        self._x = 0
        self._y = 0
        self._style = DEFAULT_STYLE
        self._top = 0
        self._bottom = lines - 1
        self._autowrap = True
        self._origin = False
        self._insert = False
        self._newline_mode = False
        self._tabs = set(range(8, columns, 8))
        self._charsets = ["B", "B"]  # G0, G1: "B" US-ASCII, "0" DEC special graphics
        self._shift = 0  # 0: G0 in GL (SI), 1: G1 in GL (SO)
        self._translate: dict[int, str] | None = None
        self._plain_text = True  # no DEC graphics and no insert mode: the feed loop's fast path
        self._all_dirty = True

    # -- printing ----------------------------------------------------------------------------
    def draw(self, text: str) -> None:
        """Print ``text`` (no control characters) at the cursor with the current style."""
        if self._translate is not None:
            text = text.translate(self._translate)
        if text.isascii() or NOT_NARROW.search(text) is None:
            self._draw_narrow(text)
            return
        start = 0
        for match in NOT_NARROW.finditer(text):
            if match.start() > start:
                self._draw_narrow(text[start : match.start()])
            self._draw_special(match.group())
            start = match.end()
        if start < len(text):
            self._draw_narrow(text[start:])

    def _draw_special(self, char: str) -> None:
        """Print a character that is not simply one cell: it joins the cluster in the previous
        cell (a combining mark, VS16, a joiner, the pictograph after a joiner, a second regional
        indicator…) or starts a cluster of its own of width 1 or 2."""
        previous = self._previous_cell()
        if previous is not None:
            chars = self._chars[self._y]
            cluster = chars[previous]
            if joins(cluster, char):
                self._extend(previous, unicodedata.normalize("NFC", cluster + char))
                return
        width = cluster_width(char)
        if width == 2:
            self._draw_wide(char)
        elif width == 1:
            self._draw_narrow(char)
        # A zero-width character with nothing to join (at the start of a row, say) is dropped.

    def _previous_cell(self) -> int | None:
        """The column of the cell just before the cursor (the first half if it is wide)."""
        x = min(self._x, self.columns) - 1
        if x < 0:
            return None
        if x > 0 and self._chars[self._y][x] == "":
            x -= 1
        return x

    def _extend(self, x: int, cluster: str) -> None:
        """Replace the cluster at column ``x`` of the cursor row by the longer ``cluster``.

        A narrow cell that becomes wide (``❤`` + VS16) takes the next cell too, as modern
        terminals and the programs' own width libraries expect, if the cursor is right after it
        and the row has room; otherwise the joining character is dropped (``❤`` stays in text
        presentation), so that no cell ever holds more than its width."""
        y = self._y
        chars, styles = self._chars[y], self._styles[y]
        columns = self.columns
        if cluster_width(cluster) == 2 and not (x + 1 < columns and chars[x + 1] == ""):
            if self._x != x + 1 or x + 1 >= columns:
                return
            if x + 2 < columns and chars[x + 2] == "":
                chars[x + 2] = " "  # the cell taken was the first half of a wide character
            chars[x + 1] = ""
            styles[x + 1] = styles[x]
            self._x = x + 2 if (x + 2 < columns or self._autowrap) else columns - 1
        chars[x] = cluster
        self._dirty.add(y)

    def _draw_narrow(self, text: str) -> None:
        """Print characters that take one cell each (the fast path: slice assignments)."""
        columns = self.columns
        x = self._x
        count = len(text)
        end = x + count
        if end <= columns and not self._insert:
            y = self._y
            chars = self._chars[y]
            if chars[x] == "":
                chars[x - 1] = " "  # overwriting the second half of a wide character
            chars[x:end] = text
            self._styles[y][x:end] = [self._style] * count
            if end < columns:
                if chars[end] == "":
                    chars[end] = " "
                self._x = end
            else:
                self._x = end if self._autowrap else columns - 1
            self._dirty.add(y)
            return
        while text:
            x = self._x
            if x >= columns:
                if self._autowrap:
                    self._x = x = 0
                    self.index()
                else:
                    self._x = x = columns - 1
            room = columns - x
            if len(text) > room and not self._autowrap:
                # Without auto-wrap each character past the edge overwrites the last column.
                piece, text = text[: room - 1] + text[-1], ""
            else:
                piece, text = text[:room], text[room:]
            if self._insert:
                self.insert_characters(len(piece))
            self._put(x, piece)

    def _put(self, x: int, piece: str) -> None:
        """Write ``piece`` (narrow characters that fit) at column ``x`` of the cursor row."""
        y = self._y
        end = x + len(piece)
        chars = self._chars[y]
        if chars[x] == "":
            chars[x - 1] = " "
        chars[x:end] = [*piece]
        self._styles[y][x:end] = [self._style] * len(piece)
        if end < self.columns and chars[end] == "":
            chars[end] = " "
        self._x = end if (end < self.columns or self._autowrap) else self.columns - 1
        self._dirty.add(y)

    def _draw_wide(self, char: str) -> None:
        columns = self.columns
        if columns < 2:
            return  # a one-column screen cannot show a two-cell character
        x = self._x
        if x >= columns - 1:
            if self._autowrap:  # the last column stays as it is
                self._x = x = 0
                self.index()
            else:
                self._x = x = columns - 2
        if self._insert:
            self.insert_characters(2)
        y = self._y
        chars, styles = self._chars[y], self._styles[y]
        if chars[x] == "":
            chars[x - 1] = " "
        chars[x] = char
        chars[x + 1] = ""
        styles[x] = styles[x + 1] = self._style
        if x + 2 < columns and chars[x + 2] == "":
            chars[x + 2] = " "
        self._x = x + 2 if (x + 2 < columns or self._autowrap) else columns - 1
        self._dirty.add(y)

    # -- line feeds and scrolling ------------------------------------------------------------
    def index(self) -> None:
        """Move down one row, scrolling the region up at its bottom margin (IND, LF)."""
        y = self._y
        if y != self._bottom:
            if y < self.lines - 1:
                self._y = y + 1
        elif self._top or y != self.lines - 1 or self._page is not self._main:
            self.scroll_up(1)
        else:
            # The hot case of a flood: the whole main screen scrolls one row into history. The
            # row's lists are reused for the new bottom row (history keeps immutable copies).
            row_chars = self._chars.pop(0)
            row_styles = self._styles.pop(0)
            self._history.append(row_chars, row_styles)
            row_chars[:] = self._blank_chars
            row_styles[:] = self._blank_styles()
            self._chars.append(row_chars)
            self._styles.append(row_styles)
            self._all_dirty = True

    def _blank_styles(self) -> list[Style]:
        """A row's worth of the current erase style (cached: consecutive scrolls share it)."""
        blank = blank_style(self._style)
        cached = self._blank_styles_row
        if cached[0] is not blank or len(cached) != self.columns:
            cached = self._blank_styles_row = [blank] * self.columns
        return cached

    def reverse_index(self) -> None:
        """Move up one row, scrolling the region down at its top margin (RI)."""
        y = self._y
        if y == self._top:
            self.scroll_down(1)
        elif y > 0:
            self._y = y - 1

    def linefeed(self) -> None:
        self.index()
        if self._newline_mode:
            self._x = 0

    def next_line(self) -> None:
        self._x = 0
        self.index()

    def carriage_return(self) -> None:
        self._x = 0

    def scroll_up(self, count: int, top: int | None = None) -> None:
        """Scroll rows ``top``…bottom margin up by ``count``; lines leaving a full-screen region of
        the main page go to history (as in tmux)."""
        top = self._top if top is None else top
        bottom = self._bottom
        count = min(count, bottom - top + 1)
        if count <= 0:
            return
        chars, styles = self._chars, self._styles
        blank = self._blank_styles()
        keep = top == 0 and bottom == self.lines - 1 and self._page is self._main
        for _ in range(count):
            row_chars = chars.pop(top)
            row_styles = styles.pop(top)
            if keep:
                self._history.append(row_chars, row_styles)
            # History keeps immutable copies, so the row's lists are reused (fewer allocations,
            # fewer GC passes in a flood).
            row_chars[:] = self._blank_chars
            row_styles[:] = blank
            chars.insert(bottom, row_chars)
            styles.insert(bottom, row_styles)
        self._all_dirty = True

    def scroll_down(self, count: int, top: int | None = None) -> None:
        """Scroll rows ``top``…bottom margin down by ``count`` (new blank rows at ``top``)."""
        top = self._top if top is None else top
        bottom = self._bottom
        count = min(count, bottom - top + 1)
        if count <= 0:
            return
        chars, styles = self._chars, self._styles
        blank = self._blank_styles()
        for _ in range(count):
            row_chars = chars.pop(bottom)
            row_styles = styles.pop(bottom)
            row_chars[:] = self._blank_chars
            row_styles[:] = blank
            chars.insert(top, row_chars)
            styles.insert(top, row_styles)
        self._all_dirty = True

    # -- cursor movement ---------------------------------------------------------------------
    # Vertical moves keep a pending wrap (as tmux and pyte): the next character still wraps.
    def _column(self) -> int:
        """The cursor column clamped into the row (leaving the pending-wrap state)."""
        return min(self._x, self.columns - 1)

    def cursor_up(self, count: int) -> None:
        top = self._top if self._y >= self._top else 0
        self._y = max(top, self._y - count)

    def cursor_down(self, count: int) -> None:
        bottom = self._bottom if self._y <= self._bottom else self.lines - 1
        self._y = min(bottom, self._y + count)

    def cursor_forward(self, count: int) -> None:
        self._x = min(self.columns - 1, self._x + count)

    def cursor_back(self, count: int) -> None:
        """CUB (and BS); from the pending-wrap state it counts from one past the last column, so a
        single step lands on the last column (as tmux and pyte)."""
        self._x = max(0, min(self._x - count, self.columns - 1))

    def cursor_to_column(self, column: int) -> None:
        """Move to ``column`` (0-based), clamped."""
        self._x = max(0, min(column, self.columns - 1))

    def cursor_to_line(self, line: int) -> None:
        """Move to ``line`` (0-based, relative to the top margin in origin mode), clamped."""
        if self._origin:
            self._y = max(self._top, min(self._top + line, self._bottom))
        else:
            self._y = max(0, min(line, self.lines - 1))

    def cursor_position(self, line: int, column: int) -> None:
        self.cursor_to_line(line)
        self.cursor_to_column(column)

    def tab(self, count: int = 1) -> None:
        x = self._column()
        for _ in range(count):
            stops = [stop for stop in self._tabs if stop > x]
            x = min(stops) if stops else self.columns - 1
        self._x = x

    def back_tab(self, count: int = 1) -> None:
        x = self._column()
        for _ in range(count):
            stops = [stop for stop in self._tabs if stop < x]
            x = max(stops) if stops else 0
        self._x = x

    def backspace(self) -> None:
        self.cursor_back(1)

    def set_margins(self, top: int, bottom: int) -> None:
        """DECSTBM with 0-based inclusive rows; an invalid region is ignored. Homes the cursor."""
        bottom = min(bottom, self.lines - 1)
        if top >= bottom:
            return
        self._top, self._bottom = top, bottom
        self.cursor_position(0, 0)

    # -- erasing, inserting, deleting --------------------------------------------------------
    def _blank_cells(self, y: int, start: int, end: int) -> None:
        """Blank columns ``start``…``end``-1 of row ``y`` (current background), mending wide chars."""
        if start >= end:
            return
        chars = self._chars[y]
        if chars[start] == "" and start > 0:
            chars[start - 1] = " "
        chars[start:end] = [" "] * (end - start)
        self._styles[y][start:end] = [blank_style(self._style)] * (end - start)
        if end < self.columns and chars[end] == "":
            chars[end] = " "
        self._dirty.add(y)

    def _blank_row(self, y: int) -> None:
        self._chars[y] = [" "] * self.columns
        self._styles[y] = [blank_style(self._style)] * self.columns
        self._dirty.add(y)

    def erase_in_line(self, mode: int) -> None:
        x = self._column()
        if mode == 0:
            # From the pending-wrap state this erases nothing (as tmux and pyte; xterm would
            # erase the last column).
            self._blank_cells(self._y, self._x, self.columns)
        elif mode == 1:
            self._blank_cells(self._y, 0, x + 1)
        elif mode == 2:
            self._blank_row(self._y)

    def erase_in_display(self, mode: int) -> None:
        if mode == 0:
            self.erase_in_line(0)
            for y in range(self._y + 1, self.lines):
                self._blank_row(y)
        elif mode == 1:
            for y in range(self._y):
                self._blank_row(y)
            self.erase_in_line(1)
        elif mode == 2:
            if self._page is self._main:
                self._screen_to_history()
            for y in range(self.lines):
                self._blank_row(y)
        elif mode == 3:
            self._history.clear()
            self._all_dirty = True

    def _screen_to_history(self) -> None:
        """Before clearing the main page, keep its rows up to the last non-blank one (as tmux)."""
        last = -1
        for y in range(self.lines - 1, -1, -1):
            chars = self._chars[y]
            if chars.count(" ") != len(chars) or any(s is not DEFAULT_STYLE for s in self._styles[y]):
                last = y
                break
        for y in range(last + 1):
            self._history.append(self._chars[y], self._styles[y])

    def erase_characters(self, count: int) -> None:
        x = self._x  # nothing from the pending-wrap state, as tmux
        self._blank_cells(self._y, x, min(self.columns, x + max(1, count)))

    def _edit_at_cursor(self, count: int) -> tuple[int, int, list[str], list[Style]] | None:
        """For ICH/DCH: (column, count clamped to the row, the row's chars and styles); None in
        the pending-wrap state, where tmux and pyte do nothing. Splits a wide character there."""
        x = self._x
        if x >= self.columns:
            return None
        y = self._y
        chars = self._chars[y]
        if chars[x] == "" and x > 0:
            chars[x - 1] = chars[x] = " "
        self._dirty.add(y)
        return x, min(max(1, count), self.columns - x), chars, self._styles[y]

    def insert_characters(self, count: int) -> None:
        """ICH: shift the rest of the row right by ``count`` blank cells."""
        edit = self._edit_at_cursor(count)
        if edit is None:
            return
        x, count, chars, styles = edit
        chars[x:x] = [" "] * count
        styles[x:x] = [blank_style(self._style)] * count
        if chars[self.columns] == "":
            chars[self.columns - 1] = " "  # a wide character whose second half is pushed off
        del chars[self.columns :]
        del styles[self.columns :]

    def delete_characters(self, count: int) -> None:
        """DCH: delete ``count`` cells at the cursor; the rest of the row moves left."""
        edit = self._edit_at_cursor(count)
        if edit is None:
            return
        x, count, chars, styles = edit
        del chars[x : x + count]
        del styles[x : x + count]
        chars.extend([" "] * count)
        styles.extend([blank_style(self._style)] * count)
        if chars[x] == "":
            chars[x] = " "  # the first half of this wide character was deleted

    def insert_lines(self, count: int) -> None:
        """IL: insert blank rows at the cursor row (inside the scroll region only)."""
        if self._top <= self._y <= self._bottom:
            self.scroll_down(max(1, count), top=self._y)
            self._x = 0

    def delete_lines(self, count: int) -> None:
        """DL: delete rows at the cursor row (inside the scroll region only)."""
        if self._top <= self._y <= self._bottom:
            self.scroll_up(max(1, count), top=self._y)
            self._x = 0

    def repeat_last(self, count: int) -> None:
        """REP: repeat the character before the cursor."""
        x = min(self._x, self.columns) - 1
        if x >= 0:
            char = self._chars[self._y][x] or (self._chars[self._y][x - 1] if x > 0 else "")
            if char:
                self.draw(char * min(max(1, count), self.columns * self.lines))

    def alignment_display(self) -> None:
        """DECALN: fill the screen with ``E`` (a test pattern)."""
        for y in range(self.lines):
            self._chars[y] = ["E"] * self.columns
            self._styles[y] = [DEFAULT_STYLE] * self.columns
        self._top, self._bottom = 0, self.lines - 1
        self._x = self._y = 0
        self._all_dirty = True

    # -- saved cursor, pages -----------------------------------------------------------------
    def save_cursor(self) -> None:
        self._page.saved = SavedCursor(self._x, self._y, self._style, self._origin, self._charsets, self._shift)

    def restore_cursor(self) -> None:
        saved = self._page.saved
        if saved is None:
            self._x = self._y = 0
            self._style = DEFAULT_STYLE
            self._origin = False
            self._charsets = ["B", "B"]
            self._shift = 0
        else:
            self._x = min(saved.x, self.columns - 1)  # clamped (the pending wrap is lost), as tmux and pyte
            self._y = min(saved.y, self.lines - 1)
            self._style = saved.style
            self._origin = saved.origin
            self._charsets = list(saved.charsets)
            self._shift = saved.shift
        self._update_translate()

    def _switch_page(self, page: Page) -> None:
        self._page = page
        self._chars = page.chars
        self._styles = page.styles
        self._all_dirty = True

    # -- character sets ----------------------------------------------------------------------
    def designate_charset(self, slot: int, code: str) -> None:
        self._charsets[slot] = code
        self._update_translate()

    def shift_out(self) -> None:
        self._shift = 1
        self._update_translate()

    def shift_in(self) -> None:
        self._shift = 0
        self._update_translate()

    def _update_translate(self) -> None:
        self._translate = _DEC_GRAPHICS if self._charsets[self._shift] == "0" else None
        self._plain_text = self._translate is None and not self._insert

    def set_insert_mode(self, on: bool) -> None:
        """IRM (``CSI 4 h``): printed characters push the rest of the row right."""
        self._insert = on
        self._plain_text = self._translate is None and not on

    # -- resizing ----------------------------------------------------------------------------
    def resize(self, columns: int, lines: int) -> None:
        """Change the size. Like tmux: shrinking drops blank rows below the cursor first and then
        moves top rows into history; growing brings rows back from history. No reflow."""
        if columns < 1 or lines < 1:
            raise ValueError(f"a screen needs at least 1×1 cells, not {columns}×{lines}")
        if columns != self.columns:
            for page in (self._main, self._alt):
                page.resize_columns(columns)
            self._blank_chars = [" "] * columns
            self._tabs = {stop for stop in self._tabs if stop < columns} | set(
                range(max(8, self.columns - self.columns % 8), columns, 8)
            )
            self.columns = columns
        if lines != self.lines:
            for page in (self._main, self._alt):
                # The shown page keeps the cursor's row; the hidden one its saved cursor's, if any.
                if page is self._page:
                    cursor_y = self._y
                else:
                    cursor_y = page.saved.y if page.saved is not None else 0
                history = self._history if page is self._main else None
                shift = page.resize_lines(lines, self.columns, cursor_y, history)
                if page is self._page:
                    self._y += shift
                if page.saved is not None:
                    page.saved.y = max(0, min(page.saved.y + shift, lines - 1))
            self.lines = lines
        self._top, self._bottom = 0, self.lines - 1
        self._x = min(self._x, self.columns - 1)
        self._y = max(0, min(self._y, self.lines - 1))
        self._chars = self._page.chars
        self._styles = self._page.styles
        self._all_dirty = True


#: DEC special graphics (``ESC ( 0``): line drawing, as in pyte's VT100 map.
def _dec_graphics() -> dict[int, str]:
    return {code: VT100_MAP[code] for code in range(0x5F, 0x7F) if VT100_MAP[code] != chr(code)}


_DEC_GRAPHICS = _dec_graphics()
