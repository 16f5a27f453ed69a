"""Panes in worktrees of their own, in a real session: the host (in this process) with the real gateway,
shell panes under a test role, and a window on it under Pilot. What the user does: open the pane,
work and commit in it, look at its header, review, merge and remove from the palette."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.git_repos import git, refs, sh, snapshot
from support.panes import BASH
from support.privates import notification_messages
from support.waiting import wait_until
from support.workspace_app import badges, host_of, palette, panes, run_in, session_pane, shell_plans, workspace_app
from textual.widgets import Label

from polter.session.agents import PanePlan
from polter.session.config import load_session
from polter.ui.confirm import ConfirmScreen
from polter.ui.text_prompt import TextPromptScreen
from polter.ui.worktree_screen import WorktreeReviewScreen
from polter.worktrees import list_worktrees


@pytest.fixture(autouse=True)
def quiet_shell(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Panes opened from the palette run the shell adapter's ``$SHELL``: bash without rc files here too."""
    script = tmp_path / "quiet-bash"
    script.write_text(f'#!/bin/sh\nexec {BASH} --norc --noprofile "$@"\n')
    script.chmod(0o755)
    monkeypatch.setenv("SHELL", str(script))


def worktree_plans(repo: Path, *roles: str, **setup: Any) -> list[PanePlan]:
    """Shell panes under ``roles`` that ask for a worktree of the repository ``repo`` (titled "<role> shell")."""
    return [
        PanePlan(plan.setup.model_copy(update={"cwd": repo, "worktree": True, **setup}), plan.adapter, plan.reason)
        for plan in shell_plans(*roles)
    ]


def notices(app: Any) -> str:
    return "\n".join(notification_messages(app))


async def shell(pilot: Any, pane: Any, command: str) -> None:
    """Run ``command`` in the pane's shell and wait until it is done (a sentinel the typed line lacks)."""
    await run_in(pilot, pane, f"{command}; echo finished-$((20+22))", "finished-42", timeout=30)


async def test_a_pane_from_the_config_works_and_commits_in_its_own_worktree(monkeypatch: Any, repo: Path) -> None:
    (repo / ".env").write_text("SECRET=1\n")
    (repo / ".worktreeinclude").write_text(".env\n")
    git(repo, "add", ".worktreeinclude")
    git(repo, "commit", "-qm", "include")
    before = snapshot(repo)
    async with workspace_app(monkeypatch, worktree_plans(repo / "src", "open")) as (app, pilot):
        [pane] = panes(app)
        [entry] = await list_worktrees()
        worktree = entry.worktree
        assert worktree.branch == "polter/open-shell" and worktree.base == "main"
        assert not worktree.path.is_relative_to(repo)
        text = await run_in(pilot, pane, "pwd", str(worktree.path / "src"))  # the same place inside it
        assert str(worktree.path / "src") in text
        assert (worktree.path / ".env").read_text() == "SECRET=1\n"
        await wait_until(lambda: "Copied from" in notices(app), message=lambda: notices(app))
        assert f"A new worktree on polter/open-shell (from main): {worktree.path}" in notices(app)
        assert ".env" in notices(app)

        await shell(pilot, pane, "echo new > new.py && git add new.py && git commit -qm new")
        await wait_until(
            lambda: badges(pane).get("worktree") == "polter/open-shell +1 -0 · 1 file",
            timeout=30,
            message=lambda: f"the change in the header after the agent went idle: {badges(pane)}",
        )
        assert snapshot(repo) == before and not (repo / "src" / "new.py").exists()  # the main checkout has none of it
        assert git(repo, "log", "-1", "--format=%s", "polter/open-shell").strip() == "new"
        assert git(repo, "log", "-1", "--format=%s", "main").strip() == "include"

        host_of(app)._save()
        [saved] = load_session().panes
        assert saved.worktree and saved.branch == "polter/open-shell"
        assert saved.cwd is not None and saved.cwd.resolve() == (worktree.path / "src").resolve()
        assert session_pane(app, pane).worktree is not None


async def test_from_the_palette_a_new_worktree_pane_then_review_merge_and_remove(monkeypatch: Any, repo: Path) -> None:
    async with workspace_app(monkeypatch, worktree_plans(repo, "open")) as (app, pilot):
        [first] = panes(app)
        first_worktree = session_pane(app, first).worktree
        assert first_worktree is not None
        await shell(pilot, first, "git commit -q --allow-empty -m 'not main'")

        # A new pane in its own worktree: a branch of its own, from main (not from pane 1's branch).
        first.terminal.focus()
        await palette(
            pilot, ("new pane in its own worktree: shell as open", "New pane in its own worktree: Shell as open")
        )
        await wait_until(lambda: len(panes(app)) == 2 and panes(app)[1].running, message="the second pane")
        second = panes(app)[1]
        hosted = session_pane(app, second).worktree
        assert hosted is not None and hosted.branch == "polter/open" and hosted.worktree.base == "main"
        assert git(repo, "rev-parse", "polter/open").strip() == git(repo, "rev-parse", "main").strip()
        await wait_until(
            lambda: badges(second).get("worktree") == "polter/open +0 -0 · 0 files", message=lambda: str(badges(second))
        )
        await shell(
            pilot, second, "echo one > one.txt && echo draft > draft.txt && git add one.txt && git commit -qm one"
        )
        await wait_until(
            lambda: badges(second).get("worktree") == "polter/open +2 -0 · 2 files · 1 uncommitted",
            timeout=30,
            message=lambda: str(badges(second)),
        )

        # Review: the changed files, committed and uncommitted apart.
        await palette(pilot, ("review worktree of pane 2", "Review worktree of pane 2"))
        await wait_until(lambda: isinstance(app.screen, WorktreeReviewScreen), message="the review screen")
        review = app.screen
        await wait_until(lambda: review.data is not None, message="the review's data")
        assert [(file.path, file.marks) for file in review.data.files] == [("draft.txt", "U"), ("one.txt", "C")]
        await pilot.press("escape")
        await wait_until(lambda: not isinstance(app.screen, WorktreeReviewScreen), message="back")

        # Merge: it offers to commit the uncommitted file, asks, and merges into main.
        await palette(pilot, ("merge pane 2", "Merge pane 2's worktree into main"))
        await wait_until(lambda: isinstance(app.screen, TextPromptScreen), message="the commit message prompt")
        await pilot.press(*"the draft", "enter")
        await wait_until(lambda: isinstance(app.screen, ConfirmScreen), message="the merge's confirmation")
        await pilot.press("y")
        await wait_until(lambda: "Merged polter/open into main" in notices(app), message=lambda: notices(app))
        assert (repo / "one.txt").read_text() == "one\n" and (repo / "draft.txt").read_text() == "draft\n"
        await wait_until(
            lambda: badges(second).get("worktree") == "polter/open +0 -0 · 0 files",
            message=lambda: f"the header after the merge: {badges(second)}",
        )

        # Remove: the pane works in it, so it closes first; then only that worktree and branch go.
        other = snapshot(first_worktree.worktree.path)
        await palette(pilot, ("remove pane 2", "Remove pane 2's worktree"))
        await wait_until(lambda: isinstance(app.screen, ConfirmScreen), message="the removal's confirmation")
        assert "closes pane 2" in str(app.screen.query_one("#detail", Label).render())
        await pilot.press("y")
        await wait_until(lambda: "Removed the worktree of polter/open" in notices(app), message=lambda: notices(app))
        assert len(panes(app)) == 1 and not hosted.worktree.path.exists()
        assert git(repo, "branch", "--list", "polter/open").strip() == ""
        assert snapshot(first_worktree.worktree.path) == other and (repo / "one.txt").exists()


async def test_a_merge_that_would_conflict_is_refused_with_nothing_changed(monkeypatch: Any, repo: Path) -> None:
    async with workspace_app(monkeypatch, worktree_plans(repo, "open")) as (app, pilot):
        [pane] = panes(app)
        await shell(pilot, pane, "echo pane > README.md && git commit -qam pane")
        sh(repo, "echo main > README.md && git commit -qam main")
        before, refs_before = snapshot(repo), refs(repo)
        await palette(pilot, ("merge pane 1", "Merge pane 1's worktree into main"))
        await wait_until(lambda: "would conflict in README.md" in notices(app), message=lambda: notices(app))
        assert "nothing was changed" in notices(app)
        assert snapshot(repo) == before and refs(repo) == refs_before
        assert not isinstance(app.screen, ConfirmScreen)


async def test_removing_uncommitted_work_needs_the_branch_name_and_the_last_pane_is_not_closed(
    monkeypatch: Any, repo: Path
) -> None:
    async with workspace_app(monkeypatch, worktree_plans(repo, "open", title="coder")) as (app, pilot):
        [pane] = panes(app)
        worktree = session_pane(app, pane).worktree
        assert worktree is not None and worktree.branch == "polter/coder"
        await shell(pilot, pane, "echo draft > draft.txt")
        await palette(pilot, ("remove pane 1", "Remove pane 1's worktree"))
        await wait_until(lambda: "is the session's last pane" in notices(app), message=lambda: notices(app))
        assert worktree.worktree.path.is_dir() and len(panes(app)) == 1

        await palette(pilot, ("new pane (same cli", "New pane (same CLI and role)"))
        await wait_until(lambda: len(panes(app)) == 2 and panes(app)[1].running, message="a second pane")
        assert session_pane(app, panes(app)[1]).worktree.branch == "polter/open"  # its own, named after its role
        pane.terminal.focus()
        await palette(pilot, ("remove pane 1", "Remove pane 1's worktree"))
        await wait_until(lambda: isinstance(app.screen, TextPromptScreen), message="the typed confirmation")
        assert "1 uncommitted file(s): draft.txt" in str(app.screen.query_one("#detail", Label).render())
        await pilot.press("escape")
        await wait_until(lambda: not isinstance(app.screen, TextPromptScreen), message="the prompt to go")
        assert worktree.worktree.path.is_dir() and (worktree.worktree.path / "draft.txt").exists()
        assert len(panes(app)) == 2  # nothing was closed either
