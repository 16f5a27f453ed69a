"""The flood fast path: lines of plain text scrolling the whole main screen, as ``cat`` or a build prints them.

In a flood nearly every row is written once, from its first column, onto a freshly scrolled blank row,
and leaves for the scrollback a few lines later. The general feed loop pays for that row by row:
slice assignments into the cell lists, a scroll, and a copy of the cell lists into the history. Here
such a row is kept as text and style runs while it is built; only the rows still on the screen at the
end become cell lists, and the history gets the rest as strings (`History.append_text`).

It runs only where the result is the same as the general path's, token for token (the tests compare
both on the same streams): the cursor on the bottom row of a main screen whose scroll region is the
whole screen, right after a line feed scrolled it, auto-wrap on, no insert mode, no DEC graphics. It
takes printable text of one cell a character, SGR sequences, and line feeds (CR LF, LF); at anything
else it writes its rows back and hands the rest to the general loop.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from polter.terminal._history import fit_row
from polter.terminal._style import DEFAULT_STYLE, Style, blank_style, sgr_transition, style_transitions
from polter.terminal._width import NOT_NARROW

if TYPE_CHECKING:
    from polter.terminal._model import ScreenModel

__all__ = ["flood"]


_RUNS_UP_TO = 8
"""Rows of at most this many pieces (text between style changes) are stored as runs at once."""


def flood(screen: ScreenModel, pairs: Iterator[tuple[str, str]]) -> tuple[str, str] | None:
    """Consume ``(text, control)`` pairs from ``pairs`` while they are a flood; return the pair the
    general loop must handle (its text is ``""`` when already written), or None at the end."""
    columns = screen.columns
    transitions = style_transitions()
    not_narrow = NOT_NARROW.search
    newline_mode = screen._newline_mode
    x, style = screen._x, screen._style
    blank_for, blank = style, blank_style(style)  # the erase style the current row was blanked with
    # Finished rows, in the form `History` stores them (see `History.append`).
    texts: list[str] = []
    row_styles: list[Style | tuple[Style | int, ...]] = []
    first_loose = -1  # the first row stored with a style per cell (History.compact has it to do)
    pieces: list[str] = [" " * x] if x else []  # the current row's text so far...
    piece_styles: list[Style] = [blank] if x else []  # ...and each piece's style
    leftover: tuple[str, str] | None = None
    for text, control in pairs:
        if not pieces and control == "\r\n" and style is blank and len(text) <= columns:
            # The commonest row of all: a line of one style, alone on its row (as `_finish` stores it).
            if text.isascii() or not_narrow(text) is None:
                texts.append(text.rstrip(" ") if style == DEFAULT_STYLE else text + " " * (columns - len(text)))
                row_styles.append(style)
                continue
        if text:
            if not (text.isascii() or not_narrow(text) is None):
                leftover = (text, control)
                break
            if x + len(text) <= columns:
                pieces.append(text)
                piece_styles.append(style)
                x += len(text)
            else:
                while text:
                    if x >= columns:  # a pending wrap: the row is done and the next one scrolls in
                        if _finish(pieces, piece_styles, blank, x, columns, texts, row_styles) and first_loose < 0:
                            first_loose = len(texts) - 1
                        if style is not blank_for:
                            blank_for, blank = style, blank_style(style)
                        pieces, piece_styles, x = [], [], 0
                    piece = text[: columns - x]
                    pieces.append(piece)
                    piece_styles.append(style)
                    x += len(piece)
                    text = text[len(piece) :]
        if control[-1] == "m" and control[1] == "[":  # SGR, as in the general loop
            if control == "\x1b[0m" or control == "\x1b[m":
                style = DEFAULT_STYLE
            else:
                new = transitions.get((id(style), control))
                style = new if new is not None else sgr_transition(style, control)
        elif control == "\r\n" or control == "\n":
            if _finish(pieces, piece_styles, blank, x, columns, texts, row_styles) and first_loose < 0:
                first_loose = len(texts) - 1
            if style is not blank_for:
                blank_for, blank = style, blank_style(style)
            if control == "\r\n" or newline_mode:
                x = 0
            pieces, piece_styles = ([" " * x], [blank]) if x else ([], [])  # LF alone keeps the column
        else:
            leftover = ("", control)
            break
    current_texts: list[str] = []
    current_styles: list[Style | tuple[Style | int, ...]] = []
    _finish(pieces, piece_styles, blank, x, columns, current_texts, current_styles)
    _write_back(screen, texts, row_styles, first_loose, (current_texts[0], current_styles[0]))
    screen._x, screen._style = x, style
    return leftover


def _finish(
    pieces: list[str],
    piece_styles: list[Style],
    blank: Style,
    x: int,
    columns: int,
    texts: list[str],
    row_styles: list[Style | tuple[Style | int, ...]],
) -> bool:
    """Store the row built so far (its cells from ``x`` on blank in the erase style ``blank``) as
    `History.append` would; a row of a few styles already as `History.compact` would (runs), one of
    many with a style per cell, as building runs costs more than compacting later (then True)."""
    first = piece_styles[0] if piece_styles else blank
    if piece_styles.count(first) == len(piece_styles) and (x == columns or blank == first):
        text = "".join(pieces)
        texts.append(text.rstrip(" ") if first == DEFAULT_STYLE else text + " " * (columns - x))
        row_styles.append(first)
        return False
    if len(pieces) > _RUNS_UP_TO:
        cells: list[Style] = []
        for piece, piece_style in zip(pieces, piece_styles, strict=True):
            cells += [piece_style] * len(piece)
        if x < columns:
            cells += [blank] * (columns - x)
        texts.append("".join(pieces) + " " * (columns - x))
        row_styles.append(tuple(cells))
        return True
    lengths = [len(piece) for piece in pieces]
    if x < columns:
        pieces, piece_styles = [*pieces, " " * (columns - x)], [*piece_styles, blank]
        lengths.append(columns - x)
    text = "".join(pieces)
    # Trailing blanks of the default style are not kept; a blank of another style is content.
    end = len(text.rstrip(" "))
    position = columns
    for style, length in zip(reversed(piece_styles), reversed(lengths), strict=True):
        if style != DEFAULT_STYLE:
            end = max(end, position)
            break
        position -= length
    runs: list[Style | int] = []
    previous: Style | None = None
    position = 0
    for style, length in zip(piece_styles, lengths, strict=True):
        if position + length > end:
            if position >= end:
                break
            length = end - position
        if style is previous or style == previous:
            runs[-1] += length  # type: ignore[operator]
        else:
            runs.append(style)
            runs.append(length)
            previous = style
        position += length
    texts.append(text[:end])
    if len(runs) <= 2:
        row_styles.append(runs[0] if runs else DEFAULT_STYLE)  # type: ignore[arg-type]
    elif len(runs) < end:
        row_styles.append(tuple(runs))
    else:  # runs no shorter than a style per cell
        cells = []
        for index in range(0, len(runs), 2):
            cells += [runs[index]] * runs[index + 1]  # type: ignore[list-item, operator]
        row_styles.append(tuple(cells))
    return False


def _write_back(
    screen: ScreenModel,
    texts: list[str],
    row_styles: list[Style | tuple[Style | int, ...]],
    first_loose: int,
    current: tuple[str, Style | tuple[Style | int, ...]],
) -> None:
    """Scroll the screen by one row per finished row, as the general path would have: the rows that
    leave the top go to the history, the newest stay on the screen, the current one at the bottom."""
    columns = screen.columns
    chars, styles = screen._chars, screen._styles
    history = screen._history
    scrolled = len(texts)
    kept = len(chars) - 1  # the rows above the current one
    for old_chars, old_styles in zip(chars[: min(scrolled, kept)], styles[: min(scrolled, kept)], strict=True):
        history.append(old_chars, old_styles)
    to_history = max(0, scrolled - kept)
    history.extend(texts[:to_history], row_styles[:to_history], first_loose if first_loose < to_history else -1)
    new_chars = chars[scrolled:kept]
    new_styles = styles[scrolled:kept]
    for text, row_style in (*zip(texts[to_history:], row_styles[to_history:], strict=True), current):
        row_chars, row_cells = fit_row(text, row_style, columns)
        new_chars.append(row_chars)
        new_styles.append(row_cells)
    chars[:] = new_chars
    styles[:] = new_styles
    screen._all_dirty = True
