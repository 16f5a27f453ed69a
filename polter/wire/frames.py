"""A screen as it travels from the session host to a window: frames of changed rows, as data.

The host encodes what its screen engine changed (:func:`encode_frame`); a window applies frames to its
copy (:class:`~polter.window.mirror.MirrorScreen`). A row is a list of runs ``(text, style number)``
covering exactly the screen's width, as :meth:`TerminalScreen.line` gives them; styles travel as
numbers from a :class:`StyleTable`, each defined once per window. Scrollback rows are sent on request
(:func:`encode_history`), numbered as :attr:`TerminalScreen.history_pushed` numbers them, so a window
caches them by number and fetches only what it shows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Final

from pydantic import BaseModel, ConfigDict, Field

from polter.terminal._cursor import CursorShape
from polter.terminal._style import DEFAULT_STYLE, Style

if TYPE_CHECKING:
    from polter.terminal.screen import TerminalScreen

__all__ = [
    "MAX_STYLES",
    "HistoryRows",
    "Row",
    "ScreenFrame",
    "ScreenModes",
    "StyleTable",
    "WindowStyles",
    "encode_frame",
    "encode_history",
]

MAX_STYLES: Final = 65_536
"""Style numbers one host hands out before it starts again (a truecolour gradient makes any number)."""

Run = tuple[str, int]
Row = list[Run]


class ScreenModes(BaseModel):
    """The modes a window needs to draw the screen and to turn the mouse into what the program wants."""

    model_config = ConfigDict(frozen=True)

    reverse_video: bool = False
    alternate_screen: bool = False
    mouse_tracking: int = 0
    mouse_sgr: bool = False
    application_cursor_keys: bool = False


class ScreenFrame(BaseModel):
    """Rows of one screen that changed, with everything else a window draws from."""

    columns: int = Field(ge=1)
    lines: int = Field(ge=1)
    rows: list[tuple[int, Row]] = Field(description="(row number, runs) for each changed row")
    full: bool = Field(description="every row of the screen is in ``rows``")
    styles: dict[int, tuple[str | None, str | None, int]] = Field(
        default_factory=dict, description="styles new to this window: number → (fg, bg, attribute bits)"
    )
    style_epoch: int = Field(default=0, description="changes when the host numbers its styles anew")
    cursor: tuple[int, int, bool, CursorShape, bool] = Field(description="x, y, visible, shape, blinking")
    history_size: int = Field(ge=0)
    history_pushed: int = Field(ge=0)
    history_epoch: int = Field(ge=0)
    modes: ScreenModes = ScreenModes()


class HistoryRows(BaseModel):
    """Scrollback rows ``first``, ``first + 1``, ... (numbers as in ``history_pushed``) at ``columns``."""

    first: int
    columns: int
    epoch: int
    rows: list[Row]
    styles: dict[int, tuple[str | None, str | None, int]] = Field(default_factory=dict)
    style_epoch: int = 0


_FLAGS: Final = ("bold", "dim", "italic", "underline", "blink", "reverse", "strike", "conceal")


def style_bits(style: Style) -> int:
    return sum(1 << index for index, name in enumerate(_FLAGS) if getattr(style, name))


def style_from(fg: str | None, bg: str | None, bits: int) -> Style:
    return Style(fg, bg, *(bool(bits >> index & 1) for index in range(len(_FLAGS))))


class WindowStyles:
    """The style numbers one window has learnt (valid for one epoch of the host's table)."""

    def __init__(self) -> None:
        self.epoch = 0
        self.numbers: set[int] = set()


class StyleTable:
    """Numbers for the styles one host sends; each window learns a number's style once."""

    def __init__(self) -> None:
        self.epoch = 0
        self._numbers: dict[Style, int] = {DEFAULT_STYLE: 0}
        self._styles: list[Style] = [DEFAULT_STYLE]

    def number(self, style: Style) -> int:
        number = self._numbers.get(style)
        if number is None:
            number = self._numbers[style] = len(self._styles)
            self._styles.append(style)
        return number

    def rows(self, screen: TerminalScreen, numbers: Iterable[int]) -> list[Row]:
        """Rows ``numbers`` of ``screen`` as runs of style numbers. A full table starts again first, never
        in the middle of a frame (whose numbers must all mean the same styles)."""
        if len(self._styles) >= MAX_STYLES:
            self.epoch += 1
            self._numbers = {DEFAULT_STYLE: 0}
            self._styles = [DEFAULT_STYLE]
        number = self.number
        return [[(text, number(style)) for text, style in screen.line(y)] for y in numbers]

    def definitions(self, rows: list[Row], window: WindowStyles) -> dict[int, tuple[str | None, str | None, int]]:
        """The styles ``rows`` use that ``window`` has not learnt yet (it learns them now)."""
        if window.epoch != self.epoch:
            window.epoch, window.numbers = self.epoch, set()
        new = {number for row in rows for _, number in row} - window.numbers
        window.numbers |= new
        return {number: (style.fg, style.bg, style_bits(style)) for number in new for style in (self._styles[number],)}


def encode_frame(
    screen: TerminalScreen, dirty: set[int] | None, table: StyleTable, window: WindowStyles
) -> ScreenFrame:
    """The frame for rows ``dirty`` of ``screen`` (``None``: every row) for ``window``."""
    numbers = list(range(screen.lines)) if dirty is None else sorted(y for y in dirty if 0 <= y < screen.lines)
    rows = table.rows(screen, numbers)
    cursor = screen.cursor
    return ScreenFrame(
        columns=screen.columns,
        lines=screen.lines,
        rows=list(zip(numbers, rows, strict=True)),
        full=dirty is None,
        styles=table.definitions(rows, window),
        style_epoch=table.epoch,
        cursor=(cursor.x, cursor.y, cursor.visible, cursor.shape, cursor.blinking),
        history_size=screen.history_size,
        history_pushed=screen.history_pushed,
        history_epoch=screen.history_epoch,
        modes=ScreenModes(
            reverse_video=screen.reverse_video,
            alternate_screen=screen.alternate_screen,
            mouse_tracking=screen.mouse_tracking,
            mouse_sgr=screen.mouse_sgr,
            application_cursor_keys=screen.application_cursor_keys,
        ),
    )


def encode_history(
    screen: TerminalScreen, first: int, count: int, table: StyleTable, window: WindowStyles
) -> HistoryRows:
    """Scrollback rows numbered ``first`` … ``first + count - 1`` (those still kept) for ``window``."""
    pushed, size = screen.history_pushed, screen.history_size
    start = max(first, pushed - size)
    stop = max(start, min(first + count, pushed))
    rows = table.rows(screen, [number - pushed for number in range(start, stop)])
    return HistoryRows(
        first=start,
        columns=screen.columns,
        epoch=screen.history_epoch,
        rows=rows,
        styles=table.definitions(rows, window),
        style_epoch=table.epoch,
    )
