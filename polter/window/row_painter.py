"""How a pane's rows become Textual strips: one row at a time, cached, styles converted once.

The view (:class:`~polter.window.terminal_view.TerminalView`) asks :class:`RowPainter` for a row's strip and
tells it what changed: rows a frame redrew, the size, the base style (theme, CSS, reverse video).
"""

from __future__ import annotations

from rich.color import Color
from rich.segment import Segment
from rich.style import Style as RichStyle
from textual.strip import Strip

from polter.terminal._style import Style
from polter.window.terminal_source import ScreenReader

__all__ = ["RowPainter", "with_cursor"]


class RowPainter:
    """Strips of a screen's rows, cached per live row, with the cell styles converted once per base style."""

    def __init__(self) -> None:
        self._strips: dict[int, Strip] = {}
        self._styles: dict[Style, RichStyle] = {}
        self._base: RichStyle | None = None

    def forget(self, rows: set[int] | None = None) -> None:
        """Rows ``rows`` changed (``None``: every row, or the size did)."""
        if rows is None:
            self._strips.clear()
        else:
            for row in rows:
                self._strips.pop(row, None)

    def strip(self, screen: ScreenReader, row: int, width: int, base: RichStyle) -> Strip:
        """Row ``row`` of ``screen`` (negative: scrollback) drawn over ``base`` and fitted to ``width``."""
        if base != self._base:  # theme, CSS or DECSCNM changed: every cached style is stale
            self._base = base
            self._styles.clear()
            self._strips.clear()
        strip = self._strips.get(row) if row >= 0 else None
        if strip is None:
            segments = [Segment(text, self._rich_style(style, base)) for text, style in screen.line(row)]
            strip = Strip(segments, screen.columns).adjust_cell_length(width, base)
            if row >= 0:
                self._strips[row] = strip
        return strip

    def _rich_style(self, style: Style, base: RichStyle) -> RichStyle:
        cached = self._styles.get(style)
        if cached is None:
            fg: str | Color | None = style.fg
            bg: str | Color | None = style.bg
            if style.reverse:  # swap here, default colours included (pyte leaves it to the renderer)
                fg, bg = bg or base.bgcolor, fg or base.color
            if style.conceal:
                fg = bg or base.bgcolor
            cached = base + RichStyle(
                color=fg,
                bgcolor=bg,
                bold=style.bold,
                dim=style.dim,
                italic=style.italic,
                underline=style.underline,
                blink=style.blink,
                strike=style.strike,
            )
            self._styles[style] = cached
        return cached


def with_cursor(strip: Strip, x: int, shape: str) -> Strip:
    """``strip`` with the cell at ``x`` drawn as a cursor (a bar cannot be drawn in a cell: block)."""
    if x >= strip.cell_length:
        return strip
    before, cell, after = strip.divide([x, x + 1, strip.cell_length])
    segments = []
    for segment in cell:
        style = segment.style or RichStyle()
        mark = RichStyle(underline=True) if shape == "underline" else RichStyle(reverse=not style.reverse)
        segments.append(Segment(segment.text, style + mark))
    return Strip.join([before, Strip(segments, cell.cell_length), after])
