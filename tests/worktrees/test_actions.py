"""Merge, remove and setup consent through dialogs, in a plain Textual app (as the palette runs them)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest
from support.keys import type_keys
from support.dialogs import confirm_shown
from support.git_repos import git, sh
from support.waiting import wait_until
from textual.app import App
from textual.widgets import Input, Label

from polter.errors import WorktreeRefused
from polter.window.text_prompt import TextEchoScreen
from polter.window.worktree_actions import merge_worktree, remove_worktree, setup_consent
from polter.worktrees import Worktree, open_worktree


class Host(App[None]):
    """Runs one flow in a worker and keeps its outcome."""

    def __init__(self, flow: Callable[[App[Any]], Awaitable[object]]) -> None:
        super().__init__()
        self.flow = flow
        self.outcome: object = "running"

    def on_mount(self) -> None:
        self.run_worker(self._run(), exit_on_error=False)

    async def _run(self) -> None:
        try:
            self.outcome = await self.flow(self)
        except Exception as exc:  # the test looks at it
            self.outcome = exc


async def pane(repo: Path) -> Worktree:
    return (await open_worktree(repo, title="coder")).worktree


async def test_merge_offers_a_commit_then_asks_then_merges(repo: Path) -> None:
    worktree = await pane(repo)
    sh(worktree.path, "echo done > done.txt")
    app = Host(lambda app: merge_worktree(app, worktree))
    async with app.run_test() as pilot:
        await wait_until(lambda: isinstance(app.screen, TextEchoScreen))
        assert "1 uncommitted file(s). Commit them first?" in str(app.screen.query_one("#question", Label).render())
        await type_keys(pilot, "finish it", enter=True)
        await wait_until(lambda: confirm_shown(app))
        await pilot.press("y")
        await wait_until(lambda: app.outcome != "running")
    assert isinstance(app.outcome, str) and app.outcome.startswith("Merged polter/coder into main (1 commit(s))")
    assert (repo / "done.txt").is_file() and git(repo, "log", "-1", "--format=%s").strip() == "finish it"


async def test_a_conflicting_merge_is_refused_without_a_question(repo: Path) -> None:
    worktree = await pane(repo)
    sh(worktree.path, "echo pane > README.md && git commit -qam pane")
    sh(repo, "echo main > README.md && git commit -qam main")
    app = Host(lambda app: merge_worktree(app, worktree))
    async with app.run_test():
        await wait_until(lambda: app.outcome != "running")
    assert isinstance(app.outcome, WorktreeRefused) and "would conflict in README.md" in str(app.outcome)


async def test_removing_work_needs_the_branch_name_exactly(repo: Path) -> None:
    worktree = await pane(repo)
    sh(worktree.path, "echo draft > draft.txt")
    app = Host(lambda app: remove_worktree(app, worktree))
    async with app.run_test() as pilot:
        await wait_until(lambda: isinstance(app.screen, TextEchoScreen))
        assert "1 uncommitted file(s): draft.txt" in str(app.screen.query_one("#detail", Label).render())
        await type_keys(pilot, "yes", enter=True)
        await pilot.pause()
        assert isinstance(app.screen, TextEchoScreen) and worktree.path.is_dir()  # a near miss is no yes
        assert "that is not 'polter/coder'" in str(app.screen.query_one("#mismatch", Label).render())
        app.screen.query_one(Input).value = ""
        await type_keys(pilot, "polter/coder", enter=True)
        await wait_until(lambda: app.outcome != "running")
    assert isinstance(app.outcome, str) and app.outcome.startswith("Removed the worktree of polter/coder")
    assert not worktree.path.exists()


async def test_escape_keeps_the_worktree(repo: Path) -> None:
    worktree = await pane(repo)
    app = Host(lambda app: remove_worktree(app, worktree))
    async with app.run_test() as pilot:
        await wait_until(lambda: confirm_shown(app))
        await pilot.press("escape")
        await wait_until(lambda: app.outcome != "running")
    assert app.outcome is None and worktree.path.is_dir()


@pytest.mark.parametrize(("key", "ran"), [("y", True), ("n", False)])
async def test_setup_consent_is_asked_in_a_dialog(repo: Path, key: str, ran: bool) -> None:
    (repo / ".polter").mkdir()
    (repo / ".polter" / "worktrees.toml").write_text('setup = "touch .ready"\n')

    async def flow(app: App[Any]) -> object:
        return await open_worktree(repo, title="coder", confirm_setup=setup_consent(app))

    app = Host(flow)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(lambda: confirm_shown(app))
        assert "touch .ready" in str(app.screen.query_one("#detail", Label).render())
        await pilot.press(key)
        await wait_until(lambda: app.outcome != "running")
    assert (app.outcome.worktree.path / ".ready").exists() is ran
