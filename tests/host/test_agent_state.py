"""The header's agent state: from the adapter's ``state()`` when it reads the CLI's screen, else from
screen activity (the rules alone, then real panes under Pilot against the real gateway)."""

from __future__ import annotations

import time
from typing import Any

from support.waiting import wait_until
from support.workspace_app import badges, host_of, panes, run_in, shell_plans, workspace_app

from polter.adapters import AgentState, ScreenView
from polter.adapters.plugins import discover
from polter.host.agent_state import ACTIVE_SECONDS, ECHO_SECONDS, screen_activity

WORKING, IDLE = AgentState.WORKING, AgentState.IDLE
SHELL = discover(entry_points=False).get("shell")


def test_output_of_its_own_is_working_and_quiet_is_idle() -> None:
    assert screen_activity(100.0, last_output=99.5, last_input=90.0, foreground_job=False) == WORKING
    assert (
        screen_activity(100.0, last_output=100.0 - ACTIVE_SECONDS - 0.01, last_input=0.0, foreground_job=False) == IDLE
    )


def test_the_echo_of_the_humans_typing_is_not_work() -> None:
    assert screen_activity(100.0, last_output=99.9, last_input=99.9 - ECHO_SECONDS / 2, foreground_job=False) == IDLE
    assert screen_activity(100.0, last_output=99.9, last_input=99.9 - ECHO_SECONDS * 2, foreground_job=False) == WORKING


def test_what_was_drawn_before_the_last_key_is_not_work() -> None:
    """A message's paste is echoed, then its Enter follows: until the program draws again, the echo is no work
    (read as work, it ended the turn the Enter began once the screen stayed quiet a moment)."""
    assert screen_activity(100.0, last_output=99.7, last_input=99.9, foreground_job=False) == IDLE
    assert screen_activity(100.0, last_output=99.7, last_input=0.0, foreground_job=False, last_resize=99.9) == IDLE


def test_a_job_in_the_foreground_is_working_even_when_it_prints_nothing() -> None:
    assert screen_activity(100.0, last_output=0.0, last_input=0.0, foreground_job=True) == WORKING


class ReadingShell(type(SHELL)):  # type: ignore[misc]
    """A shell whose adapter reads its screen the way a CLI adapter does: a question waits for the human."""

    info = SHELL.info.model_copy(update={"name": "reading-shell", "display_name": "Reading shell"})

    def state(self, screen: ScreenView) -> AgentState | None:
        lines = [line.strip() for line in screen.display() if line.strip()]
        return AgentState.WAITING if lines and lines[-1].startswith("Proceed? [y/n]") else AgentState.IDLE


async def test_screen_activity_shows_a_running_job_then_idle(monkeypatch: Any) -> None:
    async with workspace_app(monkeypatch, shell_plans("open")) as (app, pilot):
        [pane] = panes(app)
        await wait_until(lambda: badges(pane).get("state") == "idle", message="the idle shell")
        await run_in(pilot, pane, "echo started; sleep 30", "started")
        await wait_until(lambda: badges(pane).get("state") == "working", message="a foreground job is work")
        await pilot.press("ctrl+c")
        await wait_until(lambda: badges(pane).get("state") == "idle", timeout=20, message="idle once it ends")


async def test_the_adapters_reading_of_the_screen_wins(monkeypatch: Any) -> None:
    async with workspace_app(monkeypatch, shell_plans("open", adapter=ReadingShell())) as (app, pilot):
        [pane] = panes(app)
        assert badges(pane)["adapter"] == "Reading shell"
        await wait_until(lambda: badges(pane).get("state") == "idle", message="idle")
        await run_in(pilot, pane, "read -p 'Proceed? [y/n] ' answer", "Proceed? [y/n]")
        await wait_until(lambda: badges(pane).get("state") == "waiting for you", message="the adapter's reading")
        await pilot.press("y", "enter")
        await wait_until(lambda: badges(pane).get("state") == "idle", message="idle after the answer")


def test_a_redraw_right_after_a_resize_is_not_work() -> None:
    """The program redraws for the new size (SIGWINCH): like the echo of a key, it did not start by itself."""
    assert screen_activity(100.0, last_output=99.9, last_input=0.0, foreground_job=False, last_resize=99.8) == IDLE
    assert screen_activity(100.0, last_output=99.9, last_input=0.0, foreground_job=False, last_resize=99.0) == WORKING


async def test_resizing_the_window_neither_shows_work_nor_tells_of_a_finished_turn(monkeypatch: Any) -> None:
    """Every pane redraws when the window's size changes; a pane the human typed into must not read as at work for
    it, nor its return to idle as a turn done (a notice in every pane at every resize)."""
    async with workspace_app(monkeypatch, shell_plans("open")) as (app, pilot):
        [pane] = panes(app)
        host = host_of(app)
        [hosted] = host.panes
        await run_in(pilot, pane, "echo typed", "typed")
        await wait_until(lambda: badges(pane).get("state") == "idle", message="idle after the command")
        told: list[object] = []
        tell = host.attention._tell
        monkeypatch.setattr(
            host.attention, "_tell", lambda p, transition: (told.append(transition), tell(p, transition))
        )
        for size in ((100, 30), (70, 20)):
            resized = hosted.terminal.last_output
            await pilot.resize_terminal(*size)
            await wait_until(lambda: hosted.terminal.last_output > resized, message="the shell's redraw for the size")
            states: set[str] = set()
            deadline = time.monotonic() + ACTIVE_SECONDS + host.attention.transitions.quiet + 0.5
            while time.monotonic() < deadline:  # what it shows while a redraw could still count as work
                states.add(badges(pane).get("state", ""))
                await pilot.pause(0.05)
            assert states == {"idle"}, states
        assert told == []
