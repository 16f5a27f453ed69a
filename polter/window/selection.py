"""Text selected with the mouse in a pane: which characters, their text, and how they are drawn.

Lines are numbered from the oldest line of scrollback (0) to the last row of the screen, so a
selection stays on its text while the view scrolls through the history. As everywhere in Textual's
selection, x counts characters of the row's text (a wide character is one), not cells.
"""

from __future__ import annotations

import re

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Offset
from textual.selection import Selection
from textual.strip import Strip

from polter.window.terminal_source import ScreenReader

__all__ = ["highlight", "line_number", "selected_text", "word_or_line"]


def line_number(screen: ScreenReader, row: int) -> int:
    """The selection's number for ``row`` (negative rows are scrollback, as in ``TerminalScreen.line``)."""
    return screen.history_size + row


def selected_text(screen: ScreenReader, selection: Selection) -> str:
    """The selected cells' characters, one line per row, trailing blanks dropped as a terminal does."""
    last = screen.history_size + screen.lines - 1
    first_line = selection.start.y if selection.start is not None else 0
    last_line = min(selection.end.y if selection.end is not None else last, last)
    lines = []
    for number in range(max(0, first_line), last_line + 1):
        span = selection.get_span(number)
        if span is None:
            continue
        start, end = span
        text = screen.text(number - screen.history_size)
        lines.append(text[start : None if end == -1 else end].rstrip())
    return "\n".join(lines)


def highlight(strip: Strip, text: str, span: tuple[int, int] | None, style: Style) -> Strip:
    """``strip`` (the row whose characters are ``text``) with the characters of ``span`` (end -1: to
    the end of the line) drawn in ``style``."""
    if span is None:
        return strip
    length = strip.cell_length
    start, end = span
    start, end = cell_len(text[:start]), length if end == -1 else min(cell_len(text[:end]), length)
    if start >= end:
        return strip
    before, chosen, after = strip.divide([start, end, length])
    marked = Strip([Segment(text, (own or Style()) + style) for text, own, _ in chosen], chosen.cell_length)
    return Strip.join([before, marked, after])


_WORD = re.compile(r"\S+")


def word_or_line(text: str, number: int, cell: int, clicks: int) -> Selection | None:
    """What a double click (the word under ``cell``: a run of non-blanks, as xterm by default) or a
    triple click (the line, trailing blanks left out) selects in line ``number`` whose characters are
    ``text``; None on a blank."""
    index = column = 0
    while index < len(text) and column + cell_len(text[index]) <= cell:  # the character at that cell
        column += cell_len(text[index])
        index += 1
    if clicks >= 3:
        end = len(text.rstrip())
        return Selection(Offset(0, number), Offset(end, number)) if end else None
    for word in _WORD.finditer(text):
        if word.start() <= index < word.end():
            return Selection(Offset(word.start(), number), Offset(word.end(), number))
    return None
