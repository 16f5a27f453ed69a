"""The terminal pane widget: a pane's screen drawn with Textual's Line API, and the user's input sent back.

The widget renders a :class:`TerminalSource` it is given and starts nothing itself: in the app the
source is a pane of the session host (its screen mirrored from frames), in tests it may be a program
run in-process (:class:`~polter.window.terminal_source.LocalTerminal`). The source calls :meth:`TerminalView.frame`
with the rows that changed; a frame repaints only those rows (plus the old and new cursor rows),
cached as strips.

Input: keys go to the source by their Textual names (encoded where the screen's modes are current),
pastes as text, mouse events encoded here when the program asked for them, focus changes reported.
"""

from __future__ import annotations

import time
from typing import ClassVar, Final

from rich.style import Style as RichStyle
from textual import events
from textual.geometry import Region
from textual.message import Message
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget

from polter.terminal.keys import MouseButton
from polter.window.history_scroll import HistoryScroll
from polter.window.row_painter import RowPainter, with_cursor
from polter.window.selection import highlight, line_number, selected_text
from polter.window.terminal_pointer import Pointer
from polter.window.terminal_source import ScreenReader, TerminalSource

__all__ = ["TerminalView"]

ECHO_WINDOW: Final = 0.2
"""Seconds after the human typed into a pane during which its frames are the echo they wait for
(:class:`TerminalView.Echo`)."""


class TerminalView(Widget, can_focus=True):
    """A pane's screen, drawn live, and its keyboard and mouse.

    | Key (while focused) | Does |
    | :- | :- |
    | shift+pageup / shift+pagedown | scroll the scrollback by a page |
    | anything else | goes to the program |

    In scroll mode (:meth:`enter_scroll_mode`): up/down/k/j line, pageup/pagedown/space page,
    home/g top, end/G bottom, q/escape/enter leave. The mouse wheel scrolls the scrollback unless the
    program asked for mouse events (hold shift to scroll anyway); on the alternate screen it sends
    arrow keys, as xterm does, so pagers and editors scroll.

    Its parts: :attr:`painter` draws the rows, :attr:`scroll` keeps the scrollback position and scroll
    mode, :attr:`pointer` handles the mouse.
    """

    DEFAULT_CSS = """
    TerminalView {
        width: 1fr;
        height: 1fr;
        background: $background;
        color: $foreground;
    }
    """

    SCROLL_MODE_KEYS: ClassVar[dict[str, str]] = HistoryScroll.KEYS

    class _TerminalMessage(Message):
        def __init__(self, terminal: TerminalView) -> None:
            super().__init__()
            self.terminal = terminal

        @property
        def control(self) -> TerminalView:
            return self.terminal

    class Selected(_TerminalMessage):
        """A double or triple click selected a word or a line (a drag ends in Textual's TextSelected)."""

    class Echo(_TerminalMessage):
        """Sent to the screen: the view's next update follows what the human typed into it, so it is
        worth drawing at once (:class:`~polter.window.echo_screen.EchoScreen`)."""

    class ScrollChanged(_TerminalMessage):
        """The view moved in the scrollback: ``offset`` lines above the live screen (0 = live)."""

        def __init__(self, terminal: TerminalView, offset: int, history: int, scroll_mode: bool) -> None:
            super().__init__(terminal)
            self.offset = offset
            self.history = history
            self.scroll_mode = scroll_mode

    def __init__(
        self, source: TerminalSource, *, name: str | None = None, id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.source = source
        self.painter = RowPainter()
        self.scroll = HistoryScroll(self)
        self.pointer = Pointer(self)
        self._base_rich_style: RichStyle | None = None
        self._cursor_row: int | None = None
        self._typed_at = -ECHO_WINDOW
        """``time.monotonic()`` when the human last sent the program something through this view."""

    # -- state ---------------------------------------------------------------------------------

    @property
    def screen_model(self) -> ScreenReader | None:
        """The screen drawn (``None`` before the pane has one)."""
        return self.source.screen

    @property
    def running(self) -> bool:
        return self.source.running

    @property
    def history_offset(self) -> int:
        """Lines above the live screen the view shows (0: live)."""
        return self.scroll.offset

    @property
    def scroll_mode(self) -> bool:
        return self.scroll.mode

    # -- lifecycle -----------------------------------------------------------------------------

    def on_mount(self) -> None:
        self.source.attach(self)

    def on_unmount(self) -> None:
        self.source.attach(None)

    def on_resize(self, event: events.Resize) -> None:
        columns, lines = self.size
        if columns < 1 or lines < 1:
            return  # hidden (zoomed away) or not laid out yet: keep the old size
        self.source.resize(columns, lines)
        self.painter.forget()
        self.scroll.clamp()
        self.refresh()

    def frame(self, dirty: set[int] | None) -> None:
        """The source's screen changed: rows ``dirty`` (``None``: all, or the screen was replaced)."""
        screen = self.screen_model
        if screen is None:
            return
        self.scroll.follow(screen.history_size)
        if time.monotonic() - self._typed_at < ECHO_WINDOW:
            self.screen.post_message(self.Echo(self))
        cursor_row = screen.cursor.y
        if dirty is None or self.scroll.offset:
            self.painter.forget()
            self.refresh()
        else:
            self.painter.forget(dirty)
            rows = dirty | {cursor_row}
            if self._cursor_row is not None:
                rows.add(self._cursor_row)
            self._refresh_rows(rows)
        self._cursor_row = cursor_row

    def _refresh_rows(self, rows: set[int]) -> None:
        width = self.size.width
        regions: list[Region] = []
        for row in sorted(rows):
            if regions and regions[-1].bottom == row:
                last = regions[-1]
                regions[-1] = Region(0, last.y, width, last.height + 1)
            else:
                regions.append(Region(0, row, width, 1))
        if regions:
            self.refresh(*regions)

    # -- drawing -------------------------------------------------------------------------------

    def render_line(self, y: int) -> Strip:
        screen = self.screen_model
        base = self._base_rich_style
        if base is None:  # computing it walks the DOM: once per style change, not per line
            base = self._base_rich_style = self.rich_style
        if screen is not None and screen.reverse_video:  # DECSCNM: default colours swap
            base = base + RichStyle(color=base.bgcolor, bgcolor=base.color)
        width = self.size.width
        offset = self.scroll.offset
        row = y - offset
        if screen is None or not -screen.history_size <= row < screen.lines:
            return Strip.blank(width, base)
        strip = self.painter.strip(screen, row, width, base)
        number = line_number(screen, row)
        selection = self.text_selection
        span = selection.get_span(number) if selection is not None else None
        if span is not None:  # only a selected row needs its text and the selection's style
            marked = self.screen.get_component_rich_style("screen--selection")
            strip = highlight(strip, screen.text(row), span, marked)
        cursor = screen.cursor
        if row == cursor.y and cursor.visible and self.has_focus and self.running and not offset:
            strip = with_cursor(strip, cursor.x, cursor.shape)
        # Where the mouse is in the text, for selecting: Textual reads it from the line under the
        # pointer, so only the pane under the mouse pays for it (about 3 µs a segment).
        return strip.apply_offsets(0, number) if self.mouse_hover else strip

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base_rich_style = None

    # -- selection ---------------------------------------------------------------------------

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The text a mouse drag selected (Textual's selection; the screen copies it on release)."""
        if self.screen_model is None:
            return None
        return selected_text(self.screen_model, selection), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()

    # -- input ---------------------------------------------------------------------------------

    def on_key(self, event: events.Key) -> None:
        if self.scroll.mode:
            event.stop()
            event.prevent_default()
            self.scroll.mode_key(event.key)
            return
        if event.key in ("shift+pageup", "shift+pagedown"):
            event.stop()
            event.prevent_default()
            page = max(1, self.size.height - 1)
            self.scroll.by(page if event.key == "shift+pageup" else -page)
            return
        if not self.running:
            return
        if self.source.key(event.key, event.character):
            self._typed_at = time.monotonic()
            event.stop()
            event.prevent_default()
            self.scroll.to_live()

    def send(self, data: bytes, *, scroll_to_live: bool = True) -> None:
        """Write ``data`` to the program as typed input; the view jumps back to the live screen (a mouse
        report to the program leaves it where it is)."""
        if self.source.send(data):
            self._typed_at = time.monotonic()
            if scroll_to_live:
                self.scroll.to_live()

    def on_paste(self, event: events.Paste) -> None:
        event.stop()
        if self.running:
            self.source.paste(event.text)
            self._typed_at = time.monotonic()
            self.scroll.to_live()

    def on_focus(self) -> None:
        self._report_focus(True)

    def on_blur(self) -> None:
        self._report_focus(False)

    def _report_focus(self, focused: bool) -> None:
        screen = self.screen_model
        if screen is None:
            return
        self.source.focus(focused)
        self._refresh_rows({screen.cursor.y})

    def on_click(self, event: events.Click) -> None:
        self.pointer.click(event)

    def on_mouse_down(self, event: events.MouseDown) -> None:
        if self.pointer.to_program(event, "press", MouseButton(event.button)):
            self.screen.clear_selection()  # the program has the mouse (shift+drag still selects)
            self.capture_mouse()

    def on_mouse_up(self, event: events.MouseUp) -> None:
        self.pointer.to_program(event, "release", MouseButton(event.button))
        self.release_mouse()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self.pointer.to_program(event, "motion", MouseButton(event.button) if event.button else MouseButton.NONE)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self.pointer.wheel(event, MouseButton.WHEEL_UP)

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self.pointer.wheel(event, MouseButton.WHEEL_DOWN)

    # -- scrollback (the app's keys) -------------------------------------------------------------

    def scroll_history(self, lines: int) -> None:
        """Move the view ``lines`` further back into the scrollback (negative: towards live)."""
        self.scroll.by(lines)

    def enter_scroll_mode(self) -> None:
        """Keys scroll the scrollback instead of going to the program, until q or escape."""
        self.scroll.enter_mode()
