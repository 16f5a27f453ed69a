"""``polter worktree`` and the running sessions: which pane works in which worktree.

PANE may name a pane of a running session: its number (as the window numbers it; with several sessions
running, ``--session NAME`` says which), or its title. The sessions' hosts are asked with the
``worktrees`` call; a name no running pane has is looked up in Polter's records, with no session needed.
A worktree found either way is matched to the running pane that works in it, if any: removing it closes
that pane first, merging it has the pane's header read again.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from polter.cli.sessions import survey
from polter.errors import SessionError, WorktreeError
from polter.wire import methods
from polter.wire.messages import PaneWorktreeInfo, SessionInfo
from polter.worktrees import Worktree, find_worktree

__all__ = ["RunningPane", "SessionPanes", "find_pane_worktree", "running_panes"]


@dataclass(frozen=True)
class RunningPane:
    """A pane of a running session that works in a worktree of its own."""

    session: SessionInfo
    pane: PaneWorktreeInfo

    @property
    def worktree(self) -> Worktree:
        return self.pane.worktree.worktree

    @property
    def label(self) -> str:
        """``pane 2 (coder shell) of session main``"""
        return f"pane {self.pane.number} ({self.pane.title}) of session {self.session.name}"

    @property
    def last(self) -> bool:
        """The session's only pane: closing it ends the session."""
        return self.session.panes <= 1

    async def close(self) -> None:
        """Close the pane (its program ends) in its session's host."""
        await self._call(methods.CloseParams(pane=self.pane.pane))

    async def refresh_worktree(self) -> None:
        """Have the session's host read the pane's worktree figures again."""
        await self._call(methods.RefreshWorktreeParams(pane=self.pane.pane))

    async def _call(self, params: methods.CallParams[None]) -> None:
        from polter.wire.client import SessionClient
        from polter.wire.registry import session_files

        client = await SessionClient.connect(session_files(self.session.name), attach=False, timeout=10)
        try:
            await client.call(params)
        finally:
            await client.aclose()


@dataclass(frozen=True)
class SessionPanes:
    """The running sessions (``--session`` keeps one) and their panes in worktrees; notes on the others."""

    sessions: list[SessionInfo]
    panes: list[RunningPane]
    notes: list[str]

    def of(self, worktree: Worktree) -> RunningPane | None:
        """The running pane that works in ``worktree``, if any."""
        return next((pane for pane in self.panes if pane.worktree.key == worktree.key), None)


async def running_panes(session: str | None = None) -> SessionPanes:
    """Ask each running session (or session ``session``) which of its panes work in worktrees."""
    from polter.wire.client import SessionClient
    from polter.wire.registry import session_files

    live, notes = await survey()
    if session is not None:
        live = [info for info in live if info.name == session]
        if not live:
            raise SessionError(f"no session named {session} is running (`polter ls` lists them)")
    panes = []
    for info in live:
        try:
            client = await SessionClient.connect(session_files(info.name), attach=False, timeout=10)
        except SessionError as exc:
            notes.append(f"session {info.name} does not answer: {exc}")
            continue
        try:
            rows = await client.call(methods.WorktreesParams())
        except SessionError as exc:
            notes.append(f"session {info.name} cannot say which panes work in worktrees: {exc}")
            rows = []
        finally:
            await client.aclose()
        panes += [RunningPane(info, row) for row in rows]
    return SessionPanes(live, panes, notes)


async def find_pane_worktree(
    name: str, *, session: str | None = None, near: Path | None = None
) -> tuple[Worktree, RunningPane | None, SessionPanes]:
    """The worktree PANE means (see the module's docstring), the running pane that works in it, and what
    was found of the running sessions."""
    running = await running_panes(session)
    if name.isdigit():
        worktree = _by_number(int(name), running)
        return worktree, running.of(worktree), running
    matches = [
        pane
        for pane in running.panes
        if name in (pane.pane.title, pane.worktree.title, pane.worktree.branch, pane.worktree.path.name)
    ]
    if len(matches) > 1:
        listed = ", ".join(pane.label for pane in matches)
        raise WorktreeError(f"{name!r} could mean {listed}: give the pane's number with --session, or the branch")
    if matches:
        return matches[0].worktree, matches[0], running
    worktree = await find_worktree(name, near=near)
    return worktree, running.of(worktree), running


def _by_number(number: int, running: SessionPanes) -> Worktree:
    if not running.sessions:
        raise WorktreeError(
            f"no session is running, so there is no pane {number}: give the pane's title, its branch or its "
            "folder's name (`polter worktree list` shows them)"
        )
    if len(running.sessions) > 1:
        names = ", ".join(info.name for info in running.sessions)
        raise WorktreeError(f"sessions {names} are running: say which one's pane {number} with --session NAME")
    [info] = running.sessions
    for pane in running.panes:
        if pane.pane.number == number:
            return pane.worktree
    numbers = ", ".join(str(pane.pane.number) for pane in running.panes) or "none"
    raise WorktreeError(
        f"pane {number} of session {info.name} has no worktree of its own (its panes in worktrees: {numbers})"
    )
