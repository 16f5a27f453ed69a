"""No notification covers a question the human must answer (on a small terminal a toast covered an ask's Deny)."""

from __future__ import annotations

from collections.abc import Callable

import pytest
import textual
from support.ui import make_ask, make_elicitation
from textual.app import App

from polter.window.ask_screen import AskScreen
from polter.window.confirm import ConfirmScreen
from polter.window.elicitation_screen import ElicitationScreen
from polter.window.leave_screen import LeaveScreen
from polter.window.question import QuestionScreen
from polter.window.text_prompt import TextEchoScreen

QUESTIONS: dict[str, Callable[[], QuestionScreen[object]]] = {
    "ask": lambda: AskScreen(make_ask()),
    "confirmation": lambda: ConfirmScreen("Run the setup command?"),
    "form": lambda: ElicitationScreen(make_elicitation()),
    "leave": lambda: LeaveScreen("main", ["bash", "claude"]),
    "typed answer": lambda: TextEchoScreen("Type the branch name to remove it", expected="polter/a"),
}  # type: ignore[dict-item]


def _toasts_shown(app: App[None]) -> list[str]:
    """The notifications the top screen shows (a modal's backdrop lets the screen under it show through, dimmed
    and under its dialog: only the top screen's own toasts can cover a dialog)."""
    return sorted(str(toast.render()) for toast in app.screen.query("Toast") if toast.region.area)


@pytest.mark.parametrize("question", list(QUESTIONS))
async def test_no_notification_covers_a_question_and_they_show_again_once_it_goes(question: str) -> None:
    """Over a question the toasts wait; the ones with time left show again when it goes (one posted before it,
    one while it showed)."""
    app: App[None] = App()
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        app.notify("Before", timeout=60)
        await pilot.pause()
        assert _toasts_shown(app) == ["Before"]
        dialog = QUESTIONS[question]()
        app.push_screen(dialog)
        await pilot.pause()
        app.notify("During", timeout=60)
        await pilot.pause()
        assert app.screen is dialog
        changed = f"toasts over the question: has Textual {textual.__version__}'s ToastRack changed?"
        assert _toasts_shown(app) == [], changed
        dialog.dismiss(None)
        await pilot.pause()
        assert _toasts_shown(app) == ["Before", "During"]
