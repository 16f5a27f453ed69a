"""A modal that asks the human something (an ask, a confirmation, a server's form, leaving, a typed answer)."""

from __future__ import annotations

from typing import TypeVar

from textual.screen import ModalScreen

__all__ = ["QuestionScreen"]

ResultType = TypeVar("ResultType")


class QuestionScreen(ModalScreen[ResultType]):
    """No notification covers a question: on a small terminal a toast covered an ask's Deny button. Over one, the
    toasts wait; the ones with time left show again once it goes (Textual's rack sets its own display, so its
    toasts are the ones hidden)."""

    DEFAULT_CSS = """
    QuestionScreen > ToastRack > * { display: none; }
    """
