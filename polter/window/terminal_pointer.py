"""A pane's mouse: reports to the program when it asked for them, else the wheel scrolls and clicks select.

:class:`Pointer` belongs to one :class:`~polter.window.terminal_view.TerminalView`, whose event handlers hand
it the events.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from textual import events

from polter.terminal.keys import MouseButton, MouseKind, encode_key, encode_mouse
from polter.window.selection import line_number, word_or_line

if TYPE_CHECKING:
    from polter.window.terminal_view import TerminalView

__all__ = ["WHEEL_LINES", "Pointer"]

WHEEL_LINES: Final = 3


class Pointer:
    """The mouse of ``view``: the program's when it tracks the mouse (shift bypasses it, as in xterm)."""

    def __init__(self, view: TerminalView) -> None:
        self.view = view

    def to_program(self, event: events.MouseEvent, kind: MouseKind, button: MouseButton) -> bool:
        """Report the event if the program enabled mouse tracking; whether it was the program's."""
        view = self.view
        screen = view.screen_model
        if screen is None or not view.running or not screen.mouse_tracking or event.shift:
            return False
        event.stop()
        offset = event.get_content_offset_capture(view)
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
            view.send(data, scroll_to_live=False)
        return True

    def wheel(self, event: events.MouseEvent, button: MouseButton) -> None:
        """The scrollback scrolls; on the alternate screen the program gets arrow keys (pagers, editors)."""
        event.stop()
        view = self.view
        screen = view.screen_model
        if screen is None or self.to_program(event, "press", button):
            return
        up = button == MouseButton.WHEEL_UP
        if screen.alternate_screen and view.running and not event.shift:
            key = encode_key("up" if up else "down", application_cursor=screen.application_cursor_keys)
            assert key is not None
            view.send(key * WHEEL_LINES)
        else:
            view.scroll_history(WHEEL_LINES if up else -WHEEL_LINES)

    def click(self, event: events.Click) -> None:
        """A double click selects the word under the pointer, a triple click the line, as in a terminal
        (Textual's default would select the whole scrollback)."""
        if event.chain < 2:
            return
        event.prevent_default()
        view = self.view
        screen = view.screen_model
        if screen is None or (screen.mouse_tracking and view.running and not event.shift):
            return  # the program has the mouse
        offset = event.get_content_offset(view)
        if offset is None:
            return
        row = offset.y - view.history_offset
        if not -screen.history_size <= row < screen.lines:
            return
        selection = word_or_line(screen.text(row), line_number(screen, row), offset.x, event.chain)
        if selection is not None:
            view.screen.selections = {view: selection}
            view.post_message(view.Selected(view))
