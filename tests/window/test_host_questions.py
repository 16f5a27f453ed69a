"""The host's yes/no questions in a window: a dialog withdrawn (decided in another window, or not in time) goes
even when another dialog sits over it, and only it goes."""

from __future__ import annotations

import asyncio
from typing import Any

from support.dialogs import confirm_shown
from support.panes import bash_spec
from support.session import hosted, window
from support.waiting import wait_until
from textual.app import App

from polter.window.confirm import ConfirmScreen
from polter.window.session_screen import SessionScreen
from polter.wire import methods
from polter.wire.client import SessionClient


def dialogs(app: App[Any]) -> list[str]:
    """The questions of the dialogs in the window's stack that show (a withdrawn one under another hides; one
    pushed but not yet composed shows nothing yet: a CI run under load queried its box before it was mounted)."""
    return [
        screen.question
        for screen in app.screen_stack
        if isinstance(screen, ConfirmScreen)
        and any(box.styles.display != "none" for box in screen.query("#dialog"))
    ]


def stacked(app: App[Any]) -> int:
    return sum(isinstance(screen, ConfirmScreen) for screen in app.screen_stack)


async def test_a_question_decided_in_another_window_under_another_dialog_goes_and_the_top_one_stays() -> None:
    async with hosted([bash_spec()], name="under") as host, window(host) as (app, pilot):
        first = asyncio.create_task(host.questions.ask("Setup", "Run the first?"))
        await wait_until(lambda: confirm_shown(app) and dialogs(app) == ["Run the first?"], message="the first")
        second = asyncio.create_task(host.questions.ask("Setup", "Run the second?"))
        await wait_until(
            lambda: confirm_shown(app) and dialogs(app) == ["Run the first?", "Run the second?"],
            message=lambda: f"the second over the first: {dialogs(app)}",
        )
        other = await SessionClient.connect(host.files, on_event=lambda event: None)  # another window decides
        try:
            question = next(q for q in other.state.questions if q.text == "Run the first?")
            assert await other.call(methods.AnswerQuestionParams(id=question.id, answer=True)) is True
        finally:
            await other.aclose()
        assert await first is True
        await wait_until(
            lambda: dialogs(app) == ["Run the second?"], message=lambda: f"the first's dialog gone: {dialogs(app)}"
        )
        assert isinstance(app.screen, ConfirmScreen) and app.screen.question == "Run the second?"
        await pilot.press("n")  # the one on top answers its own question, not the withdrawn one's
        assert await second is False
        await wait_until(lambda: isinstance(app.screen, SessionScreen), message=lambda: f"no dialog: {app.screen}")
        assert stacked(app) == 0


async def test_a_question_nobody_answered_in_time_under_another_dialog_goes_when_that_one_is_answered() -> None:
    async with hosted([bash_spec()], name="timed") as host, window(host) as (app, pilot):
        host.questions.timeout = 1.0
        first = asyncio.create_task(host.questions.ask("Setup", "Run the first?"))
        await wait_until(lambda: confirm_shown(app) and dialogs(app) == ["Run the first?"], message="the first")
        host.questions.timeout = 120.0
        second = asyncio.create_task(host.questions.ask("Setup", "Run the second?"))
        await wait_until(lambda: dialogs(app) == ["Run the first?", "Run the second?"], message="the second")
        assert await first is None  # nobody answered the first in time
        await wait_until(lambda: dialogs(app) == ["Run the second?"], message=lambda: f"withdrawn: {dialogs(app)}")
        await wait_until(lambda: confirm_shown(app), message="the second's dialog on top")
        await pilot.press("y")
        assert await second is True
        await wait_until(lambda: isinstance(app.screen, SessionScreen), message=lambda: f"no dialog: {app.screen}")
        assert stacked(app) == 0
