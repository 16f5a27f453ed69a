"""A yes/no question in a small dialog; dismisses with ``True`` only for an explicit yes."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Label

from polter.window.plain_app import plain
from polter.window.withdrawable import WithdrawableScreen

__all__ = ["ConfirmScreen"]


class ConfirmScreen(WithdrawableScreen[bool]):
    """Ask before doing something that cannot be undone (closing a pane whose program still runs).

    | Key | Does |
    | :- | :- |
    | y | yes |
    | n, escape | no |
    | tab, arrows, enter | choose a button (no is focused first) |
    """

    DEFAULT_CSS = """
    ConfirmScreen {
        align: center middle;
        & > #dialog {
            width: auto;
            max-width: 70;
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

    AUTO_FOCUS = "#no"
    """Focused as the dialog shows (a query in ``on_mount`` fails for a dialog withdrawn before it mounted)."""

    BINDINGS = [
        Binding("y", "answer(True)", "Yes", show=False),
        Binding("n,escape", "answer(False)", "No", show=False),
        Binding("left,right", "app.focus_previous", show=False),
    ]

    def __init__(self, question: str, detail: str = "", *, yes: str = "Yes", no: str = "No") -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        self.yes_label = yes
        self.no_label = no

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(plain(self.question), id="question")
            if self.detail:
                yield Label(plain(self.detail), id="detail")
            with Horizontal(id="buttons"):
                yield Button(f"{self.yes_label} (y)", variant="warning", id="yes")
                yield Button(f"{self.no_label} (n)", id="no")

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")
