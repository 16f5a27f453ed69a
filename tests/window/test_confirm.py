"""The confirmation dialog on its own: whenever its question ends, the window goes on."""

from __future__ import annotations

import asyncio

import pytest
from textual.app import App
from textual.widgets import Button

from polter.window.confirm import ConfirmScreen


@pytest.mark.parametrize("shown_for", ["no time", "one tick", "until it shows"])
async def test_a_dialog_withdrawn_at_any_moment_of_its_showing_goes_and_the_window_lives(shown_for: str) -> None:
    """A question answered in another window, or out of time, the moment its dialog appears: the dialog goes
    (the window once died of a query for its buttons before they were mounted, then of a second dismissal)."""
    app: App[None] = App()
    async with app.run_test() as pilot:
        base = app.screen
        for number in range(5):
            dialog = ConfirmScreen(f"Run setup {number}?")
            app.push_screen(dialog)
            if shown_for == "one tick":
                await asyncio.sleep(0)
            elif shown_for == "until it shows":
                await pilot.pause()
                assert isinstance(app.focused, Button) and app.focused.id == "no", "no is focused first"
            dialog.withdraw()
            await pilot.pause()
            assert app.screen is base, f"dialog {number} withdrawn after {shown_for}: {app.screen_stack}"


async def test_a_dialog_withdrawn_under_another_goes_when_that_one_is_answered() -> None:
    app: App[None] = App()
    answers: list[bool | None] = []
    async with app.run_test() as pilot:
        base = app.screen
        under, over = ConfirmScreen("First?"), ConfirmScreen("Second?")
        app.push_screen(under, answers.append)
        app.push_screen(over, answers.append)
        await pilot.pause()
        under.withdraw()
        await pilot.pause()
        assert app.screen is over and under.has_class("-withdrawn")
        await pilot.press("y")
        await pilot.pause()
        assert app.screen is base and answers == [True, False]
