"""A yes/no question in a small dialog; dismisses with ``True`` only for an explicit yes."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Label

__all__ = ["ConfirmScreen"]


class ConfirmScreen(ModalScreen[bool]):
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
        &.-withdrawn { background: transparent; & > #dialog { display: none; } }
    }
    """

    AUTO_FOCUS = "#no"
    """Focused as the dialog shows; Textual's own, as a query in ``on_mount`` would fail for a dialog withdrawn
    before it mounted (a question answered in another window, or out of time, the moment it appeared)."""

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
        self.withdrawn = False
        """The question is over (decided elsewhere, or not in time): its answer would count for nothing."""

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(self.question, id="question")
            if self.detail:
                yield Label(self.detail, id="detail")
            with Horizontal(id="buttons"):
                yield Button(f"{self.yes_label} (y)", variant="warning", id="yes")
                yield Button(f"{self.no_label} (n)", id="no")

    def withdraw(self) -> None:
        """Close as "no" without anyone answering. Textual takes off only the top screen, so a dialog under
        another one hides now (its dimmed backdrop too) and goes as soon as it is on top again."""
        self.withdrawn = True
        if self.app.screen is self:
            self.dismiss(False)
            return
        self.add_class("-withdrawn")

    def on_screen_resume(self) -> None:
        if self.withdrawn and self.app.screen is self:  # not when it was withdrawn on top, and so dismissed, already
            self.dismiss(False)

    def action_answer(self, answer: bool) -> None:
        self.dismiss(answer)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")
