"""A modal whose question can end without the human: answered in another window, or nobody answered in time."""

from __future__ import annotations

from typing import TypeVar

from polter.window.question import QuestionScreen

__all__ = ["WithdrawableScreen"]

ResultType = TypeVar("ResultType")


class WithdrawableScreen(QuestionScreen[ResultType]):
    """Textual's ``dismiss`` takes off the top screen, whichever it is. So a modal withdrawn under another one hides
    at once (its dimmed backdrop too) and goes once it is on top again. Its callback then gets the result given to
    :meth:`withdraw`. A modal withdrawn before it has even mounted goes too."""

    DEFAULT_CSS = """
    WithdrawableScreen.-withdrawn { background: transparent; & > * { display: none; } }
    """

    withdrawn = False
    """The question is over: an answer from here would count for nothing."""

    def withdraw(self, result: ResultType) -> None:
        """Close with ``result`` without anyone answering (once; not for a modal already gone)."""
        if self.withdrawn or self not in self.app.screen_stack:
            return
        self.withdrawn, self._withdrawn_result = True, result
        if self.app.screen is self:
            self.dismiss(result)
        else:
            self.add_class("-withdrawn")

    def on_screen_resume(self) -> None:
        if self.withdrawn and self.app.screen is self:  # not when it was withdrawn on top, and so dismissed, already
            self.dismiss(self._withdrawn_result)
