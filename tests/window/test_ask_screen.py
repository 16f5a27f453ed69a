"""The ask modal alone: the quiet-period guard (with a clock the test moves), answers, the queue."""

from __future__ import annotations

import asyncio

import pytest
from support.ui import AskApp, Clock, make_ask
from textual.geometry import Region
from textual.widgets import Button, Static

from polter.window.asks import AskQueue
from polter.window.ask_screen import AskScreen, summarize_arguments


async def test_keys_in_the_first_half_second_are_ignored_and_restart_the_quiet_period() -> None:
    clock = Clock()
    app = AskApp(make_ask(), clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press("a", "enter", "escape")  # typed on as the modal appeared
        assert isinstance(app.screen, AskScreen) and app.answers == []
        clock.now += 0.4
        await pilot.press("p")  # 0.4 s after the last key: still ignored, and the quiet period restarts
        clock.now += 0.4
        await pilot.press("d")  # 0.8 s after opening, only 0.4 s after the last key
        assert isinstance(app.screen, AskScreen) and app.answers == []
        clock.now += 0.5
        await pilot.press("p")
        await pilot.pause()
    assert app.answers == ["allow_pane"]


async def test_a_click_too_soon_is_ignored_too_and_enter_denies_by_default() -> None:
    clock = Clock()
    app = AskApp(make_ask(), clock=clock)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        assert await pilot.click("#allow_once")
        assert app.answers == [] and app.focused is app.modal.query_one("#deny", Button)
        clock.now += 0.6
        await pilot.press("enter")
        await pilot.pause()
    assert app.answers == ["deny"]


@pytest.mark.parametrize(("key", "answer"), [("a", "allow_once"), ("p", "allow_pane"), ("d", "deny"), ("escape", None)])
async def test_each_answer_key(key: str, answer: str | None) -> None:
    app = AskApp(make_ask(), guard=0.0)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        await pilot.press(key)
        await pilot.pause()
    assert app.answers == [answer]


async def test_the_modal_sits_over_the_pane_that_asked_and_says_what_is_asked() -> None:
    region = Region(30, 12, 70, 18)
    app = AskApp(make_ask(), region=region, position=(1, 3), pane_label="Pane 4 reviewer")
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.pause()
        dialog = app.modal.query_one("#ask-dialog")
        assert region.contains_region(dialog.region), (dialog.region, region)
        assert dialog.border_title == "Pane 4 reviewer · reviewer asks"
        text = " ".join(str(widget.render()) for widget in app.modal.query(Static))
        assert "github/create_comment" in text and "pull: 42" in text and "ask 1 of 3" in text
        assert "denied by itself in 118 s" in text


def test_arguments_are_summarised_readably() -> None:
    assert summarize_arguments({}) == "(no arguments)"
    summary = summarize_arguments({"enabled": True, "who": "Ann", "text": "x" * 200, "nested": {"a": [1, 2]}})
    assert summary.splitlines()[:2] == ["enabled: true", "who: Ann"]
    assert summary.splitlines()[2].endswith("…") and len(summary.splitlines()[2]) <= 80
    assert summary.splitlines()[3] == 'nested: {"a": [1, 2]}'
    many = summarize_arguments({f"k{i}": i for i in range(12)})
    assert many.splitlines()[-1] == "… and 4 more"


async def test_the_queue_keeps_order_and_drops_what_is_over() -> None:
    loop = asyncio.get_running_loop()
    queue = AskQueue()
    first, second = loop.create_future(), loop.create_future()
    assert queue.add(make_ask(id="a1"), first) is not None
    assert queue.add(make_ask(id="a2", pane="p3"), second) is not None
    assert queue.add(make_ask(id="a1"), first) is None
    assert [item.ask.id for item in queue] == ["a1", "a2"] and queue.position("a2") == (2, 2)
    assert queue.count("p2") == 1 and queue.count("p3") == 1
    first.set_result("deny")
    assert [item.ask.id for item in queue] == ["a2"] and queue.get("a1") is None
    second.cancel()
    assert len(queue) == 0 and queue.first() is None
