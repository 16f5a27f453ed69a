"""The terminal pane widget: a PTY child drawn from the screen model with Textual's Line API.

Output path: the PTY's reader callback feeds the screen model (bounded bytes per callback, and at
most :data:`FEED_BUDGET` seconds of parsing per :data:`FEED_WINDOW` before reading pauses), then
schedules a frame. Frames run at most :data:`FRAME_RATE` times a second (:data:`BUSY_FRAME_RATE` while the
program keeps scrolling the whole screen, so a flood cannot crowd out the other panes), repaint
only the rows the screen reports dirty (plus the old and new cursor rows), and are held while the
program draws a synchronized update (mode 2026), for at most :data:`SYNC_TIMEOUT`. The echo of
what the user typed is drawn in the next frame, without waiting for the frame rate, and busy
panes sharing a :class:`TypingClock` pause for :data:`YIELD_TO_TYPING` after a keystroke so that
the echo is parsed and drawn first, in a small frame.

Input path: keys are translated from their Textual names (:mod:`polter.terminal.keys`), pastes are
bracketed when the program asked, focus changes and mouse events are reported only when enabled.
"""

from __future__ import annotations

import asyncio
import textwrap
import time
from typing import ClassVar, Final

from rich.segment import Segment
from rich.style import Style as RichStyle
from textual import events
from textual.geometry import Region
from textual.message import Message
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget

from polter.errors import SpawnError
from polter.terminal.keys import MouseButton, MouseKind, encode_focus, encode_key, encode_mouse, encode_paste
from polter.terminal.launch import LaunchSpec
from polter.terminal.pty import PtyProcess, describe_exit
from polter.terminal.screen import Style, TerminalScreen
from polter.terminal.selection import highlight, line_number, selected_text, word_or_line

__all__ = ["TerminalView", "TypingClock"]

FRAME_RATE: Final = 60
BUSY_FRAME_RATE: Final = 15
"""Frames a second for a pane whose last frame had to redraw every row (scrolling output)."""
FEED_WINDOW: Final = 1 / 60
FEED_BUDGET: Final = 0.005
"""Seconds of parsing one pane may do per :data:`FEED_WINDOW`; then its reading pauses until the
window ends, so a flooding program gets at most about half of the event loop."""
YIELD_TO_TYPING: Final = 0.035
"""Seconds a busy pane holds its output (reading and frames) after the user typed into a pane:
long enough for the echo to arrive and be drawn (one Textual frame is 1/60 s). A pane never
waits longer than two of its frame intervals, so fast typing slows a flood but cannot stop it."""
SYNC_TIMEOUT: Final = 0.25
"""Longest a synchronized update (``CSI ? 2026 h``) may hold repaints, for programs that never end one."""
WHEEL_LINES: Final = 3


class TypingClock:
    """Shared by the terminals on one screen: when the user types into one, the busy others pause
    (reading and frames) for :data:`YIELD_TO_TYPING`, so the echo is parsed and drawn first."""

    def __init__(self) -> None:
        self._terminals: set[TerminalView] = set()

    def join(self, terminal: TerminalView) -> None:
        self._terminals.add(terminal)

    def leave(self, terminal: TerminalView) -> None:
        self._terminals.discard(terminal)

    def typed(self, into: TerminalView) -> None:
        until = asyncio.get_running_loop().time() + YIELD_TO_TYPING
        for terminal in self._terminals:
            if terminal is not into:
                terminal._yield_until(until)


class TerminalView(Widget, can_focus=True):
    """A program on a pseudo-terminal, drawn live. It starts when it first gets a size.

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

    class Started(_TerminalMessage):
        """The program started (also after a restart). Handler: ``on_terminal_view_started``."""

    class Exited(_TerminalMessage):
        """The program ended; ``returncode`` is negative for a signal. The screen stays as it was."""

        def __init__(self, terminal: TerminalView, returncode: int) -> None:
            super().__init__(terminal)
            self.returncode = returncode

    class SpawnFailed(_TerminalMessage):
        """The program could not start; ``message`` says why (it is also shown in the pane)."""

        def __init__(self, terminal: TerminalView, message: str) -> None:
            super().__init__(terminal)
            self.message = message

    class TitleChanged(_TerminalMessage):
        """The program set its title (OSC 0/2)."""

        def __init__(self, terminal: TerminalView, title: str) -> None:
            super().__init__(terminal)
            self.title = title

    class InputSent(_TerminalMessage):
        """The human's input went to the program: a key (``key`` is its Textual name, ``text`` the character
        it typed, if any) or a paste (``key`` is ``None``; ``bracketed`` says whether the program asked for
        bracketed paste, in which case its newlines do not submit). Lets the pane follow the typed line."""

        def __init__(self, terminal: TerminalView, key: str | None, text: str, *, bracketed: bool = False) -> None:
            super().__init__(terminal)
            self.key = key
            self.text = text
            self.bracketed = bracketed

    class Selected(_TerminalMessage):
        """A double or triple click selected a word or a line (a drag ends in Textual's TextSelected)."""

    class ScrollChanged(_TerminalMessage):
        """The view moved in the scrollback: ``offset`` lines above the live screen (0 = live)."""

        def __init__(self, terminal: TerminalView, offset: int, history: int, scroll_mode: bool) -> None:
            super().__init__(terminal)
            self.offset = offset
            self.history = history
            self.scroll_mode = scroll_mode

    def __init__(
        self,
        spec: LaunchSpec,
        *,
        scrollback: int = 10_000,
        autostart: bool = True,
        typing: TypingClock | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.spec = spec
        self.scrollback = scrollback
        self.autostart = autostart
        """Start the program when the view first gets a size; when False, wait for :meth:`launch`."""
        self.typing = typing or TypingClock()
        self.screen_model: TerminalScreen | None = None
        self.process: PtyProcess | None = None
        self.returncode: int | None = None
        """How the last run ended; ``None`` while running or before the start."""
        self.spawn_error: str | None = None
        self.history_offset = 0
        self.scroll_mode = False
        self._title = ""
        self._strips: dict[int, Strip] = {}
        self._styles: dict[Style, RichStyle] = {}
        self._base_style: RichStyle | None = None
        self._frame_handle: asyncio.TimerHandle | None = None
        self._frame_due = 0.0
        self._last_frame = 0.0
        self._frame_interval = 1 / FRAME_RATE
        self._busy = False
        """The last frame had to redraw every row: the program is streaming output."""
        self._typed = False
        """Input went to the program since the last frame: draw its echo at once."""
        self._base_rich_style: RichStyle | None = None
        self._feed_window = 0.0
        self._feed_seconds = 0.0
        self._resume_handle: asyncio.TimerHandle | None = None
        self._resume_at = 0.0
        self._sync_since: float | None = None
        self._cursor_row: int | None = None
        self._history_size = 0
        self.last_output = 0.0
        """``time.monotonic()`` of the program's latest output (0 before any): screen activity."""

    # -- state ---------------------------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.running

    @property
    def program_title(self) -> str:
        """What the header shows: the program's own title, else the spec's, else the command name."""
        return self._title or self.spec.title or self.spec.argv[0].rsplit("/", 1)[-1]

    @property
    def frame_pending(self) -> bool:
        """Whether output the screen model holds still waits for its frame (a picture taken now misses it)."""
        return self._frame_handle is not None

    @property
    def status_text(self) -> str:
        if self.spawn_error is not None:
            return "failed to start"
        if self.returncode is not None:
            return describe_exit(self.returncode)
        return "running" if self.running else "starting"

    # -- lifecycle -----------------------------------------------------------------------------

    def on_resize(self, event: events.Resize) -> None:
        columns, lines = self.size
        if columns < 1 or lines < 1:
            return  # hidden (zoomed away) or not laid out yet: keep the old size
        if self.screen_model is None:
            if self.autostart:
                self._start(columns, lines)
            return
        if (columns, lines) == (self.screen_model.columns, self.screen_model.lines):
            return
        self.screen_model.resize(columns, lines)
        if self.running:
            assert self.process is not None
            self.process.resize(columns, lines)
        self._strips.clear()
        self._clamp_scroll()
        self.refresh()

    def launch(self, spec: LaunchSpec | None = None) -> None:
        """Start the program (``spec``, if given, replaces the one it runs): now if the view has a size,
        else as soon as it gets one. For a view made with ``autostart=False``, and to restart a pane
        whose launch changed (a new role for a CLI that applies it on restart)."""
        if spec is not None:
            self.spec = spec
        self.autostart = True
        self.restart()

    def restart(self) -> None:
        """Start the program again on a fresh screen (after it exited or failed)."""
        if self.running:
            raise RuntimeError("the program is still running; close it first")
        columns, lines = self.size
        if self.screen_model is not None:
            columns, lines = self.screen_model.columns, self.screen_model.lines
        if columns < 1 or lines < 1:
            self.screen_model = None  # starts on the first real size
            return
        self._start(columns, lines)

    def _start(self, columns: int, lines: int) -> None:
        self.screen_model = TerminalScreen(columns, lines, scrollback=self.scrollback, reply=self._reply)
        self.returncode = None
        self.spawn_error = None
        self.history_offset = 0
        self.scroll_mode = False
        self._title = ""
        self._history_size = 0
        self._strips.clear()
        self.remove_class("-exited", "-failed")
        try:
            self.process = PtyProcess.spawn(
                self.spec, columns=columns, lines=lines, on_output=self._on_output, on_exit=self._on_exit
            )
        except SpawnError as exc:
            self.process = None
            self.spawn_error = str(exc)
            message = "\r\n".join(textwrap.wrap(str(exc), columns, break_on_hyphens=False))
            self.screen_model.feed(f"\x1b[1;31m{message}\x1b[0m\r\n".encode())
            self.add_class("-failed")
            self.refresh()
            self.post_message(self.SpawnFailed(self, str(exc)))
            return
        self.refresh()
        self.post_message(self.Started(self))

    async def close(self) -> None:
        """End the program and everything it started (SIGHUP, then SIGKILL after a grace period)."""
        if self.process is not None:
            await self.process.aclose()

    def on_mount(self) -> None:
        self.typing.join(self)

    async def on_unmount(self) -> None:
        self.typing.leave(self)
        for handle in (self._frame_handle, self._resume_handle):
            if handle is not None:
                handle.cancel()
        await self.close()

    # -- output and frames ---------------------------------------------------------------------

    def _reply(self, data: bytes) -> None:
        """Answers the screen owes the program (cursor position, device attributes, ...)."""
        if self.running:
            assert self.process is not None
            self.process.write(data)

    def _on_output(self, data: bytes) -> None:
        assert self.screen_model is not None
        now = asyncio.get_running_loop().time()
        if now - self._feed_window >= FEED_WINDOW:
            self._feed_window, self._feed_seconds = now, 0.0
        started = time.perf_counter()
        self.last_output = time.monotonic()
        self.screen_model.feed(data)
        self._feed_seconds += time.perf_counter() - started
        if self._feed_seconds > FEED_BUDGET:
            self._pause_reading_until(self._feed_window + FEED_WINDOW)
        self._schedule_frame()

    def _pause_reading_until(self, when: float) -> None:
        """Stop reading the program's output until ``when`` (event-loop time); a later ``when`` wins."""
        if self.process is None:
            return
        loop = asyncio.get_running_loop()
        if self._resume_handle is not None:
            if self._resume_at >= when:
                return
            self._resume_handle.cancel()
        self.process.pause_reading()
        self._resume_at = when
        self._resume_handle = loop.call_later(max(0.0, when - loop.time()), self._resume_reading)

    def _resume_reading(self) -> None:
        self._resume_handle = None
        if self.process is not None:
            self.process.resume_reading()

    def _on_exit(self, returncode: int) -> None:
        self.returncode = returncode
        if self._resume_handle is not None:
            self._resume_handle.cancel()
            self._resume_handle = None
        self.add_class("-exited")
        self._frame()
        self.post_message(self.Exited(self, returncode))

    def _yield_until(self, until: float) -> None:
        """The user typed elsewhere: if streaming, pause reading and drawing until ``until`` — but
        never for longer than two frame intervals since the last frame, so a flood slows, not stops."""
        loop = asyncio.get_running_loop()
        if not self._busy or self.process is None or until - self._last_frame > 2 * self._frame_interval:
            return
        self._pause_reading_until(until)
        if self._frame_handle is not None:
            self._frame_handle.cancel()
        self._frame_due = until
        self._frame_handle = loop.call_later(until - loop.time(), self._frame)

    def _schedule_frame(self, delay: float | None = None) -> None:
        """A frame as soon as the frame rate allows (or after ``delay``); an earlier one wins."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        if delay is None:
            delay = 0.0 if self._typed else max(0.0, self._last_frame + self._frame_interval - now)
        if self._frame_handle is not None:
            if self._frame_due <= now + delay:
                return
            self._frame_handle.cancel()
        self._frame_due = now + delay
        self._frame_handle = loop.call_later(delay, self._frame)

    def _frame(self) -> None:
        if self._frame_handle is not None:
            self._frame_handle.cancel()
            self._frame_handle = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        screen = self.screen_model
        if screen is None:
            return
        if screen.synchronized_output and self.running:
            if self._sync_since is None:
                self._sync_since = now
            if now - self._sync_since < SYNC_TIMEOUT:
                self._schedule_frame(self._sync_since + SYNC_TIMEOUT - now)
                return
        else:
            self._sync_since = None
        self._last_frame = now
        self._typed = False
        self._repaint(screen)

    def _repaint(self, screen: TerminalScreen) -> None:
        dirty = screen.take_dirty()
        history = screen.history_size
        if history != self._history_size:
            if self.history_offset:  # keep the lines the user is reading in place
                self.history_offset = max(0, min(self.history_offset + history - self._history_size, history))
                self._post_scroll()
            self._history_size = history
        cursor_row = screen.cursor.y
        self._busy = dirty is None
        self._frame_interval = 1 / (BUSY_FRAME_RATE if self._busy else FRAME_RATE)
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
        if screen.title != self._title:
            self._title = screen.title
            self.post_message(self.TitleChanged(self, self.program_title))

    def _refresh_rows(self, rows: set[int]) -> None:
        width = self.size.width
        regions = []
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
            fg, bg = style.fg, style.bg
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
        if not self.running or self.screen_model is None:
            return
        data = encode_key(event.key, application_cursor=self.screen_model.application_cursor_keys)
        if data is None and event.character is not None and event.character.isprintable():
            data = event.character.encode()
        if data is None:
            return
        event.stop()
        event.prevent_default()
        self.send(data)
        self.post_message(self.InputSent(self, event.key, event.character or ""))

    def send(self, data: bytes) -> None:
        """Write ``data`` to the program as typed input; the view jumps back to the live screen."""
        if not self.running:
            return
        assert self.process is not None
        self.scroll_to_live()
        self._typed = True
        self.typing.typed(self)
        self.process.write(data)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._base_rich_style = None

    def on_paste(self, event: events.Paste) -> None:
        event.stop()
        if self.running and self.screen_model is not None:
            bracketed = self.screen_model.bracketed_paste
            self.send(encode_paste(event.text, bracketed=bracketed))
            self.post_message(self.InputSent(self, None, event.text, bracketed=bracketed))

    def on_focus(self) -> None:
        self._report_focus(True)

    def on_blur(self) -> None:
        self._report_focus(False)

    def _report_focus(self, focused: bool) -> None:
        screen = self.screen_model
        if screen is None:
            return
        if self.running and screen.focus_events:
            assert self.process is not None
            self.process.write(encode_focus(focused))
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
        row = offset.y - self.history_offset if offset is not None else None
        if row is None or not -screen.history_size <= row < screen.lines:
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
        if data is not None:
            assert self.process is not None
            self.process.write(data)
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
