"""Polter's terminal screen engine: raw PTY bytes in; styled rows, cursor, modes and replies out.

It imports no Textual: the pane widget renders what this exposes. The engine has three layers:
`_parser` splits bytes into text and whole control sequences (across reads), `_controls`
interprets the sequences (and hands plain escape sequences to pyte's parser), and `_model` keeps
the cells. The feed loop below is the hot path: a text run and the commonest sequences cost a
dict lookup and a few slice assignments, not a call per character.

Not thread-safe: feed, resize and the readers must run on one thread (or under one lock).
"""

from __future__ import annotations

from collections.abc import Callable
from operator import length_hint

from polter.terminal._controls import ControlSequences
from polter.terminal._cursor import Cursor
from polter.terminal._flood import flood, flood_ready
from polter.terminal._parser import SENTINEL, STRING_OPENERS, Tokenizer, split_complete
from polter.terminal._style import DEFAULT_STYLE, Style, sgr_transition, style_transitions
from polter.terminal._width import NOT_NARROW

__all__ = ["DEFAULT_STYLE", "Cursor", "Style", "TerminalScreen"]


class TerminalScreen(ControlSequences):
    """A terminal screen of ``columns`` × ``lines`` cells with scrollback.

    ``reply`` receives the bytes the terminal answers to queries (cursor position, device
    attributes, DECRQM, XTVERSION, OSC 10/11 colours); write them to the PTY.

    Besides the agreed API: ``icon_title`` (OSC 1), ``cwd`` (OSC 7), ``bell_count``, ``notifications``
    (the desktop notifications the program asked for: OSC 9, 777, 99),
    ``foreground_color`` / ``background_color`` (``#rrggbb``, answered to OSC 10/11; set them
    from the theme), ``scrollback_limit``, and the mode flags ``alternate_scroll`` (1007),
    ``auto_wrap`` (7), ``origin_mode`` (6) and ``reverse_video`` (DECSCNM, 5).
    The kitty keyboard protocol is not implemented: ``CSI ? u`` gets no reply, so programs
    fall back to legacy keys (their DA1 sentinel is answered).
    """

    def __init__(
        self,
        columns: int,
        lines: int,
        *,
        scrollback: int = 10_000,
        reply: Callable[[bytes], None] | None = None,
    ) -> None:
        super().__init__(columns, lines, scrollback, reply)
        self._tokenizer = Tokenizer(self._max_sequence)

    # -- input -------------------------------------------------------------------------------
    #: Whether runs of plain lines take the flood fast path (`polter.terminal._flood`); the tests turn it
    #: off to compare both paths on the same streams.
    flood_path = True

    def feed(self, data: bytes) -> None:
        """Consume raw PTY output, in any chunking."""
        head, text = self._tokenizer.take(data)
        if head:
            self._feed_pairs(head, stop=False)
        if not self.flood_path:
            if text:
                self._feed_text(text, stop=False)
            return
        # The flood takes lines while it can. A line it does not take goes to the general loop alone when it can
        # be cut off (it holds no string sequence, which could hold a line feed); otherwise the rest of the text
        # goes, and may hand back once where the flood can take over again: no text is split more than twice.
        position, end = 0, len(text)
        stop = True
        while position < end:
            start = position
            position = flood(self, text, position)
            if position == end:
                return
            cut = _line_end(text, position) if position > start else 0
            if cut:
                self._feed_text(text[position:cut], stop=False)
                position = cut
                continue
            consumed = self._feed_text(text[position:] if position else text, stop=stop)
            if consumed < 0:
                return
            position += consumed
            stop = False

    def _feed_text(self, text: str, *, stop: bool) -> int:
        """The general loop over ``text`` (no unfinished sequence at its end); see `_feed_pairs`."""
        parts = split_complete(text)
        parts.append(SENTINEL)
        return self._feed_pairs(parts, stop=stop)

    def _feed_pairs(self, parts: list[str], *, stop: bool) -> int:
        """The general feed loop over ``parts``, ``[text, control, …]``. With ``stop``, it stops right after a line
        feed that leaves the screen as the flood fast path takes it, and returns how many characters of the
        parts it consumed; else it consumes them all and returns -1."""
        iterator = iter(parts)
        pairs = zip(iterator, iterator, strict=False)
        fast = self._fast
        transitions = style_transitions()
        not_narrow = NOT_NARROW.search
        columns = self.columns
        last_line = self.lines - 1
        mark = self._dirty.add
        marked = -1  # the row last added to the dirty set (the set only grows during a feed)
        # The cursor, style and current row live in locals while only text and SGR sequences
        # come (neither moves to another row); they are written back before anything else runs.
        x, y, style = self._x, self._y, self._style
        chars, styles = self._chars[y], self._styles[y]
        plain, autowrap = self._plain_text, self._autowrap
        for text, control in pairs:
            if text:
                end = x + len(text)
                # Inlined `ScreenModel._put` for the commonest case: narrow text that fits on the
                # cursor row, no insert mode, no DEC graphics. Everything else goes to `draw`.
                if end <= columns and plain and (text.isascii() or not_narrow(text) is None):
                    if chars[x] == "":
                        chars[x - 1] = " "  # overwriting the second half of a wide character
                    if end - x == 1:  # often a lone space between two coloured runs
                        chars[x] = text
                        styles[x] = style
                    else:
                        chars[x:end] = [*text]  # unpacking is faster than assigning the str
                        styles[x:end] = [style] * (end - x)
                    if end < columns:
                        if chars[end] == "":
                            chars[end] = " "
                        x = end
                    else:
                        x = end if autowrap else columns - 1
                    if y != marked:
                        mark(y)
                        marked = y
                else:
                    self._x, self._style = x, style
                    self.draw(text)
                    x, y = self._x, self._y
                    chars, styles = self._chars[y], self._styles[y]
            if control[-1] == "m" and control[1] == "[":  # SGR, the commonest sequence
                if control == "\x1b[0m" or control == "\x1b[m":
                    style = DEFAULT_STYLE
                else:
                    new = transitions.get((id(style), control))
                    style = new if new is not None else sgr_transition(style, control)
            else:
                self._x, self._style = x, style
                handler = fast.get(control)
                if handler is not None:
                    handler()
                else:
                    self._control(control)
                if stop and y == last_line and (control == "\r\n" or control == "\n") and flood_ready(self):
                    return sum(map(len, parts[: len(parts) - length_hint(iterator)]))
                x, y, style = self._x, self._y, self._style
                chars, styles = self._chars[y], self._styles[y]
                plain, autowrap = self._plain_text, self._autowrap
        self._x, self._style = x, style
        return -1

    # -- output ------------------------------------------------------------------------------
    @property
    def history_size(self) -> int:
        """Rows in the scrollback; `line` takes ``-history_size`` … ``-1`` for them."""
        return len(self._history)

    @property
    def history_pushed(self) -> int:
        """Rows ever pushed into the scrollback: row ``-k`` is number ``history_pushed - k``."""
        return self._history.pushed

    def compact_history(self, budget: int = 2000) -> int:
        """Store scrollback rows more compactly (see ``History.compact``); how many are left to do."""
        return self._history.compact(budget)

    @property
    def history_epoch(self) -> int:
        """Changes when scrollback rows were cleared or taken back (numbers may then name other rows)."""
        return self._history.epoch

    @property
    def scrollback_limit(self) -> int:
        return self._history.limit

    def line(self, y: int) -> list[tuple[str, Style]]:
        """Row ``y`` as runs of (text, style) covering exactly ``columns`` cells.

        ``y`` in ``range(-history_size, lines)``; negative rows are scrollback (-1 the newest).
        A wide character appears once in the text and takes two cells.
        """
        columns = self.columns
        if 0 <= y < self.lines:
            chars, styles = self._chars[y], self._styles[y]
        elif -len(self._history) <= y < 0:
            chars, styles = self._history.row(y, columns)
        else:
            raise IndexError(f"row {y} is outside -{len(self._history)}…{self.lines - 1}")
        runs: list[tuple[str, Style]] = []
        start = 0
        current = styles[0]
        for x in range(1, columns):
            style = styles[x]
            if style is not current and style != current:
                runs.append(("".join(chars[start:x]), current))
                start = x
                current = style
        runs.append(("".join(chars[start:columns]), current))
        return runs

    def text(self, y: int) -> str:
        """The characters of row ``y`` (numbered as in :meth:`line`; a wide character once, trailing blanks kept)."""
        if 0 <= y < self.lines:
            chars = self._chars[y]
        elif -len(self._history) <= y < 0:
            chars, _ = self._history.row(y, self.columns)
        else:
            raise IndexError(f"row {y} is outside -{len(self._history)}…{self.lines - 1}")
        return "".join(chars)

    def display(self) -> list[str]:
        """The visible text, one string per row (trailing blanks kept)."""
        return ["".join(chars) for chars in self._chars]

    def take_dirty(self) -> set[int] | None:
        """Rows changed since the last call; None means every row (after a scroll or switch)."""
        if self._all_dirty:
            self._all_dirty = False
            self._dirty = set()
            return None
        dirty = self._dirty
        self._dirty = set()
        return dirty

    @property
    def cursor(self) -> Cursor:
        return Cursor(
            min(self._x, self.columns - 1),
            self._y,
            self._cursor_visible,
            self._cursor_shape,
            self._cursor_blinking,
        )

    # -- modes ---------------------------------------------------------------------------------
    @property
    def bracketed_paste(self) -> bool:
        return 2004 in self._modes

    @property
    def application_cursor_keys(self) -> bool:
        return 1 in self._modes

    @property
    def application_keypad(self) -> bool:
        return self._application_keypad

    @property
    def mouse_tracking(self) -> int:
        """0, or the mouse mode in force: 9 (X10: presses only, no modifiers), 1000 (presses and
        releases), 1002 (+ drags) or 1003 (+ all motion)."""
        return self._mouse

    @property
    def mouse_sgr(self) -> bool:
        return 1006 in self._modes

    @property
    def focus_events(self) -> bool:
        return 1004 in self._modes

    @property
    def synchronized_output(self) -> bool:
        return 2026 in self._modes

    @property
    def alternate_screen(self) -> bool:
        return self._alternate

    @property
    def alternate_scroll(self) -> bool:
        """DEC 1007: the wheel should send cursor keys while the alternate screen is shown."""
        return 1007 in self._modes

    @property
    def auto_wrap(self) -> bool:
        return self._autowrap

    @property
    def origin_mode(self) -> bool:
        return self._origin

    @property
    def reverse_video(self) -> bool:
        """DECSCNM (``CSI ? 5 h``): the renderer swaps default colours for the whole screen."""
        return 5 in self._modes


def _line_end(text: str, start: int) -> int:
    """Where the line of ``text`` at ``start`` ends, after its line feed: a place the tokenizer may cut the text
    (0 if it has no line feed, or holds the start of a string sequence, which could hold line feeds)."""
    newline = text.find("\n", start)
    if newline < 0:
        return 0
    escape = text.find("\x1b", start, newline)
    while escape >= 0:
        if text[escape + 1] in STRING_OPENERS:
            return 0
        escape = text.find("\x1b", escape + 1, newline)
    return newline + 1
