"""Leaving a session: detach (the programs keep running) or end them. Dismisses with the choice."""

from __future__ import annotations

from typing import Literal

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Label

from polter.window.plain_app import plain
from polter.window.question import QuestionScreen

__all__ = ["LeaveChoice", "LeaveScreen"]

LeaveChoice = Literal["detach", "end"]


class LeaveScreen(QuestionScreen[LeaveChoice | None]):
    """Prefix then ``q``: the session outlives the window unless the human ends its programs.

    | Key | Does |
    | :- | :- |
    | d | detach: close this window, the programs keep running (`polter attach` brings it back) |
    | e | end every program and the session |
    | escape | neither |
    """

    DEFAULT_CSS = """
    LeaveScreen {
        align: center middle;
        & > #dialog {
            width: auto;
            max-width: 76;
            height: auto;
            padding: 1 2;
            border: thick $warning 60%;
            background: $surface;
        }
        & #question { width: auto; max-width: 100%; margin-bottom: 1; }
        & #detail { width: auto; max-width: 100%; color: $text-muted; margin-bottom: 1; }
        & #buttons { width: 100%; height: auto; align-horizontal: right; }
        & Button { margin-left: 2; }
    }
    """

    BINDINGS = [
        Binding("d", "choose('detach')", "Detach", show=False),
        Binding("e", "choose('end')", "End", show=False),
        Binding("escape", "choose(None)", "Cancel", show=False),
        Binding("left,right", "app.focus_previous", show=False),
    ]

    def __init__(self, session: str, running: list[str]) -> None:
        super().__init__()
        self.session = session
        self.running = running

    def compose(self) -> ComposeResult:
        count = len(self.running)
        with Vertical(id="dialog"):
            if count:
                programs = f"{count} program{'s' if count > 1 else ''}"
                yield Label(plain(f"Leave session {self.session}? {programs} still running."), id="question")
                yield Label(
                    plain(
                        f"Panes {', '.join(self.running)}. Detach keeps them running (polter attach {self.session} "
                        "brings this back); End stops them all."
                    ),
                    id="detail",
                )
            else:
                yield Label(plain(f"Leave session {self.session}?"), id="question")
            with Horizontal(id="buttons"):
                yield Button("Detach (d)", variant="primary", id="detach")
                yield Button(f"End {'them' if count else 'it'} (e)", variant="warning", id="end")
                yield Button("Cancel (esc)", id="cancel")

    def on_mount(self) -> None:
        self.query_one("#detach", Button).focus()

    def action_choose(self, choice: LeaveChoice | None) -> None:
        self.dismiss(choice)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        match event.button.id:
            case "detach" | "end" as choice:
                self.dismiss(choice)
            case _:
                self.dismiss(None)
