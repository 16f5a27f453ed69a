"""What the palette does for panes in worktrees of their own (docs/worktrees.md).

Reviewing, merging and removing run here, in the window, with :mod:`polter.worktrees` (the repository
is on this machine; the host does not have to be asked what the human sees), through the checked flows
of :mod:`polter.window.worktree_actions`; after each, the host reads the pane's header figures again.
Opening a pane in a worktree and recreating a deleted folder are the host's: it makes the worktree
before the CLI starts, asks (through a window) whether the project's setup command may run, and
restarts the pane in a recreated folder.

Removing the worktree of a pane that is open closes the pane first, after the same confirmation that
names it: its program runs in that folder, so the folder cannot go while it runs. The session's last
pane is not closed that way (that would end the session): remove its worktree once the session ended.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from polter.errors import PolterError
from polter.window.confirm import ConfirmScreen
from polter.window.pane import PaneWidget
from polter.window.worktree_actions import OpenPane, merge_worktree, remove_worktree
from polter.window.worktree_screen import WorktreeReviewScreen
from polter.wire.methods import OpenParams
from polter.worktrees import Worktree

if TYPE_CHECKING:
    from polter.window.session_screen import SessionScreen

__all__ = ["WorktreePaneActions"]


class WorktreePaneActions:
    """The worktree commands of a :class:`~polter.window.session_screen.SessionScreen`'s palette; each starts
    what it does in a worker (it asks in dialogs) and returns at once."""

    def __init__(self, screen: SessionScreen) -> None:
        self.screen = screen

    def _worktree(self, pane: PaneWidget) -> Worktree | None:
        view = pane.remote.worktree
        if view is None:
            self.screen.notify(f"Pane {pane.number} has no worktree of its own.", severity="error")
            return None
        return view.worktree

    def _open_pane(self, pane: PaneWidget) -> OpenPane:
        async def close() -> None:
            await self.screen.session.close(pane.remote)

        return OpenPane(name=f"pane {pane.number} ({pane.title})", close=close, last=len(self.screen.grid.panes) == 1)

    async def _refresh(self, pane: PaneWidget) -> None:
        if pane.remote in self.screen.session.panes:
            try:
                await self.screen.session.refresh_worktree(pane.remote)
            except PolterError:
                pass  # the pane closed meanwhile

    # -- the commands --------------------------------------------------------------------------------

    def open_new(self, adapter: str | None = None, role: str | None = None) -> None:
        """A new pane in a worktree of its own: ``adapter`` × ``role``, or like the focused pane."""
        current = self.screen.active_pane
        like = current.remote.id if current is not None else None
        self.screen.run_worker(
            self.screen.pane_actions.open(OpenParams(like=like, adapter=adapter, role=role, worktree=True)),
            group="pane-command",
            exclusive=True,
        )

    def review(self, pane: PaneWidget) -> None:
        worktree = self._worktree(pane)
        if worktree is None:
            return
        screen = WorktreeReviewScreen(worktree, title=f"Pane {pane.number} {pane.title}", pane=self._open_pane(pane))

        def closed(_result: None) -> None:
            self.screen.run_worker(self._refresh(pane), group="worktree-refresh")

        self.screen.app.push_screen(screen, closed)

    def merge(self, pane: PaneWidget) -> None:
        self.screen.run_worker(self._merge(pane), group="worktree", exclusive=True)

    async def _merge(self, pane: PaneWidget) -> None:
        worktree = self._worktree(pane)
        if worktree is None:
            return
        try:
            outcome = await merge_worktree(self.screen.app, worktree)
        except PolterError as exc:
            self.screen.notify(str(exc), title=f"Pane {pane.number}: merge", severity="error", timeout=20)
        else:
            if outcome:
                self.screen.notify(outcome, title=f"Pane {pane.number}: merge", timeout=10)
        finally:
            await self._refresh(pane)  # (a commit of its files may have been made even when the merge was not)

    def remove(self, pane: PaneWidget) -> None:
        self.screen.run_worker(self._remove(pane), group="worktree", exclusive=True)

    async def _remove(self, pane: PaneWidget) -> None:
        worktree = self._worktree(pane)
        if worktree is None:
            return
        try:
            outcome = await remove_worktree(self.screen.app, worktree, pane=self._open_pane(pane))
        except PolterError as exc:
            self.screen.notify(str(exc), title=f"Pane {pane.number}: remove", severity="error", timeout=20)
            return
        if outcome:
            self.screen.notify(outcome, title="Worktree removed", timeout=15)

    def recreate(self, pane: PaneWidget) -> None:
        self.screen.run_worker(self._recreate(pane), group="worktree", exclusive=True)

    async def _recreate(self, pane: PaneWidget) -> None:
        view = pane.remote.worktree
        if view is None:
            return
        if pane.running:
            question = f"Recreate the worktree of pane {pane.number} and restart it there?"
            detail = (
                f"{view.worktree.path} is made again on {view.worktree.branch} (its commits; uncommitted work in "
                "the deleted folder is gone). The pane's program runs in the deleted folder: it restarts in the "
                "new one."
            )
            if not await self.screen.app.push_screen_wait(ConfirmScreen(question, detail, yes="Recreate")):
                return
        try:
            await self.screen.session.recreate_worktree(pane.remote)
        except PolterError as exc:
            self.screen.notify(str(exc), title=f"Pane {pane.number}: worktree", severity="error", timeout=20)
            return
        pane.show_state()
