"""A pane: a header over a terminal. It keeps the header in step with the program in the terminal."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import reactive

from polter.terminal.launch import LaunchSpec
from polter.terminal.widget import TerminalView
from polter.ui.pane_header import PaneHeader

__all__ = ["Pane"]


class Pane(Vertical):
    """One program in the multiplexer, with its header. ``number`` is its 1-based place on screen."""

    DEFAULT_CSS = """
    Pane {
        width: 1fr;
        height: 1fr;
        &:focus-within > PaneHeader {
            background: $primary;
            color: $text;
            & > #pane-status { color: $text; }
        }
    }
    """

    number: reactive[int] = reactive(1)

    def __init__(self, spec: LaunchSpec, *, number: int = 1, scrollback: int = 10_000) -> None:
        super().__init__()
        self.spec = spec
        self.set_reactive(Pane.number, number)
        self.header = PaneHeader()
        self.header.set_reactive(PaneHeader.number, number)
        self.terminal = TerminalView(spec, scrollback=scrollback)
        self.header.set_reactive(PaneHeader.title, self.terminal.program_title)

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.terminal

    def watch_number(self, number: int) -> None:
        self.header.number = number

    @property
    def running(self) -> bool:
        return self.terminal.running

    def on_click(self) -> None:
        """A click on the header (the terminal focuses itself) also makes this the active pane."""
        self.terminal.focus()

    @on(TerminalView.Started)
    @on(TerminalView.Exited)
    @on(TerminalView.SpawnFailed)
    def _status_changed(self) -> None:
        terminal = self.terminal
        self.header.status = terminal.status_text
        if terminal.spawn_error is not None:
            self.header.status_kind = "failed"
        elif terminal.returncode is not None:
            self.header.status_kind = "exited"
        else:
            self.header.status_kind = "running"
        self.header.title = terminal.program_title

    @on(TerminalView.TitleChanged)
    def _title_changed(self, event: TerminalView.TitleChanged) -> None:
        self.header.title = event.title

    @on(TerminalView.ScrollChanged)
    def _scroll_changed(self, event: TerminalView.ScrollChanged) -> None:
        if event.scroll_mode or event.offset:
            label = "scroll" if event.scroll_mode else "history"
            self.header.position = f"{label} {event.offset}/{event.history}"
        else:
            self.header.position = ""
