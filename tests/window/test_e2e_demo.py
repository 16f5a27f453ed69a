"""``polter --demo`` end to end: the TShock simulator, the Terraria server behind the real gateway, the
scripted agents under the Terraria roles. The newcomer's story: rain comes, the agent's uninvited
hardmode is refused by the keyword gate, and once the human says "hardmode" the gateway asks."""

from __future__ import annotations

import re
from typing import Any

import pytest
from support.keys import type_keys
from support.panes import screen_text, wait_for_text
from support.privates import notification_messages
from support.session import hosted, window
from support.waiting import wait_until
from textual.pilot import Pilot

from polter.adapters.plugins import discover
from polter.demo.launch import demo_launch
from polter.demo.agent import plan, wrapped
from polter.window.ask_screen import AskScreen
from polter.window.pane import PaneWidget

pytestmark = pytest.mark.e2e


def test_the_scripted_agent_follows_rain_with_an_uninvited_hardmode() -> None:
    assert [(step.tool, step.arguments) for step in plan("make it rain please")] == [
        ("world_rain", {"enabled": True}),
        ("world_hardmode", {"enabled": True}),
    ]
    assert [step.tool for step in plan("开启困难模式")] == ["world_hardmode"]
    assert plan("turn hardmode off")[0].arguments == {"enabled": False}
    assert plan("kick Ann")[0].arguments == {"player": "Ann", "reason": "asked by the admin"}
    assert plan("hello") == []


async def say(pilot: Pilot[None], pane: PaneWidget, line: str) -> None:
    pane.terminal.focus()
    await pilot.pause()
    await type_keys(pilot, line, enter=True)


def test_the_scripted_agent_wraps_its_words_to_the_pane_not_mid_word() -> None:
    refusal = (
        "  \x1b[31m✗ Polter refused terraria/world_hardmode (forbidden, not broken): say one of "
        '"hardmode", "开启困难模式", "关闭困难模式".\x1b[0m'
    )
    lines = wrapped(refusal, "    ", width=30).splitlines()
    from rich.cells import cell_len

    plain = [re.sub(r"\x1b\[[0-9;]*m", "", line) for line in lines]
    assert all(cell_len(line) <= 30 for line in plain) and all(line.startswith("    ") for line in plain[1:])
    assert " ".join(" ".join(plain).split()) == " ".join(re.sub(r"\x1b\[[0-9;]*m", "", refusal).split())  # no word lost
    assert plain[:2] == ["  ✗ Polter refused", "    terraria/world_hardmode"]
    assert (
        wrapped("  make it rain      rain, then hardmode", "    ", width=80)
        == "  make it rain      rain, then hardmode"
    )


async def test_the_demo_tells_the_whole_story(monkeypatch: Any) -> None:
    async with (
        hosted(launch=demo_launch(discover(entry_points=False))) as host,
        window(host, size=(180, 50), ready=False) as (app, pilot),
    ):
        await wait_until(
            lambda: getattr(app.session_screen, "ready", False) and len(app.session_screen.grid.panes) == 4,
            timeout=90,
            message="the demo to start, its four panes shown",
        )
        admin, moderator, researcher, shell = app.session_screen.grid.panes
        assert [pane.agent.role for pane in (admin, moderator, researcher, shell) if pane.agent] == [
            "terraria-admin",
            "terraria-moderator",
            "terraria-researcher",
            "terraria-researcher",
        ]
        await wait_until(
            lambda: any("make it rain" in message for message in notification_messages(app)), message="the hint"
        )
        for pane in (admin, researcher):
            await wait_for_text(pane.terminal, "you>", timeout=30)

        await say(pilot, admin, "make it rain")
        await wait_for_text(admin.terminal, "Polter refused terraria/world_hardmode", timeout=60)
        text = screen_text(admin.terminal)
        assert "✓" in text.split("world_hardmode")[0], text  # the rain was allowed before the surprise
        assert 'gates["terraria/world_hardmode"]' in text.replace("\n", "")
        assert not isinstance(app.screen, AskScreen)  # refused by code, never asked

        await say(pilot, admin, "now turn on hardmode")
        await wait_until(lambda: isinstance(app.screen, AskScreen), timeout=60, message="the hardmode ask")
        modal = app.screen
        assert (
            isinstance(modal, AskScreen)
            and modal.ask.name == "world_hardmode"
            and modal.ask.arguments == {"enabled": True}
        )
        await wait_until(lambda: modal.armed, message="the quiet period")
        await pilot.press("a")
        await wait_for_text(admin.terminal, "Hardmode is now on", timeout=60)

        await say(pilot, researcher, "make it rain")
        await wait_until(
            lambda: screen_text(researcher.terminal).count("Polter refused") >= 2,
            timeout=60,
            message=lambda: screen_text(researcher.terminal),
        )
