"""Snapshots of the multiplexer (pytest-textual-snapshot; update with ``pytest --snapshot-update``).

Deterministic by construction: a fixed terminal size, bash without rc files and with the prompt
``$ ``, waiting until the expected text is on every screen and the first pane has the focus (its
header highlighted); the programs hide the cursor (``CSI ? 25 l``) so no cursor cell depends on
when the last byte arrived.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from support.panes import bash_spec, wait_for_text
from support.session import HostedApp
from support.waiting import wait_until
from textual.pilot import Pilot

from polter.launch.planning import Launch
from polter.terminal.launch import LaunchSpec
from polter.window.session_screen import SessionScreen

SIZE = (100, 30)
HIDDEN_CURSOR_PROMPT = r"$ \[\e[?25l\]"


def settle(app: HostedApp, expected: list[str], statuses: list[str] | None = None) -> Callable[[Pilot[None]], Any]:
    """``run_before`` for snap_compare: wait for ``expected[i]`` in pane i and its header to show
    ``statuses[i]`` (default ``running``), then drop the focus."""

    async def run_before(pilot: Pilot[None]) -> None:
        await wait_until(lambda: isinstance(app.screen, SessionScreen))
        panes = app.session_screen.grid.panes
        host = app.host
        await wait_until(lambda: len(panes) == len(expected))
        for pane, text, status in zip(panes, expected, statuses or ["running"] * len(expected), strict=True):
            await wait_for_text(pane.terminal, text)
            await wait_until(lambda: pane.header.status == status, message=lambda: pane.header.status)  # noqa: B023
        await wait_until(lambda: app.focused is panes[0].terminal)
        await wait_until(
            lambda: not any(host.pane(pane.remote.id).terminal.frame_pending for pane in panes),
            message="the screens' last frames sent",
        )
        await pilot.pause()

    return run_before


def test_four_panes_in_a_grid(snap_compare: Any) -> None:
    app = HostedApp([bash_spec(PS1=HIDDEN_CURSOR_PROMPT) for _ in range(4)])
    assert snap_compare(app, terminal_size=SIZE, run_before=settle(app, ["$"] * 4))


def test_an_exited_pane_and_one_that_failed_to_start(snap_compare: Any) -> None:
    exited = LaunchSpec(
        argv=("sh", "-c", r"printf '\033[?25lbuilding...\n\033[1;32mdone\033[0m in 3.2s\n'; exit 3"), title="build"
    )
    failed = LaunchSpec(argv=("polter-no-such-agent", "--yolo"))
    app = HostedApp([exited, failed], launch=Launch(plans=[], layout="columns"))
    assert snap_compare(
        app,
        terminal_size=SIZE,
        run_before=settle(app, ["done in 3.2s", "cannot start"], ["exited 3", "failed to start"]),
    )
