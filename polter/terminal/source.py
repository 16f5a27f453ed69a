"""What the pane widget draws and types into, and the in-process pane that provides it.

The widget (:mod:`polter.terminal.widget`) starts no process: it renders a :class:`TerminalSource`.
In the app that is a pane of the session host, mirrored from its frames; :class:`LocalTerminal` runs
a program in this process instead (tests, benchmarks, tools that need no session).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from polter.terminal._cursor import Cursor
from polter.terminal._style import Style

if TYPE_CHECKING:
    from polter.terminal.hosted import HostedTerminal

__all__ = ["FrameSink", "LocalTerminal", "ScreenReader", "TerminalSource"]


class ScreenReader(Protocol):
    """What the widget reads of a screen: :class:`~polter.terminal.screen.TerminalScreen` in-process,
    :class:`~polter.terminal.mirror.MirrorScreen` in a window of the session."""

    @property
    def columns(self) -> int: ...
    @property
    def lines(self) -> int: ...
    @property
    def history_size(self) -> int: ...
    @property
    def cursor(self) -> Cursor: ...
    @property
    def reverse_video(self) -> bool: ...
    @property
    def alternate_screen(self) -> bool: ...
    @property
    def mouse_tracking(self) -> int: ...
    @property
    def mouse_sgr(self) -> bool: ...
    @property
    def application_cursor_keys(self) -> bool: ...
    def line(self, y: int) -> list[tuple[str, Style]]: ...
    def text(self, y: int) -> str: ...
    def display(self) -> list[str]: ...


class FrameSink(Protocol):
    """Told when rows of the screen changed (``None``: every row, or a new screen)."""

    def frame(self, dirty: set[int] | None) -> None: ...


class TerminalSource(Protocol):
    """A pane as the widget sees it: a screen to draw (``None`` before it has one) and somewhere to
    send input. It calls ``frame`` on the sink attached to it when rows changed."""

    @property
    def screen(self) -> ScreenReader | None: ...
    @property
    def running(self) -> bool: ...
    def attach(self, sink: FrameSink | None) -> None: ...
    def resize(self, columns: int, lines: int) -> None: ...
    def key(self, key: str, character: str | None) -> bool: ...
    def paste(self, text: str) -> bool: ...
    def send(self, data: bytes) -> bool: ...
    def focus(self, focused: bool) -> None: ...


class LocalTerminal:
    """A :class:`HostedTerminal` in this process as a widget's source: it starts at the first size the
    widget gets, and its frames go straight to the widget."""

    def __init__(self, terminal: HostedTerminal) -> None:
        self.terminal = terminal
        self._sink: FrameSink | None = None
        terminal.on_frame = self._frame

    @property
    def screen(self) -> ScreenReader | None:
        return self.terminal.screen

    @property
    def running(self) -> bool:
        return self.terminal.running

    def attach(self, sink: FrameSink | None) -> None:
        self._sink = sink

    def _frame(self, dirty: set[int] | None) -> None:
        if self._sink is not None:
            self._sink.frame(dirty)

    def resize(self, columns: int, lines: int) -> None:
        if self.terminal.started:
            self.terminal.resize(columns, lines)
        else:
            self.terminal.start(columns, lines)

    def key(self, key: str, character: str | None) -> bool:
        return self.terminal.key(key, character)

    def paste(self, text: str) -> bool:
        return self.terminal.paste(text)

    def send(self, data: bytes) -> bool:
        return self.terminal.send(data)

    def focus(self, focused: bool) -> None:
        self.terminal.focus(focused)
