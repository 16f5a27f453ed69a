"""Palette commands about git worktrees: new panes in worktrees of their own, and review, merge, remove
or recreate the worktree of a pane that has one (docs/worktrees.md)."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from polter.window.commands._base import Command, CommandProvider

__all__ = ["WorktreeCommands"]


class WorktreeCommands(CommandProvider):
    """For each pane in a worktree of its own: review, merge, remove (or recreate, its folder deleted); the
    focused pane's are listed before anything is typed. New panes in worktrees of their own, CLI × role. For a
    session on another host, only what the host does (recreate, new panes): review, merge and removal run git in
    the window's process, and the worktree is on the host (``polter worktree`` there does them)."""

    def commands(self) -> Iterator[Command]:
        screen = self.session_screen
        actions = screen.worktrees
        focused = self.focused_pane
        for pane in screen.grid.panes:
            view = pane.remote.worktree
            if view is None:
                continue
            number, worktree, discover = pane.number, view.worktree, pane is focused
            where = f"{worktree.branch}: {view.summary().removeprefix(worktree.branch).lstrip(' ·') or 'no change yet'}"
            if view.missing:
                yield Command(
                    f"Recreate worktree of pane {number}",
                    partial(actions.recreate, pane),
                    f"its folder {worktree.path} was deleted; made again on {worktree.branch}, the pane restarts in it",
                    discover=True,
                )
            if screen.session.ssh_host is not None:
                continue  # review, merge and removal run git here: the worktree is on the session's host
            yield Command(
                f"Review worktree of pane {number}",
                partial(actions.review, pane),
                f"{where} · the changed files and their diffs against {worktree.base}",
                discover=discover,
            )
            yield Command(
                f"Merge pane {number}'s worktree into {worktree.base}",
                partial(actions.merge, pane),
                f"{where} · checked first: refused, with nothing changed, on a conflict or uncommitted files",
                discover=discover,
            )
            yield Command(
                f"Remove pane {number}'s worktree",
                partial(actions.remove, pane),
                f"{worktree.path} and {worktree.branch}; closes the pane first; work that would be lost needs "
                "the branch name typed",
            )
        yield Command(
            "New pane in its own worktree (same CLI and role)",
            actions.open_new,
            "a git worktree on a branch of its own, of the repository the focused pane is in",
            discover=True,
        )
        roles = [role.name for role in screen.session.roles.roles]
        for adapter in screen.session.adapters:
            for role in roles:
                yield Command(
                    f"New pane in its own worktree: {adapter.display_name} as {role}",
                    partial(actions.open_new, adapter.name, role),
                    f"{adapter.description} · a git worktree on a branch of its own".lstrip(" ·"),
                )
