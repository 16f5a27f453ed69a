"""A program run in the test's own process as a pane widget's source: no session host in between."""

from __future__ import annotations

from polter.host.hosted_terminal import HostedTerminal
from polter.window.terminal_source import FrameSink, ScreenReader

__all__ = ["LocalTerminal"]


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
