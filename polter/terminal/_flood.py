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
from typing import TYPE_CHECKING, cast

from polter.terminal._history import fit_row
from polter.terminal._style import DEFAULT_STYLE, Style, blank_style, sgr_transition, style_transitions
from polter.terminal._width import NOT_NARROW

if TYPE_CHECKING:
    from polter.terminal._model import ScreenModel

__all__ = ["flood"]


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
    pieces: list[str] = [" " * x] if x else []  # the current row's text so far...
    runs: list[Style | int] = [blank, x] if x else []  # ...and its styles as runs: (style, count, style, count, ...)
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
                _add_run(runs, style, len(text))
                x += len(text)
            else:
                while text:
                    if x >= columns:  # a pending wrap: the row is done and the next one scrolls in
                        _finish(pieces, runs, blank, x, columns, texts, row_styles)
                        if style is not blank_for:
                            blank_for, blank = style, blank_style(style)
                        pieces, runs, x = [], [], 0
                    piece = text[: columns - x]
                    pieces.append(piece)
                    _add_run(runs, style, len(piece))
                    x += len(piece)
                    text = text[len(piece) :]
        if control[-1] == "m" and control[1] == "[":  # SGR, as in the general loop
            if control == "\x1b[0m" or control == "\x1b[m":
                style = DEFAULT_STYLE
            else:
                new = transitions.get((id(style), control))
                style = new if new is not None else sgr_transition(style, control)
        elif control == "\r\n" or control == "\n":
            _finish(pieces, runs, blank, x, columns, texts, row_styles)
            if style is not blank_for:
                blank_for, blank = style, blank_style(style)
            if control == "\r\n" or newline_mode:
                x = 0
            pieces, runs = ([" " * x], [blank, x]) if x else ([], [])  # LF alone keeps the column
        else:
            leftover = ("", control)
            break
    current_texts: list[str] = []
    current_styles: list[Style | tuple[Style | int, ...]] = []
    _finish(pieces, runs, blank, x, columns, current_texts, current_styles)
    _write_back(screen, texts, row_styles, (current_texts[0], current_styles[0]))
    screen._x, screen._style = x, style
    return leftover


def _add_run(runs: list[Style | int], style: Style, count: int) -> None:
    """``count`` more cells of ``style``: the last run grows when it has that style."""
    if runs and (runs[-2] is style or runs[-2] == style):
        runs[-1] += count  # type: ignore[operator]
    else:
        runs.append(style)
        runs.append(count)


def _finish(
    pieces: list[str],
    runs: list[Style | int],
    blank: Style,
    x: int,
    columns: int,
    texts: list[str],
    row_styles: list[Style | tuple[Style | int, ...]],
) -> None:
    """Store the row built so far (its cells from ``x`` on blank in the erase style ``blank``; ``runs``, which
    this takes, its first ``x`` cells' styles) as `History.append` would store it and, for a row of several
    styles, `History.compact` after it (runs, without trailing default blanks)."""
    first = cast(Style, runs[0]) if runs else blank
    if len(runs) <= 2 and (x == columns or blank == first):
        text = "".join(pieces)
        texts.append(text.rstrip(" ") if first == DEFAULT_STYLE else text + " " * (columns - x))
        row_styles.append(first)
        return
    text = "".join(pieces)  # the row's first x cells; the rest are blanks
    if x < columns:
        _add_run(runs, blank, columns - x)
    # Trailing blanks of the default style are not kept; a blank of another style is content.
    end = columns
    if runs[-2] == DEFAULT_STYLE:
        last_run_start = columns - runs[-1]  # type: ignore[operator]
        end = max(len(text.rstrip(" ")), last_run_start)  # at most x: the blanks after it are the run's
        if end > last_run_start:
            runs[-1] = end - last_run_start
        else:
            del runs[-2:]
    texts.append(text[:end] if end <= x else text + " " * (end - x))
    if len(runs) <= 2:
        row_styles.append(runs[0] if runs else DEFAULT_STYLE)  # type: ignore[arg-type]
    elif len(runs) < end:
        row_styles.append(tuple(runs))
    else:  # runs no shorter than a style per cell
        cells: list[Style] = []
        for index in range(0, len(runs), 2):
            cells += [cast(Style, runs[index])] * cast(int, runs[index + 1])
        row_styles.append(tuple(cells))


def _write_back(
    screen: ScreenModel,
    texts: list[str],
    row_styles: list[Style | tuple[Style | int, ...]],
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
    history.extend(texts[:to_history], row_styles[:to_history])
    new_chars = chars[scrolled:kept]
    new_styles = styles[scrolled:kept]
    for text, row_style in (*zip(texts[to_history:], row_styles[to_history:], strict=True), current):
        row_chars, row_cells = fit_row(text, row_style, columns)
        new_chars.append(row_chars)
        new_styles.append(row_cells)
    chars[:] = new_chars
    styles[:] = new_styles
    screen._all_dirty = True
