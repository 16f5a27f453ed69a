"""A session host in the test's own event loop, and windows (the app under Pilot) attached to it.

The host is the real one (real PTYs, the real socket and protocol); running it in-process only saves
starting a daemon, and lets a test look at the host's side of a pane (its process, its screen).
Tests of the daemon itself (detach, kill -9, ``polter ls``) start real processes instead.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from textual.pilot import Pilot

from polter.host.session_host import SessionHost
from polter.launch.planning import Launch
from polter.host.panes import HostPane
from polter.wire.registry import session_files
from polter.terminal.launch import LaunchSpec
from polter.window.app import PolterApp
from polter.window.pane import PaneWidget
from polter.window.session_screen import SessionScreen
from support.waiting import wait_until


@contextlib.asynccontextmanager
async def hosted(
    specs: list[LaunchSpec] | None = None,
    *,
    launch: Launch | None = None,
    name: str = "test",
    scrollback: int = 10_000,
) -> AsyncIterator[SessionHost]:
    """A session host serving ``specs`` (plain programs) and ``launch`` (agent panes); ended afterwards."""
    host = SessionHost(session_files(name), launch, specs, scrollback=scrollback)
    await host.start()
    runner = asyncio.create_task(host.run())
    try:
        yield host
    finally:
        await host.end("the test is over")
        await runner


@contextlib.asynccontextmanager
async def window(
    host: SessionHost, *, size: tuple[int, int] = (120, 36), ready: bool = True
) -> AsyncIterator[tuple[PolterApp, Pilot[None]]]:
    """The app attached to ``host`` (until the test leaves: it detaches), once its screen shows the session."""
    app = PolterApp(host.files)
    async with app.run_test(size=size) as pilot:
        await wait_until(lambda: app._session_screen is not None and app._session_screen.is_mounted, message="the window")
        if ready:
            await wait_until(lambda: host.ready and len(app.session_screen.grid.panes) == len(host.panes),
                             timeout=60, message="the session's panes in the window")
        yield app, pilot


def screen(app: PolterApp) -> SessionScreen:
    return app.session_screen


def panes(app: PolterApp) -> list[PaneWidget]:
    return app.session_screen.grid.panes


def host_pane(host: SessionHost, pane: PaneWidget) -> HostPane:
    """The host's side of a window's pane (its process, its screen engine)."""
    return host.pane(pane.remote.id)


def attached(host: SessionHost) -> int:
    """How many windows are attached to ``host`` now."""
    return sum(window.attached for window in host.windows)


class HostedApp(PolterApp):
    """The app with its own session host in the same event loop, started when the app mounts and ended
    when it unmounts: for tests that hand the app to something that runs it (snapshots, screenshots)."""

    def __init__(
        self, specs: list[LaunchSpec] | None = None, *, launch: Launch | None = None, name: str = "hosted"
    ) -> None:
        super().__init__(session_files(name))
        self.host = SessionHost(self.target, launch, specs)
        self._serving: asyncio.Task[None] | None = None

    async def on_mount(self) -> None:  # runs before PolterApp.on_mount (Textual calls each class's handler)
        await self.host.start()
        self._serving = asyncio.create_task(self.host.run())

    async def on_unmount(self) -> None:  # after PolterApp.on_unmount has detached
        await self.host.end("the window closed")
        if self._serving is not None:
            await self._serving
