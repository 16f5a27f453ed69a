"""Panes in worktrees of their own (``worktree = true``, ``--pane ...,worktree``; docs/worktrees.md): the session
host's part that owns them (one pane's is :class:`~polter.host.pane_worktree.PaneWorktree`).

Opening such a pane makes (or reuses, or recreates) its worktree before the CLI starts, asking the human
through a window whether the project's setup command may run (:mod:`polter.host.questions`), and
tells the windows what was done. While the pane lives (:class:`PaneWorktree`), the header's figures are
read in the background when the agent goes idle, and a folder deleted by hand is noticed (a stat every few
seconds) and reported with the way back. ``polter worktree`` and the windows ask about the panes' worktrees
with the calls ``worktrees``, ``refresh_worktree`` and ``recreate_worktree``; reviewing, merging and removing
run where the human is, with :mod:`polter.worktrees`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from polter.errors import ConfigError, SessionError, WorktreeError
from polter.host.pane import HostPane
from polter.host.pane_worktree import PaneWorktree, SetupAnswer, open_pane_worktree, opened_report, setup_question
from polter.host.panes import Panes
from polter.host.questions import Questions
from polter.host.windows import Window, Windows
from polter.launch.planning import PanePlan
from polter.tasks import BackgroundTasks
from polter.wire import messages as wire
from polter.wire import methods
from polter.worktrees import (
    ConfirmSetup,
    OpenedWorktree,
    SetupCommand,
    recreate,
)

if TYPE_CHECKING:
    from polter.host.call_table import CallTable

__all__ = ["PaneWorktrees", "worktree_title"]


class PaneWorktrees:
    """The worktrees of the session's panes. ``restart(pane)`` starts a pane's program again (in its recreated
    worktree)."""

    def __init__(
        self,
        *,
        panes: Panes,
        windows: Windows,
        questions: Questions,
        tasks: BackgroundTasks,
        restart: Callable[[HostPane], Awaitable[None]],
    ) -> None:
        self._panes = panes
        self._windows = windows
        self._questions = questions
        self._tasks = tasks
        self._restart = restart
        self._lock = asyncio.Lock()
        """One opening at a time: a branch is never handed to two panes."""
        self._claimed: set[str] = set()
        """Branches of worktrees opened for panes that are not in the session yet."""

    def register_calls(self, calls: CallTable) -> None:
        calls.register(methods.WorktreesParams, self._worktrees)
        calls.register(methods.RefreshWorktreeParams, self._refresh_worktree)
        calls.register(methods.RecreateWorktreeParams, self._recreate_worktree)

    # -- opening ---------------------------------------------------------------------------------------

    async def open(self, plan: PanePlan) -> tuple[PanePlan, OpenedWorktree]:
        """The pane's worktree, and its plan with the setup to launch and save (cwd in the worktree, its
        branch). The branch is claimed for the pane until :meth:`release`. Raises ``WorktreeError`` (a
        directory in no repository, a bad ``.polter/worktrees.toml``...)."""
        setup = plan.setup
        title = worktree_title(plan)
        answer = SetupAnswer()
        try:
            async with self._lock:
                in_use = self._claimed | {pane.worktree.branch for pane in self._panes if pane.worktree is not None}
                launch, opened = await open_pane_worktree(
                    setup, title=title, in_use=in_use, confirm_setup=self._confirm_setup(answer)
                )
                self._claimed.add(opened.worktree.branch)
        except ConfigError as exc:
            raise WorktreeError(str(exc)) from exc
        text, attention = opened_report(opened, answer)
        self._windows.notify(
            wire.Notice(text=text, title=f"{title}: worktree", severity="warning" if attention else "information")
        )
        return PanePlan(launch, plan.adapter, plan.reason, plan.why), opened

    def release(self, opened: OpenedWorktree) -> None:
        self._claimed.discard(opened.worktree.branch)

    def track(self, pane: HostPane, opened: OpenedWorktree) -> None:
        """Keep the pane's worktree with the pane (before it is added: its first state shows it)."""
        pane.worktree = PaneWorktree(
            opened.worktree,
            tasks=self._tasks,
            on_change=lambda: self._panes.changed(pane),
            on_gone=lambda: self._gone(pane),
        )

    def _confirm_setup(self, answer: SetupAnswer) -> ConfirmSetup:
        """Ask a window whether the project's setup command may run (no window, no answer: it does not)."""

        async def confirm(setup: SetupCommand) -> bool:
            answer.answer = await self._questions.ask(**setup_question(setup))
            return bool(answer.answer)

        return confirm

    def source(self, like: HostPane | None, cwd: Path | None) -> Path | None:
        """Where a new worktree pane opened beside ``like`` comes from: a directory inside ``like``'s own
        worktree means the same place in the checkout that worktree was made from (a new pane's worktree
        starts from the project's branch, not from another agent's)."""
        if like is None or like.worktree is None or cwd is None:
            return cwd
        record = like.worktree.worktree
        try:
            relative = cwd.resolve().relative_to(record.path.resolve())
        except ValueError:
            return cwd
        place = record.checkout / relative
        return place if place.is_dir() else record.checkout

    # -- while the pane lives --------------------------------------------------------------------------

    def look_at_folders(self) -> None:
        """A folder deleted by hand (or brought back) since the last look: the header says so (and a notice)."""
        for pane in self._panes:
            if pane.worktree is not None and pane.worktree.look_at_folder():
                self._panes.changed(pane)
                pane.worktree.refresh()

    def _gone(self, pane: HostPane) -> None:
        if pane not in self._panes or pane.worktree is None:
            return
        number, worktree = self._panes.number(pane), pane.worktree
        self._windows.notify(
            wire.Notice(
                title=f"Pane {number}: worktree",
                text=f"The folder of pane {number}'s worktree, {worktree.worktree.path}, was deleted. Its branch "
                f"{worktree.branch} keeps the commits (uncommitted work in the folder is gone). Recreate it from "
                f"the command palette: Recreate worktree of pane {number} (the pane restarts in it).",
                severity="warning",
            )
        )

    @staticmethod
    def saved(pane: HostPane, cwd: Path | None) -> dict[str, Any]:
        """The worktree part of a pane's saved setup: ``--restore`` reopens it in the same worktree (and
        recreates its folder if it was deleted). A program that left the worktree is saved at its start."""
        worktree = pane.worktree
        if worktree is None or pane.agent is None:
            return {"cwd": cwd}
        inside = cwd is not None and cwd.resolve().is_relative_to(worktree.worktree.path.resolve())
        return {"cwd": cwd if inside else pane.agent.setup.cwd, "worktree": True, "branch": worktree.branch}

    # -- the calls ------------------------------------------------------------------------------------

    def _of(self, pane_id: str) -> tuple[HostPane, PaneWorktree]:
        pane = self._panes.get(pane_id)
        if pane.worktree is None:
            raise SessionError(f"pane {pane.id} has no worktree of its own")
        return pane, pane.worktree

    async def _worktrees(self, window: Window, params: methods.WorktreesParams) -> list[wire.PaneWorktreeInfo]:
        return [
            wire.PaneWorktreeInfo(
                pane=pane.id,
                number=number,
                title=pane.agent.title if pane.agent is not None else pane.state().title,
                running=pane.terminal.running,
                worktree=pane.worktree.view(),
            )
            for number, pane in enumerate(self._panes, 1)
            if pane.worktree is not None
        ]

    async def _refresh_worktree(self, window: Window, params: methods.RefreshWorktreeParams) -> None:
        pane, worktree = self._of(params.pane)
        if worktree.look_at_folder():
            self._panes.changed(pane)
        worktree.refresh()

    async def _recreate_worktree(self, window: Window, params: methods.RecreateWorktreeParams) -> wire.PaneState:
        """Make the worktree again on its branch, at its path (the setup command asked for as for a new one)."""
        pane, worktree = self._of(params.pane)
        worktree.look_at_folder()
        if not worktree.missing:
            raise SessionError(f"the worktree of {worktree.branch} is there: {worktree.worktree.path}")
        answer = SetupAnswer()
        async with self._lock:
            opened = await recreate(worktree.worktree, self._confirm_setup(answer))
        worktree.recreated(opened.worktree)
        text, attention = opened_report(opened, answer)
        number = self._panes.number(pane)
        self._windows.notify(
            wire.Notice(text=text, title=f"Pane {number}: worktree", severity="warning" if attention else "information")
        )
        self._panes.changed(pane)
        worktree.refresh()
        if params.restart:
            await self._restart(pane)
        return pane.state()


def worktree_title(plan: PanePlan) -> str:
    """What a pane's worktree is named after: its title, else its role (``polter/coder``), else its CLI."""
    setup = plan.setup
    return setup.title or setup.role or plan.adapter.display_name
