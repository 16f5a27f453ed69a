"""The pane header in a narrow pane: the least telling parts give way so role, phase and state stay."""

from __future__ import annotations

import time

from textual.app import App, ComposeResult
from textual.pilot import Pilot

from polter.window.pane_header import PaneHeader


class HeaderApp(App[None]):
    def compose(self) -> ComposeResult:
        yield PaneHeader()


def shown(header: PaneHeader) -> list[str]:
    return [str(label.content) for label in header.children if label.display and str(label.content)]


async def fits_as(pilot: Pilot[None], header: PaneHeader, expected: list[str]) -> None:
    """Waits (with a deadline) for the header's fit, which runs after the refresh a resize or a badge brings."""
    deadline = time.monotonic() + 10
    while shown(header) != expected and time.monotonic() < deadline:
        await pilot.pause(0.02)
    assert shown(header) == expected


async def test_a_narrow_header_drops_running_then_the_adapter_and_keeps_role_phase_and_state() -> None:
    app = HeaderApp()
    async with app.run_test(size=(120, 3)) as pilot:
        header = app.query_one(PaneHeader)
        header.title, header.status, header.status_kind = "admin agent", "running", "running"
        header.set_badge("adapter", "Claude Code")
        header.set_badge("role", "terraria-admin", "primary")
        header.set_badge("phase", "research")
        header.set_badge("state", "idle")
        await pilot.pause()
        everything = ["1", "admin agent", "Claude Code", "terraria-admin", "research", "idle", "running"]
        assert shown(header) == everything

        await pilot.resize_terminal(60, 3)
        await pilot.pause()
        assert shown(header) == ["1", "admin agent", "Claude Code", "terraria-admin", "research", "idle"]

        await pilot.resize_terminal(40, 3)  # the title too: role, phase and state take all but the number's cells
        await pilot.pause()
        assert shown(header) == ["1", "terraria-admin", "research", "idle"]

        header.status, header.status_kind = "exited 1", "exited"  # an exit is news: it never gives way
        await pilot.pause()
        assert shown(header)[-1] == "exited 1" and "Claude Code" not in shown(header)

        header.set_badge("phase", None)
        header.status, header.status_kind = "running", "running"
        await pilot.resize_terminal(120, 3)
        await pilot.pause()
        assert shown(header) == [part for part in everything if part != "research"]


async def test_a_very_narrow_header_gives_up_the_title_then_the_phase_but_never_cuts_the_state() -> None:
    """Five panes in 80 columns are 26 cells wide: role, phase and state do not fit beside the number, and the
    state was cut off at the edge ('idl'). The phase gives way; the title, which then fits, comes back."""
    app = HeaderApp()
    async with app.run_test(size=(26, 3)) as pilot:
        header = app.query_one(PaneHeader)
        header.number, header.title, header.status, header.status_kind = 4, "bash", "running", "running"
        header.set_badge("adapter", "Shell")
        header.set_badge("role", "ops", "primary")
        header.set_badge("phase", "research")
        header.set_badge("state", "idle")
        await fits_as(pilot, header, ["4", "bash", "ops", "idle"])
        assert sum(label.outer_size.width for label in header.children if label.display) <= 26

        await pilot.resize_terminal(31, 3)  # room for the phase, not for the title as well
        await fits_as(pilot, header, ["4", "ops", "research", "idle"])

        await pilot.resize_terminal(40, 3)
        await fits_as(pilot, header, ["4", "bash", "ops", "research", "idle"])
