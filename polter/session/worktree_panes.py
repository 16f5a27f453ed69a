"""A pane that asks for a worktree (``worktree = true``, ``--pane ...,worktree``): its worktree, opened
before its CLI starts. The one call between a pane's setup and :mod:`polter.worktrees`."""

from __future__ import annotations

from collections.abc import Collection
from pathlib import Path

from polter.session.config import PaneSetup
from polter.worktrees import ConfirmSetup, OpenedWorktree, open_worktree

__all__ = ["open_pane_worktree"]


async def open_pane_worktree(
    setup: PaneSetup,
    *,
    title: str,
    in_use: Collection[str] = (),
    confirm_setup: ConfirmSetup | None = None,
) -> tuple[PaneSetup, OpenedWorktree]:
    """Make, reuse or recreate the pane's worktree (see :func:`polter.worktrees.open_worktree`).

    Returns the setup to launch and save: ``cwd`` is where the CLI starts inside the worktree and
    ``branch`` the worktree's, so ``--restore`` comes back to the same worktree (and recreates it if its
    folder was deleted meanwhile); and what was done, whose ``notes``, ``copied`` and ``setup`` are
    worth a notification. ``in_use``: the branches of the session's other worktree panes.
    """
    opened = await open_worktree(
        setup.cwd or Path.cwd(),
        title=title,
        branch=setup.branch,
        base=setup.base,
        in_use=in_use,
        confirm_setup=confirm_setup,
    )
    launch = setup.model_copy(update={"cwd": opened.start_dir, "branch": opened.worktree.branch})
    return launch, opened
