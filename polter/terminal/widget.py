"""The terminal pane widget: a pane's screen drawn with Textual's Line API, and the user's input sent back.

The widget renders a :class:`TerminalSource` it is given and starts nothing itself: in the app the
source is a pane of the session host (its screen mirrored from frames), in tests it may be a program
run in-process (:class:`~polter.terminal.source.LocalTerminal`). The source calls :meth:`TerminalView.frame`
with the rows that changed; a frame repaints only those rows (plus the old and new cursor rows),
cached as strips.

Input: keys go to the source by their Textual names (encoded where the screen's modes are current),
pastes as text, mouse events encoded here when the program asked for them, focus changes reported.
"""

from __future__ import annotations

import time
from typing import ClassVar, Final

from rich.color import Color
from rich.segment import Segment
from rich.style import Style as RichStyle
from textual import events
from textual.geometry import Region
from textual.message import Message
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget

from polter.terminal._style import Style
from polter.terminal.keys import MouseButton, MouseKind, encode_key, encode_mouse
from polter.terminal.selection import highlight, line_number, selected_text, word_or_line
from polter.terminal.source import ScreenReader, TerminalSource

__all__ = ["TerminalView"]

WHEEL_LINES: Final = 3
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
    """

    DEFAULT_CSS = """
    TerminalView {
        width: 1fr;
        height: 1fr;
        background: $background;
        color: $foreground;
    }
    """

    SCROLL_MODE_KEYS: ClassVar[dict[str, str]] = {
        "up": "line_up", "k": "line_up", "down": "line_down", "j": "line_down",
        "pageup": "page_up", "pagedown": "page_down", "space": "page_down",
        "home": "top", "g": "top", "end": "bottom", "G": "bottom", "shift+g": "bottom",
        "q": "leave", "escape": "leave", "enter": "leave",
    }  # fmt: skip

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
        worth drawing at once (:class:`~polter.ui.echo_screen.EchoScreen`)."""

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
        self.history_offset = 0
        self.scroll_mode = False
        self._strips: dict[int, Strip] = {}
        self._styles: dict[Style, RichStyle] = {}
        self._base_style: RichStyle | None = None
        self._base_rich_style: RichStyle | None = None
        self._cursor_row: int | None = None
        self._history_size = 0
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
        self._strips.clear()
        self._clamp_scroll()
        self.refresh()

    def frame(self, dirty: set[int] | None) -> None:
        """The source's screen changed: rows ``dirty`` (``None``: all, or the screen was replaced)."""
        screen = self.screen_model
        if screen is None:
            return
        history = screen.history_size
        if history != self._history_size:
            if self.history_offset:  # keep the lines the user is reading in place
                self.history_offset = max(0, min(self.history_offset + history - self._history_size, history))
                self._post_scroll()
            self._history_size = history
        if time.monotonic() - self._typed_at < ECHO_WINDOW:
            self.screen.post_message(self.Echo(self))
        cursor_row = screen.cursor.y
        if dirty is None or self.history_offset:
            self._strips.clear()
            self.refresh()
        else:
            for row in dirty:
                self._strips.pop(row, None)
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
        if base != self._base_style:  # theme, CSS or DECSCNM changed: every cached style is stale
            self._base_style = base
            self._styles.clear()
            self._strips.clear()
        width = self.size.width
        row = y - self.history_offset
        if screen is None or not -screen.history_size <= row < screen.lines:
            return Strip.blank(width, base)
        strip = self._strips.get(row) if row >= 0 else None
        number = line_number(screen, row)
        if strip is None:
            segments = [Segment(text, self._rich_style(style, base)) for text, style in screen.line(row)]
            strip = Strip(segments, screen.columns).adjust_cell_length(width, base)
            if row >= 0:
                self._strips[row] = strip
        selection = self.text_selection
        span = selection.get_span(number) if selection is not None else None
        if span is not None:  # only a selected row needs its text and the selection's style
            marked = self.screen.get_component_rich_style("screen--selection")
            strip = highlight(strip, screen.text(row), span, marked)
        cursor = screen.cursor
        if row == cursor.y and cursor.visible and self.has_focus and self.running and not self.history_offset:
            strip = _with_cursor(strip, cursor.x, cursor.shape)
        # Where the mouse is in the text, for selecting: Textual reads it from the line under the
        # pointer, so only the pane under the mouse pays for it (about 3 µs a segment).
        return strip.apply_offsets(0, number) if self.mouse_hover else strip

    # -- selection ---------------------------------------------------------------------------

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The text a mouse drag selected (Textual's selection; the screen copies it on release)."""
        if self.screen_model is None:
            return None
        return selected_text(self.screen_model, selection), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        self.refresh()

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

    # -- input ---------------------------------------------------------------------------------

    def on_key(self, event: events.Key) -> None:
        if self.scroll_mode:
            event.stop()
            event.prevent_default()
            self._scroll_mode_key(event.key)
            return
        if event.key in ("shift+pageup", "shift+pagedown"):
            event.stop()
            event.prevent_default()
            page = max(1, self.size.height - 1)
            self.scroll_history(page if event.key == "shift+pageup" else -page)
            return
        if not self.running:
            return
        if self.source.key(event.key, event.character):
            self._typed_at = time.monotonic()
            event.stop()
            event.prevent_default()
            self.scroll_to_live()

    def send(self, data: bytes) -> None:
        """Write ``data`` to the program as typed input; the view jumps back to the live screen."""
        if self.source.send(data):
            self._typed_at = time.monotonic()
            self.scroll_to_live()

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base_rich_style = None

    def on_paste(self, event: events.Paste) -> None:
        event.stop()
        if self.running:
            self.source.paste(event.text)
            self._typed_at = time.monotonic()
            self.scroll_to_live()

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
        """A double click selects the word under the pointer, a triple click the line, as in a
        terminal (Textual's default would select the whole scrollback)."""
        if event.chain < 2:
            return
        event.prevent_default()
        screen = self.screen_model
        if screen is None or (screen.mouse_tracking and self.running and not event.shift):
            return  # the program has the mouse
        offset = event.get_content_offset(self)
        if offset is None:
            return
        row = offset.y - self.history_offset
        if not -screen.history_size <= row < screen.lines:
            return
        selection = word_or_line(screen.text(row), line_number(screen, row), offset.x, event.chain)
        if selection is not None:
            self.screen.selections = {self: selection}
            self.post_message(self.Selected(self))

    def on_mouse_down(self, event: events.MouseDown) -> None:
        if self._mouse_to_program(event, "press", MouseButton(event.button)):
            self.screen.clear_selection()  # the program has the mouse (shift+drag still selects)
            self.capture_mouse()

    def on_mouse_up(self, event: events.MouseUp) -> None:
        self._mouse_to_program(event, "release", MouseButton(event.button))
        self.release_mouse()

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self._mouse_to_program(event, "motion", MouseButton(event.button) if event.button else MouseButton.NONE)

    def on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self._wheel(event, MouseButton.WHEEL_UP)

    def on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self._wheel(event, MouseButton.WHEEL_DOWN)

    def _wheel(self, event: events.MouseEvent, button: MouseButton) -> None:
        event.stop()
        screen = self.screen_model
        if screen is None or self._mouse_to_program(event, "press", button):
            return
        up = button == MouseButton.WHEEL_UP
        if screen.alternate_screen and self.running and not event.shift:
            key = encode_key("up" if up else "down", application_cursor=screen.application_cursor_keys)
            assert key is not None
            self.send(key * WHEEL_LINES)
        else:
            self.scroll_history(WHEEL_LINES if up else -WHEEL_LINES)

    def _mouse_to_program(self, event: events.MouseEvent, kind: MouseKind, button: MouseButton) -> bool:
        """Report the event if the program enabled mouse tracking (shift bypasses it, as in xterm)."""
        screen = self.screen_model
        if screen is None or not self.running or not screen.mouse_tracking or event.shift:
            return False
        event.stop()
        offset = event.get_content_offset_capture(self)
        data = encode_mouse(
            kind,
            button,
            offset.x,
            offset.y,
            tracking=screen.mouse_tracking,
            sgr=screen.mouse_sgr,
            alt=event.meta,
            ctrl=event.ctrl,
        )
        if data is not None and self.source.send(data):
            self._typed_at = time.monotonic()
        return True

    # -- scrollback ----------------------------------------------------------------------------

    def scroll_history(self, lines: int) -> None:
        """Move the view ``lines`` further back into the scrollback (negative: towards live)."""
        history = self.screen_model.history_size if self.screen_model is not None else 0
        offset = max(0, min(self.history_offset + lines, history))
        if offset != self.history_offset:
            self.history_offset = offset
            self.refresh()
            self._post_scroll()

    def scroll_to_live(self) -> None:
        self.scroll_mode = False
        if self.history_offset:
            self.scroll_history(-self.history_offset)

    def enter_scroll_mode(self) -> None:
        """Keys scroll the scrollback instead of going to the program, until q or escape."""
        self.scroll_mode = True
        self._post_scroll()

    def leave_scroll_mode(self) -> None:
        self.scroll_mode = False
        self.scroll_history(-self.history_offset)
        self._post_scroll()

    def _scroll_mode_key(self, key: str) -> None:
        page = max(1, self.size.height - 1)
        history = self.screen_model.history_size if self.screen_model is not None else 0
        match self.SCROLL_MODE_KEYS.get(key):
            case "line_up":
                self.scroll_history(1)
            case "line_down":
                self.scroll_history(-1)
            case "page_up":
                self.scroll_history(page)
            case "page_down":
                self.scroll_history(-page)
            case "top":
                self.scroll_history(history)
            case "bottom":
                self.scroll_history(-history)
            case "leave":
                self.leave_scroll_mode()

    def _clamp_scroll(self) -> None:
        history = self.screen_model.history_size if self.screen_model is not None else 0
        self._history_size = history
        if self.history_offset > history:
            self.history_offset = history
            self._post_scroll()

    def _post_scroll(self) -> None:
        history = self.screen_model.history_size if self.screen_model is not None else 0
        self.post_message(self.ScrollChanged(self, self.history_offset, history, self.scroll_mode))


def _with_cursor(strip: Strip, x: int, shape: str) -> Strip:
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
