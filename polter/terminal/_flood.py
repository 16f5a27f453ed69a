"""The flood fast path: lines of plain text scrolling the whole main screen, as ``cat`` or a build prints them.

In a flood nearly every row is written once, from its first column, onto a freshly scrolled blank row,
and leaves for the scrollback a few lines later. The general feed loop pays for that row by row: the
tokenizer's list of texts and sequences, slice assignments into the cell lists, a scroll, and a copy of
the cell lists into the history. Here the decoded text is read a line at a time, and a line of printable
text and SGR sequences is kept as its text and style runs while it is built; only the rows still on the
screen at the end become cell lists, and the history gets the rest as strings (`History.extend`).

It runs only where the result is the same as the general path's (the tests compare both on the same
streams): the cursor on the bottom row of a main screen whose scroll region is the whole screen, auto-wrap
on, no insert mode, no DEC graphics, and a cursor row of one-cell characters whose cells from the cursor on
are blanks of one style. It takes lines of printable text of one cell a character and SGR sequences, ended
by CR LF or LF; it stops before the first line with anything else, which the general loop then handles.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from polter.terminal._history import fit_row
from polter.terminal._parser import sgr_and_text
from polter.terminal._style import DEFAULT_STYLE, Style, blank_style, sgr_transition, style_transitions
from polter.terminal._width import NOT_NARROW

if TYPE_CHECKING:
    from polter.terminal._model import ScreenModel

__all__ = ["flood", "flood_ready"]


def flood_ready(screen: ScreenModel) -> bool:
    """Whether a line feed on the cursor row scrolls the whole main screen, with nothing set that the flood
    fast path does not do (insert mode, DEC graphics, no auto-wrap)."""
    return (
        screen._page is screen._main
        and screen._top == 0
        and screen._bottom == screen.lines - 1
        and screen._y == screen.lines - 1
        and screen._plain_text
        and screen._autowrap
    )


def flood(screen: ScreenModel, text: str, start: int) -> int:
    """Consume the lines of ``text`` (decoded, no unfinished sequence at its end) from ``start`` while they are
    a flood; return where it stopped: ``len(text)`` when all of it was (its last line, unfinished, is then the
    cursor row's), else the start of the first line it does not take (``start`` if none)."""
    current = _cursor_row(screen) if flood_ready(screen) else None
    if current is None:
        return start
    pieces, runs, blank = current  # the cursor row's text so far, its styles as runs, its blanks' style
    columns = screen.columns
    transitions = style_transitions()
    newline_mode = screen._newline_mode
    x, style = screen._x, screen._style
    blank_for: Style | None = None  # the style `blank` was made for (unknown: the next row's is made anew)
    # Finished rows, in the form `History` stores them (see `History.append`).
    texts: list[str] = []
    row_styles: list[RowForm] = []
    position, end = start, len(text)
    while position < end:
        escape = text.find("\x1b", position)
        if escape < 0:
            escape = end
        if not pieces and x == 0 and style is blank:
            # Whole lines of one style with no sequence (``cat``, ``seq``): checked and stored in bulk.
            last = text.rfind("\r\n", position, escape)
            if last >= 0:
                lines = text[position:last].split("\r\n")
                if max(map(len, lines)) <= columns and _one_cell_text("".join(lines)):
                    if style == DEFAULT_STYLE:
                        texts += [line.rstrip(" ") for line in lines]
                    else:
                        texts += [line + " " * (columns - len(line)) for line in lines]
                    row_styles += [style] * len(lines)
                    position = last + 2
                    continue
        newline = text.find("\n", position)
        line_end = end if newline < 0 else newline
        after = end if newline < 0 else newline + 1
        crlf = newline > position and text[newline - 1] == "\r"
        line = text[position : line_end - 1 if crlf else line_end]
        if escape < line_end:
            parts = _sgr_split(line)
            if not parts:
                break
        elif _one_cell_text(line):
            parts = [line]
        else:
            break
        for index in range(0, len(parts), 2):
            if index:
                control = parts[index - 1]
                if control == "\x1b[0m" or control == "\x1b[m":
                    style = DEFAULT_STYLE
                else:
                    new = transitions.get((id(style), control))
                    style = new if new is not None else sgr_transition(style, control)
            part = parts[index]
            if not part:
                continue
            if x + len(part) <= columns:
                pieces.append(part)
                _add_run(runs, style, len(part))
                x += len(part)
                continue
            while part:
                if x >= columns:  # a pending wrap: the row is done and the next one scrolls in
                    _finish(pieces, runs, blank, x, columns, texts, row_styles)
                    if style is not blank_for:
                        blank_for, blank = style, blank_style(style)
                    pieces, runs, x = [], [], 0
                piece = part[: columns - x]
                pieces.append(piece)
                _add_run(runs, style, len(piece))
                x += len(piece)
                part = part[len(piece) :]
        if newline >= 0:
            _finish(pieces, runs, blank, x, columns, texts, row_styles)
            if style is not blank_for:
                blank_for, blank = style, blank_style(style)
            if crlf or newline_mode:
                x = 0
            pieces, runs = ([" " * x], [blank, x]) if x else ([], [])  # LF alone keeps the column
        position = after
    if position == start:
        return start
    current_texts: list[str] = []
    current_styles: list[RowForm] = []
    _finish(pieces, runs, blank, x, columns, current_texts, current_styles)
    _write_back(screen, texts, row_styles, (current_texts[0], current_styles[0]))
    screen._x, screen._style = x, style
    return position


def _one_cell_text(text: str) -> bool:
    """Whether ``text`` is printable characters of one cell each: what the flood can write without the general
    loop (which handles controls, wide and combining characters)."""
    return text.isprintable() and (text.isascii() or NOT_NARROW.search(text) is None)


def _sgr_split(line: str) -> list[str]:
    """``[text, SGR, text, SGR, …, text]`` for a line (no line feed in it) of printable text of one cell a
    character and SGR sequences; ``[]`` if it holds anything else."""
    # The sequences' characters are printable ASCII but for their ESC: the whole line's text is checked at once.
    if not _one_cell_text(line.replace("\x1b", "")):
        return []
    segments = line.split("\x1b")
    parts = [segments[0]]
    for index in range(1, len(segments)):
        known = sgr_and_text(segments[index])
        if known is None:
            return []
        parts.append(known[0])
        parts.append(known[1])
    return parts


def _cursor_row(screen: ScreenModel) -> tuple[list[str], list[Style | int], Style] | None:
    """The cursor row as the flood builds one (its text before the cursor, that text's styles as runs, and the
    style of its blanks from the cursor on), or None if it is not one (a wide character, or cells after the
    cursor that are not blanks of one style)."""
    columns, x = screen.columns, screen._x
    chars, styles = screen._chars[-1], screen._styles[-1]
    text = "".join(chars)
    if len(text) != columns:
        return None
    blank = styles[x] if x < columns else styles[-1]
    if x < columns and (text.count(" ", x) != columns - x or any(style != blank for style in styles[x:])):
        return None
    runs: list[Style | int] = []
    for style in styles[:x]:
        _add_run(runs, style, 1)
    return ([text[:x]] if x else []), runs, blank


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
    row_styles: list[RowForm],
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


RowForm = Style | tuple[Style | int, ...]
"""A row's styles as `History` keeps them: one style, or runs, or a style per cell."""
FloodRow = tuple[list[str], list[str], list[Style], str, RowForm]
"""A screen row the flood made: its cell list, copies of its cells and styles then, and the text and styles
it was made from."""


def _write_back(
    screen: ScreenModel,
    texts: list[str],
    row_styles: list[RowForm],
    current: tuple[str, RowForm],
) -> None:
    """Scroll the screen by one row per finished row, as the general path would have: the rows that
    leave the top go to the history, the newest stay on the screen, the current one at the bottom.

    A row that leaves is stored from the text and styles the flood made it from, when it is the row the flood
    made and its cells are as they were (`ScreenModel._flood_rows`): most rows of a flood that the engine
    reads in several feeds stay on the screen from one feed to the next."""
    columns = screen.columns
    chars, styles = screen._chars, screen._styles
    history = screen._history
    made = screen._flood_rows
    scrolled = len(texts)
    kept = len(chars) - 1  # the rows above the current one
    leaving_texts: list[str] = []
    leaving_styles: list[RowForm] = []
    for old_chars, old_styles in zip(chars[: min(scrolled, kept)], styles[: min(scrolled, kept)], strict=True):
        row = made.get(id(old_chars))
        if row is not None and row[0] is old_chars and row[1] == old_chars and row[2] == old_styles:
            leaving_texts.append(row[3])
            leaving_styles.append(row[4])
            continue
        history.extend(leaving_texts, leaving_styles)
        leaving_texts, leaving_styles = [], []
        history.append(old_chars, old_styles)
    history.extend(leaving_texts, leaving_styles)
    to_history = max(0, scrolled - kept)
    history.extend(texts[:to_history], row_styles[:to_history])
    new_chars = chars[scrolled:kept]
    new_styles = styles[scrolled:kept]
    now_made: dict[int, FloodRow] = {}
    for row_chars in new_chars:
        row = made.get(id(row_chars))
        if row is not None:
            now_made[id(row_chars)] = row
    for text, row_style in (*zip(texts[to_history:], row_styles[to_history:], strict=True), current):
        row_chars, row_cells = fit_row(text, row_style, columns)
        new_chars.append(row_chars)
        new_styles.append(row_cells)
        now_made[id(row_chars)] = (row_chars, list(row_chars), list(row_cells), text, row_style)
    chars[:] = new_chars
    styles[:] = new_styles
    screen._flood_rows = now_made
    screen._all_dirty = True
