"""Opening, closing and restarting the session's panes from the window, and leaving the session (detach, or
end it). Each asks the host, which owns the panes; the grid follows what the host reports. Ending a program
that still runs asks the human first."""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from polter.errors import PolterError
from polter.window.confirm import ConfirmScreen
from polter.window.leave_screen import LeaveScreen
from polter.window.pane import PaneWidget
from polter.wire.methods import OpenParams

if TYPE_CHECKING:
    from polter.window.session_screen import SessionScreen

__all__ = ["PaneActions"]

PANE_COMMAND = "pane-command"
"""The worker group of these commands: one at a time (each may ask in a dialog)."""


class PaneActions:
    """What ``screen``'s keys and palette do to its panes; each that asks runs in a worker of its own."""

    def __init__(self, screen: SessionScreen) -> None:
        self.screen = screen
        self.leaving = False
        """This window is leaving the session (detaching or ending it): the session's end is no surprise."""

    def new_like_focused(self) -> None:
        """A new pane like the focused one (its CLI and role; a shell beside a plain program), started
        in the directory the focused pane's program is in."""
        pane = self.screen.pane_focus.active
        self._run(self.open(OpenParams(like=pane.remote.id if pane is not None else None)))

    def new(self, adapter: str, role: str) -> None:
        """New pane with ``adapter`` × ``role`` (the palette's "new pane"), where the focused pane's program is."""
        pane = self.screen.pane_focus.active
        self._run(self.open(OpenParams(like=pane.remote.id if pane is not None else None, adapter=adapter, role=role)))

    async def open(self, how: OpenParams) -> None:
        """Ask the session for a new pane (see :class:`OpenParams`); it is focused once it shows."""
        try:
            pane_id = await self.screen.session.open(how)
        except PolterError as exc:
            self.screen.notify(f"Could not open a pane: {exc}", severity="error", timeout=15)
            return
        self.screen.pane_focus.opened(pane_id)

    def close(self, pane: PaneWidget) -> None:
        """Close ``pane``, asking first if its program still runs; the session ends after its last pane."""
        self._run(self._close(pane))

    async def _close(self, pane: PaneWidget) -> None:
        screen = self.screen
        if not await self._may_end(pane, "Close", "closing"):
            return
        if len(screen.grid.panes) == 1:
            self.leaving = True
        try:
            await screen.session.close(pane.remote)
        except PolterError as exc:
            self.leaving = False
            screen.notify(f"Could not close pane {pane.number}: {exc}", severity="error")
            return
        if self.leaving:
            screen.app.exit(message=f"polter: session {screen.session.name} ended (its last pane was closed)")

    def restart(self, pane: PaneWidget) -> None:
        """Start ``pane``'s program again, asking first if it still runs. An agent pane's CLI is prepared
        afresh; a restart that applies its role continues its conversation where the CLI can resume one."""
        self._run(self._restart(pane))

    async def _restart(self, pane: PaneWidget) -> None:
        if not await self._may_end(pane, "Restart", "restarting"):
            return
        try:
            await self.screen.session.restart(pane.remote)
        except PolterError as exc:
            self.screen.notify(f"Could not restart pane {pane.number}: {exc}", severity="error")
            return
        pane.terminal.focus()

    async def _may_end(self, pane: PaneWidget, verb: str, doing: str) -> bool:
        """Whether ``pane``'s program may be ended to ``verb`` the pane: yes if it is not running,
        else the user's answer to a confirmation."""
        if not pane.running:
            return True
        question = f"{verb} pane {pane.number} ({pane.title})?"
        detail = f"Its program is still running; {doing} ends it and everything it started."
        confirmed = await self.screen.app.push_screen_wait(ConfirmScreen(question, detail, yes=verb))
        return bool(confirmed)

    # -- leaving --------------------------------------------------------------------------------------------

    def quit(self) -> None:
        """Leave the session: detach (the programs keep running) or end it, as the human chooses."""
        self._run(self._quit())

    async def _quit(self) -> None:
        screen = self.screen
        running = [f"{pane.number} ({pane.title})" for pane in screen.grid.panes if pane.running]
        choice = await screen.app.push_screen_wait(LeaveScreen(screen.session.name, running))
        if choice == "detach":
            await self.detach()
        elif choice == "end":
            await self.end_session()

    async def detach(self) -> None:
        """Close this window; the session and its programs keep running."""
        session = self.screen.session
        self.leaving = True
        await session.detach()
        self.screen.app.exit(message=f"[detached from session {session.name}: polter attach {session.name}]")

    async def end_session(self) -> None:
        """End every program in the session, the gateway and the session itself."""
        self.leaving = True
        await self.screen.session.end()
        self.screen.app.exit(message=f"polter: session {self.screen.session.name} ended")

    def _run(self, work: Coroutine[Any, Any, None]) -> None:
        self.screen.run_worker(work, group=PANE_COMMAND, exclusive=True)
