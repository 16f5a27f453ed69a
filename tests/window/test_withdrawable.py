"""The modals whose question can end without the human (a confirmation, an ask, a server's form): whenever it
ends, the modal goes and the window goes on."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import pytest
from support.ui import make_ask, make_elicitation
from textual.app import App
from textual.widgets import Button

from polter.window.ask_screen import AskScreen
from polter.window.confirm import ConfirmScreen
from polter.window.elicitation_screen import ElicitationScreen
from polter.window.withdrawable import WithdrawableScreen

MODALS: dict[str, tuple[Callable[[int], WithdrawableScreen[object]], str | None]] = {
    "confirmation": (lambda number: ConfirmScreen(f"Run setup {number}?"), "no"),
    "ask": (lambda number: AskScreen(make_ask()), "deny"),
    "form": (lambda number: ElicitationScreen(make_elicitation()), None),
}  # type: ignore[dict-item]
"""Each modal, and the button focused as it shows."""


@pytest.mark.parametrize("modal", list(MODALS))
@pytest.mark.parametrize("shown_for", ["no time", "one tick", "until it shows"])
async def test_a_modal_withdrawn_at_any_moment_of_its_showing_goes_and_the_window_lives(
    modal: str, shown_for: str
) -> None:
    """Its question answered in another window, or out of time, the moment it appears: it goes (the window once
    died of a query for a dialog's buttons before they were mounted, then of a second dismissal)."""
    make, focused = MODALS[modal]
    app: App[None] = App()
    results: list[object] = []
    async with app.run_test(size=(100, 30)) as pilot:
        base = app.screen
        for number in range(5):
            dialog = make(number)
            app.push_screen(dialog, results.append)
            if shown_for == "one tick":
                await asyncio.sleep(0)
            elif shown_for == "until it shows":
                await pilot.pause()
                if focused is not None:
                    assert isinstance(app.focused, Button) and app.focused.id == focused, "the safe answer first"
            dialog.withdraw(None)
            await pilot.pause()
            assert app.screen is base, f"{modal} {number} withdrawn after {shown_for}: {app.screen_stack}"
    assert results == [None] * 5


async def test_a_modal_withdrawn_under_another_hides_and_goes_when_that_one_is_answered() -> None:
    """Textual's dismiss takes off the top screen, whichever it is: the one over it must stay."""
    app: App[None] = App()
    answers: list[bool | None] = []
    async with app.run_test() as pilot:
        base = app.screen
        under, over = ConfirmScreen("First?"), ConfirmScreen("Second?")
        app.push_screen(under, answers.append)
        app.push_screen(over, answers.append)
        await pilot.pause()
        under.withdraw(False)
        under.withdraw(False)  # once is enough
        await pilot.pause()
        assert app.screen is over and under.has_class("-withdrawn") and answers == []
        await pilot.press("y")
        await pilot.pause()
        assert app.screen is base and answers == [True, False]
        under.withdraw(False)  # gone already: nothing happens
        await pilot.pause()
        assert app.screen is base and answers == [True, False]
