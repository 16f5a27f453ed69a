"""A question answered in words: a commit message, or a name typed out to confirm losing work."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, Label

from polter.window.plain_app import plain
from polter.window.question import QuestionScreen

__all__ = ["TextEchoScreen"]


class TextEchoScreen(QuestionScreen[str | None]):
    """Dismisses with the text typed (stripped) on enter, or None on escape. With ``expected``, enter
    is accepted only for exactly that text ("type the branch name to confirm"): a near miss is refused,
    never taken as a yes.

    | Key | Does |
    | :- | :- |
    | enter | answer |
    | escape | cancel |
    """

    DEFAULT_CSS = """
    TextEchoScreen {
        align: center middle;
        & > #dialog {
            width: 76;
            max-width: 100%;
            height: auto;
            padding: 1 2;
            border: thick $warning 60%;
            background: $surface;
        }
        & #question { width: 100%; margin-bottom: 1; }
        & #detail { width: 100%; color: $text-muted; margin-bottom: 1; }
        & #mismatch { width: 100%; color: $text-error; height: auto; }
    }
    """

    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]

    def __init__(self, question: str, detail: str = "", *, placeholder: str = "", expected: str | None = None) -> None:
        super().__init__()
        self.question = question
        self.detail = detail
        self.placeholder = placeholder
        self.expected = expected

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Label(plain(self.question), id="question")
            if self.detail:
                yield Label(plain(self.detail), id="detail")
            yield Input(placeholder=self.placeholder, id="answer")
            yield Label("", id="mismatch")

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        text = event.value.strip()
        if not text:
            return
        if self.expected is not None and text != self.expected:
            self.query_one("#mismatch", Label).update(plain(f"that is not {self.expected!r}; escape cancels"))
            return
        self.dismiss(text)

    def action_cancel(self) -> None:
        self.dismiss(None)
