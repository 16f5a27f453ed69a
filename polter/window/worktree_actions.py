"""Merge, remove and setup consent with the user's say, in any Textual app (the palette's commands call these).

Each asks through dialogs (``app.push_screen_wait``), so call it from a worker:
``self.run_worker(merge_worktree(self.app, worktree))``. Each returns a sentence for a notification,
or None when the user stopped; a refusal raises ``WorktreeRefused`` (nothing was changed) and a git
failure ``GitError``, both ``PolterError``: notify their message.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from textual.app import App

from polter.errors import WorktreeRefused
from polter.window.confirm import ConfirmScreen
from polter.window.text_prompt import TextEchoScreen
from polter.worktrees import ConfirmSetup, SetupCommand, Worktree

__all__ = ["OpenPane", "merge_worktree", "remove_worktree", "setup_consent"]


@dataclass(frozen=True)
class OpenPane:
    """A session's pane that works in the worktree: its program runs in the folder, so removing the
    worktree closes the pane first, once the human confirmed a removal that says so."""

    name: str
    """How the confirmation names it: ``pane 2 (coder shell)``."""
    close: Callable[[], Awaitable[None]]
    last: bool = False
    """The session's last pane: closing it would end the session, so the removal is refused."""


async def merge_worktree(app: App[Any], worktree: Worktree) -> str | None:
    """Check the merge of the pane's branch into its base; offer to commit the pane's uncommitted files
    first; ask; merge."""
    check = await worktree.check_merge()
    if check.pane_uncommitted:
        files = ", ".join(check.pane_uncommitted[:8]) + (" …" if len(check.pane_uncommitted) > 8 else "")
        message = await app.push_screen_wait(
            TextEchoScreen(
                f"{worktree.branch} has {len(check.pane_uncommitted)} uncommitted file(s). Commit them first?",
                f"{files}\nEverything in the worktree is committed (git add --all). Escape cancels the merge.",
                placeholder="commit message",
            )
        )
        if not message:
            return None
        await worktree.commit_all(message)
        check = await worktree.check_merge()
    if not check.ok:
        raise WorktreeRefused(
            f"not merging {worktree.branch} into {worktree.base} (nothing was changed):", reasons=check.problems
        )
    if check.already_merged:
        return f"{worktree.branch} is already merged into {worktree.base}"
    how = "a fast forward" if check.fast_forward else "a merge commit"
    where = f"in {check.base_checkout}" if check.base_checkout else "(no checkout has it: the branch moves)"
    question = f"Merge {worktree.branch} into {worktree.base}?"
    detail = f"{check.commits} commit(s), {how}, {worktree.base} {where}."
    if not await app.push_screen_wait(ConfirmScreen(question, detail, yes="Merge")):
        return None
    result = await worktree.merge()
    return f"Merged {worktree.branch} into {result.base} ({result.commits} commit(s)); now at {result.commit[:12]}"


async def remove_worktree(
    app: App[Any], worktree: Worktree, *, keep_branch: bool = False, pane: OpenPane | None = None
) -> str | None:
    """Check the removal; losing work needs the branch name typed out, a clean removal a yes. ``pane``: the
    open pane that works in the worktree, closed (after the confirmation, which names it) before removing."""
    if pane is not None and pane.last:
        raise WorktreeRefused(
            f"not removing {worktree.path} (nothing was changed):",
            reasons=(
                f"{pane.name} works in it and is the session's last pane: closing it would end the session. "
                f"End the session, then `polter worktree remove {worktree.branch}`",
            ),
        )
    check = await worktree.check_remove()
    if check.blockers:
        raise WorktreeRefused(f"not removing {worktree.path} (nothing was changed):", reasons=check.blockers)
    deleting = [str(worktree.path)] if check.folder_exists else []
    if check.branch_exists and not keep_branch:
        deleting.append(f"the branch {worktree.branch}")
    closing = f"closes {pane.name} (its program ends), then " if pane is not None else ""
    losses = check.losses(keep_branch=keep_branch)
    if losses:
        typed = await app.push_screen_wait(
            TextEchoScreen(
                f"Removing {closing}deletes {' and '.join(deleting)}, and loses work:",
                "\n".join(losses),
                placeholder=f"type {worktree.branch} to confirm",
                expected=worktree.branch,
            )
        )
        if typed != worktree.branch:
            return None
    elif not await app.push_screen_wait(
        ConfirmScreen(
            f"Remove the worktree of {worktree.branch}?",
            f"This {closing}deletes {' and '.join(deleting)}.",
            yes="Remove",
        )
    ):
        return None
    if pane is not None:
        await pane.close()
    result = await worktree.remove(discard=bool(losses), keep_branch=keep_branch)
    recover = (
        f"; `git branch {worktree.branch} {result.branch_tip[:12]}` brings the branch back" if result.branch_tip else ""
    )
    return f"Removed the worktree of {worktree.branch}{recover}"


def setup_consent(app: App[Any]) -> ConfirmSetup:
    """The ``confirm_setup`` callback for ``open_worktree``: a dialog showing the command and its file."""

    async def confirm(setup: SetupCommand) -> bool:
        detail = (
            f"{setup.display}\n(from {setup.source})\nIt runs with your environment and secrets in every new "
            "worktree of this repository; Polter asks again if the command changes."
        )
        question = "Run this repository's setup command in its new worktrees?"
        confirmed = await app.push_screen_wait(ConfirmScreen(question, detail, yes="Run it", no="Not now"))
        return bool(confirmed)

    return confirm
