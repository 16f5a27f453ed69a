"""A screen that draws the echo of a key at once instead of on Textual's next update slot.

Textual composes a screen on a timer (``TEXTUAL_FPS``, 120 Hz in Polter). The timer pauses while nothing
changes, and once it has paused past a slot, the slot it waits for after its next tick is the one after
next: one to two intervals away. So when another pane's frame was drawn just before a pane's echo
arrived, the echo waited for the slot after next (``benchmarks/terminal_latency.py`` measures it; the
figures are in docs/terminal.md). A flooding pane cannot be helped by drawing sooner; the human waiting for
the character they typed can.

A :class:`~polter.window.terminal_view.TerminalView` that gets a frame soon after the human typed into it
posts :class:`~polter.window.terminal_view.TerminalView.Echo` to its screen. A :class:`EchoScreen` then
composes on the idle that follows that widget's next update, as Textual's timer would have, only now.
Every other change still waits for the timer, so a flood is still drawn at the panes' own pace. What that
composition writes goes to the terminal from the event loop's thread, not Textual's writer thread
(:mod:`polter.window.direct_writes`).

The one Textual internal this touches is ``Screen._on_timer_update`` (the timer's own callback: compose
the dirty widgets and pause the timer). ``tests/window/test_echo_screen.py`` fails naming the Textual
version if it changes.
"""

from __future__ import annotations

from typing import TypeVar

from textual import events
from textual.message import Message
from textual.messages import Update
from textual.screen import Screen
from textual.widget import Widget

from polter.window.direct_writes import direct_writer
from polter.window.terminal_view import TerminalView

__all__ = ["EchoScreen"]

ResultType = TypeVar("ResultType")


class EchoScreen(Screen[ResultType]):
    """A screen that composes at once after a widget's update the human waits for (an echo), and then tells
    the app (:class:`EchoDrawn`)."""

    class EchoDrawn(Message):
        """An echo was just drawn: the human's next key is likely tens of milliseconds away."""

    def __init__(self, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._echoes: set[Widget] = set()
        """Widgets whose next update is an echo: it is drawn on the idle after it."""
        self._draw_now = False

    def on_terminal_view_echo(self, message: TerminalView.Echo) -> None:
        self._echoes.add(message.terminal)

    def on_update(self, message: Update) -> None:
        """Runs before Textual's own handler (a subclass's handler comes first), which marks the widget
        dirty and asks for the idle that :meth:`on_idle` draws in."""
        if message.widget in self._echoes:
            self._echoes.discard(message.widget)
            self._draw_now = True

    def on_idle(self, event: events.Idle) -> None:
        if self._draw_now:
            self._draw_now = False
            writer = direct_writer(self.app)
            if writer is None:
                self._on_timer_update()
            else:
                with writer.at_once():  # the echo's bytes leave now, not when the writer thread gets to run
                    self._on_timer_update()
            self.app.post_message(self.EchoDrawn())
