"""A page of cells: the main screen or the alternate screen, with its saved cursor."""

from __future__ import annotations

from polter.terminal._history import History
from polter.terminal._style import DEFAULT_STYLE, Style

__all__ = ["Page", "SavedCursor"]


class Page:
    """One screen's worth of rows (the main page or the alternate page) and its saved cursor."""

    __slots__ = ("chars", "saved", "styles")

    def __init__(self, columns: int, lines: int, style: Style = DEFAULT_STYLE) -> None:
        self.chars: list[list[str]] = [[" "] * columns for _ in range(lines)]
        self.styles: list[list[Style]] = [[style] * columns for _ in range(lines)]
        self.saved: SavedCursor | None = None

    def resize_columns(self, columns: int) -> None:
        """Clip or pad every row to ``columns`` cells (no reflow)."""
        for chars, styles in zip(self.chars, self.styles, strict=True):
            width = len(chars)
            if columns < width:
                if chars[columns] == "":
                    chars[columns - 1] = " "  # a wide character cut in half
                del chars[columns:]
                del styles[columns:]
            elif columns > width:
                chars.extend([" "] * (columns - width))
                styles.extend([DEFAULT_STYLE] * (columns - width))

    def clear(self, style: Style) -> None:
        """Blank every cell (in ``style``, the erase style)."""
        columns, lines = len(self.chars[0]), len(self.chars)
        self.chars[:] = [[" "] * columns for _ in range(lines)]
        self.styles[:] = [[style] * columns for _ in range(lines)]

    def resize_lines(self, lines: int, columns: int, cursor_y: int, history: History | None) -> int:
        """Give the page ``lines`` rows, as tmux does: shrinking drops blank rows below
        ``cursor_y`` first, then moves top rows into ``history`` (if any); growing brings rows
        back from it, else adds blank rows. Returns how far the content moved down (negative: up)."""
        chars, styles = self.chars, self.styles
        shift = 0
        while len(chars) > lines:
            bottom = len(chars) - 1
            row = chars[bottom]
            blank = row.count(" ") == len(row) and styles[bottom].count(DEFAULT_STYLE) == len(row)
            if bottom > cursor_y and blank:
                del chars[bottom], styles[bottom]
                continue
            row_chars, row_styles = chars.pop(0), styles.pop(0)
            if history is not None:
                history.append(row_chars, row_styles)
            shift -= 1
            cursor_y -= 1
        while len(chars) < lines:
            if history:
                row_chars, row_styles = history.pop(columns)
                chars.insert(0, row_chars)
                styles.insert(0, row_styles)
                shift += 1
            else:
                chars.append([" "] * columns)
                styles.append([DEFAULT_STYLE] * columns)
        return shift


class SavedCursor:
    """What DECSC (ESC 7) saves and DECRC (ESC 8) restores."""

    __slots__ = ("charsets", "origin", "shift", "style", "x", "y")

    def __init__(self, x: int, y: int, style: Style, origin: bool, charsets: list[str], shift: int) -> None:
        self.x, self.y, self.style, self.origin = x, y, style, origin
        self.charsets, self.shift = list(charsets), shift
