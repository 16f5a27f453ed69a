"""The host's yes/no questions (may a project's setup command run?), each shown in a dialog until it is
answered here, answered in another window, or nobody answered in time."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from polter.window.confirm import ConfirmScreen
from polter.wire import messages as wire

if TYPE_CHECKING:
    from polter.window.session_screen import SessionScreen

__all__ = ["HostQuestions"]


class HostQuestions:
    """The questions shown on ``screen``, by id."""

    def __init__(self, screen: SessionScreen) -> None:
        self.screen = screen
        self._shown: dict[str, ConfirmScreen] = {}

    def asked(self, question: wire.Question) -> None:
        dialog = ConfirmScreen(question.text, question.detail, yes=question.yes, no=question.no)
        self._shown[question.id] = dialog

        def answered(answer: bool | None) -> None:
            if self._shown.pop(question.id, None) is not None:
                self.screen.session.answer_question(question.id, bool(answer))

        self.screen.app.push_screen(dialog, answered)

    def closed(self, closed: wire.QuestionClosed) -> None:
        """Decided elsewhere, or nobody answered in time: the dialog goes (its answer would count for nothing)."""
        if closed.answer is None:
            self._withdraw(closed.id, "Nobody answered in time", severity="warning")
        else:
            self._withdraw(closed.id, "Answered in another window")

    def gone(self, question: wire.Question) -> None:
        """Decided while the link to the session's host was down (answered in another window, or not in time)."""
        self._withdraw(question.id, "Decided while this window was away")

    def _withdraw(
        self, question_id: str, why: str, *, severity: Literal["information", "warning"] = "information"
    ) -> None:
        dialog = self._shown.pop(question_id, None)
        if dialog is None:
            return
        dialog.withdraw(False)
        self.screen.notify(f"{why}: {dialog.question}", severity=severity, timeout=10)
