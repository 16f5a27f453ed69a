"""Panes in worktrees of their own, in a real session: the host (in this process) with the real gateway,
shell panes under a test role, and a window on it under Pilot. What the user does: open the pane,
work and commit in it, look at its header, review, merge and remove from the palette."""

from __future__ import annotations

import asyncio
import contextlib
import json
import shutil
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from support.keys import type_keys
from support.dialogs import confirm_shown
from support.gateway import ROLES, write_roles
from support.git_repos import git, refs, sh, snapshot
from support.panes import BASH
from support.privates import notification_messages
from support.session import hosted, window
from support.waiting import wait_until
from support.workspace_app import badges, host_of, palette, panes, run_in, session_pane, shell_plans, workspace_app
from textual.widgets import Label

from polter.adapters.plugins import discover
from polter.paths import config_dir
from polter.launch.config import load_session
from polter.host.session_host import SessionHost
from polter.launch.planning import Launch, PanePlan
from polter.window.confirm import ConfirmScreen
from polter.window.text_prompt import TextEchoScreen
from polter.window.worktree_screen import WorktreeReviewScreen
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
        await wait_until(lambda: isinstance(app.screen, TextEchoScreen), message="the commit message prompt")
        await type_keys(pilot, "the draft", enter=True)
        await wait_until(lambda: confirm_shown(app), message="the merge's confirmation")
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
        await wait_until(lambda: confirm_shown(app), message="the removal's confirmation")
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
        await wait_until(lambda: isinstance(app.screen, TextEchoScreen), message="the typed confirmation")
        assert "1 uncommitted file(s): draft.txt" in str(app.screen.query_one("#detail", Label).render())
        await pilot.press("escape")
        await wait_until(lambda: not isinstance(app.screen, TextEchoScreen), message="the prompt to go")
        assert worktree.worktree.path.is_dir() and (worktree.worktree.path / "draft.txt").exists()
        assert len(panes(app)) == 2  # nothing was closed either


@contextlib.asynccontextmanager
async def starting(monkeypatch: Any, plans: list[PanePlan]) -> AsyncIterator[tuple[SessionHost, Any, Any]]:
    """A session that is starting with ``plans`` and a window on it at once (not waiting for its panes)."""
    monkeypatch.setenv("PS1", "$ ")
    write_roles(config_dir() / "roles", ROLES)
    async with (
        hosted(launch=Launch(plans, discover(entry_points=False))) as host,
        window(host, ready=False) as (app, pilot),
    ):
        app.host = host  # (what support.workspace_app's helpers look for)
        yield host, app, pilot


def with_setup(repo: Path, command: str) -> None:
    (repo / ".polter").mkdir()
    (repo / ".polter" / "worktrees.toml").write_text(f"setup = {command!r}\n")
    git(repo, "add", ".polter")
    git(repo, "commit", "-qm", "setup")


async def test_the_setup_command_runs_once_the_human_allowed_it_in_the_window(monkeypatch: Any, repo: Path) -> None:
    with_setup(repo, "touch .ready")
    async with starting(monkeypatch, worktree_plans(repo, "open")) as (host, app, pilot):
        await wait_until(lambda: confirm_shown(app), timeout=30, message="the question")
        assert "Run this repository's setup command in its new worktrees?" in str(
            app.screen.query_one("#question", Label).render()
        )
        assert "touch .ready" in str(app.screen.query_one("#detail", Label).render())
        [pending] = host.questions.pending()
        assert not host.panes  # the pane waits: its CLI starts in a prepared worktree
        await pilot.press("y")
        await wait_until(lambda: host.ready and len(panes(app)) == 1, timeout=60, message="the pane")
        [pane] = panes(app)
        first = session_pane(app, pane).worktree
        assert first is not None and (first.worktree.path / ".ready").exists()
        await wait_until(lambda: "The setup command `touch .ready` ran" in notices(app), message=lambda: notices(app))

        # Allowed once for the repository: the next worktree runs it without asking.
        pane.terminal.focus()
        await palette(pilot, ("new pane in its own worktree (same", "New pane in its own worktree (same CLI and role)"))
        await wait_until(
            lambda: len(panes(app)) == 2 and badges(panes(app)[1]).get("worktree"), timeout=30, message="pane 2"
        )
        second = session_pane(app, panes(app)[1]).worktree
        assert second is not None and (second.worktree.path / ".ready").exists()
        assert not isinstance(app.screen, ConfirmScreen) and host.questions.pending() == []
        assert second.branch == "polter/open"  # named after its role (the new pane has no title)


async def test_the_setup_command_does_not_run_when_declined(monkeypatch: Any, repo: Path) -> None:
    with_setup(repo, "touch .ready")
    async with starting(monkeypatch, worktree_plans(repo, "open")) as (host, app, pilot):
        await wait_until(lambda: confirm_shown(app), timeout=30, message="the question")
        await pilot.press("n")
        await wait_until(lambda: host.ready and len(panes(app)) == 1, timeout=60, message="the pane")
        worktree = session_pane(app, panes(app)[0]).worktree
        assert worktree is not None and not (worktree.worktree.path / ".ready").exists()
        await wait_until(lambda: "did not run: you said not now" in notices(app), message=lambda: notices(app))
        assert "Run it in the pane yourself" in notices(app)


async def test_with_no_window_attached_the_setup_command_does_not_run_and_the_next_window_hears_why(
    monkeypatch: Any, repo: Path
) -> None:
    with_setup(repo, "touch .ready")
    monkeypatch.setenv("PS1", "$ ")
    write_roles(config_dir() / "roles", ROLES)
    async with hosted(launch=Launch(worktree_plans(repo, "open"), discover(entry_points=False))) as host:
        host.questions.grace = 0.5  # (before the host opens its panes: the task has not run yet)
        await wait_until(lambda: host.ready, timeout=60, message="the session's pane")
        [pane] = host.panes
        assert pane.worktree is not None and not (pane.worktree.worktree.path / ".ready").exists()
        async with window(host) as (app, _pilot):
            await wait_until(
                lambda: "did not run: nobody answered" in notices(app), message=lambda: f"the notice: {notices(app)}"
            )


async def test_a_directory_in_no_repository_says_so_and_gets_no_pane(
    monkeypatch: Any, tmp_path: Path, repo: Path
) -> None:
    notes = tmp_path / "notes"
    notes.mkdir()
    plans = [*worktree_plans(notes, "open", title="notes"), *worktree_plans(repo, "open")]
    async with starting(monkeypatch, plans) as (host, app, _pilot):
        await wait_until(lambda: host.ready and len(panes(app)) == 1, timeout=60, message="the one pane that can open")
        await wait_until(lambda: "is not in a git repository" in notices(app), message=lambda: notices(app))
        assert f"{notes} is not in a git repository, so it cannot have a worktree" in notices(app)
        assert session_pane(app, panes(app)[0]).worktree.branch == "polter/open-shell"
    alone = Launch(worktree_plans(notes, "open"), discover(entry_points=False))
    async with hosted(launch=alone) as host:
        await asyncio.wait_for(host.ended.wait(), 60)
        assert "no pane could open" in host.end_reason and f"{notes} is not in a git repository" in host.end_reason


async def first_session(monkeypatch: Any, repo: Path) -> Path:
    """A session whose pane commits in its worktree, then ends (saved for --restore); the worktree's path."""
    async with workspace_app(monkeypatch, worktree_plans(repo / "src", "open")) as (app, pilot):
        [pane] = panes(app)
        worktree = session_pane(app, pane).worktree
        assert worktree is not None
        await shell(pilot, pane, "echo kept > kept.py && git add kept.py && git commit -qm kept")
        await host_of(app).end("the test ends it")
    return worktree.worktree.path


def restored_plans() -> list[PanePlan]:
    from polter.cli import build_parser
    from polter.cli.app import plan

    return plan(build_parser().parse_args(["--restore"])).plans


async def test_restore_brings_the_pane_back_into_its_worktree(monkeypatch: Any, repo: Path) -> None:
    path = await first_session(monkeypatch, repo)
    [plan] = restored_plans()
    assert plan.setup.worktree and plan.setup.branch == "polter/open-shell"
    async with workspace_app(monkeypatch, [plan]) as (app, pilot):
        [pane] = panes(app)
        assert session_pane(app, pane).worktree.worktree.path == path
        await run_in(pilot, pane, "pwd", str(path / "src"))
        assert (path / "src" / "kept.py").exists() and len(await list_worktrees()) == 1
        await wait_until(
            lambda: f"Back in its worktree on polter/open-shell: {path}" in notices(app), message=lambda: notices(app)
        )
        await wait_until(
            lambda: badges(pane).get("worktree") == "polter/open-shell +1 -0 · 1 file",
            message=lambda: str(badges(pane)),
        )


async def test_a_folder_deleted_before_restore_is_recreated_with_a_notice(monkeypatch: Any, repo: Path) -> None:
    path = await first_session(monkeypatch, repo)
    shutil.rmtree(path)
    async with workspace_app(monkeypatch, restored_plans()) as (app, pilot):
        [pane] = panes(app)
        await run_in(pilot, pane, "pwd", str(path / "src"))
        assert (path / "src" / "kept.py").read_text() == "kept\n"  # the branch's commit is all there
        await wait_until(
            lambda: "Its worktree's folder had been deleted: recreated" in notices(app), message=lambda: notices(app)
        )


async def test_a_folder_deleted_while_the_pane_is_open_is_reported_and_recreated_from_the_palette(
    monkeypatch: Any, repo: Path
) -> None:
    async with workspace_app(monkeypatch, worktree_plans(repo, "open")) as (app, pilot):
        [pane] = panes(app)
        hosted_pane = session_pane(app, pane)
        worktree = hosted_pane.worktree
        assert worktree is not None
        await shell(pilot, pane, "echo kept > kept.py && git add kept.py && git commit -qm kept")
        shutil.rmtree(worktree.worktree.path)
        await wait_until(
            lambda: badges(pane).get("worktree") == "polter/open-shell · folder missing",
            timeout=30,
            message=lambda: f"the header: {badges(pane)}",
        )
        await wait_until(lambda: "Recreate worktree of pane 1" in notices(app), message=lambda: notices(app))
        process = hosted_pane.terminal.process
        await palette(pilot, ("recreate worktree", "Recreate worktree of pane 1"))
        await wait_until(lambda: confirm_shown(app), message="the confirmation")
        await pilot.press("y")
        await wait_until(
            lambda: hosted_pane.terminal.process is not process and pane.running, timeout=30, message="the restart"
        )
        assert (worktree.worktree.path / "kept.py").exists()
        await run_in(pilot, pane, "pwd", str(worktree.worktree.path))
        await wait_until(
            lambda: badges(pane).get("worktree") == "polter/open-shell +1 -0 · 1 file",
            timeout=30,
            message=lambda: f"the header: {badges(pane)}",
        )


async def polter_worktree(*argv: str) -> tuple[int, str, str]:
    """``polter worktree ARGV`` in a process of its own, as typed in another terminal (with no terminal to ask on)."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "polter", "worktree", *argv,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await asyncio.wait_for(process.communicate(), 60)
    return process.returncode or 0, out.decode(), err.decode()


async def test_polter_worktree_finds_the_running_sessions_panes_by_number_and_title(
    monkeypatch: Any, repo: Path
) -> None:
    plans = [*worktree_plans(repo, "open", title="coder"), *worktree_plans(repo, "open", title="reviewer")]
    async with workspace_app(monkeypatch, plans) as (app, pilot):
        coder, reviewer = panes(app)
        await shell(pilot, coder, "echo one > one.txt && git add one.txt && git commit -qm one")

        code, out, err = await polter_worktree("list", "--json")
        assert code == 0, err
        listed = {row["worktree"]["branch"]: row["pane"] for row in json.loads(out)}
        assert listed["polter/coder"]["session"] == "test" and listed["polter/coder"]["number"] == 1
        assert listed["polter/reviewer"]["number"] == 2 and listed["polter/reviewer"]["title"] == "reviewer"
        code, out, _err = await polter_worktree("list")
        assert [line.split()[4] for line in out.splitlines()[1:3]] == ["test:1", "test:2"]

        code, out, err = await polter_worktree("diff", "1", "--stat")
        assert code == 0 and "polter/coder against main: 1 commit(s) ahead" in out and "one.txt" in out, err
        code, out, err = await polter_worktree("merge", "coder", "--yes")
        assert code == 0 and "merged polter/coder into main" in out, err
        assert (repo / "one.txt").exists()
        await wait_until(
            lambda: badges(coder).get("worktree") == "polter/coder +0 -0 · 0 files",
            message=lambda: f"the header told after the merge: {badges(coder)}",
        )

        code, _out, err = await polter_worktree("remove", "2", "--yes")
        assert code == 1 and "pane 2 (reviewer) of session test works in it: pass --close-pane" in err
        reviewer_path = session_pane(app, reviewer).worktree.worktree.path
        assert reviewer_path.is_dir() and len(panes(app)) == 2
        code, out, err = await polter_worktree("remove", "2", "--yes", "--close-pane")
        assert code == 0 and "closed pane 2 (reviewer) of session test" in out and f"removed {reviewer_path}" in out, (
            err
        )
        await wait_until(lambda: len(panes(app)) == 1, message="pane 2 to close")
        assert not reviewer_path.exists()

        code, _out, err = await polter_worktree("diff", "3")
        assert code == 1 and "pane 3 of session test has no worktree of its own (its panes in worktrees: 1)" in err
    code, _out, err = await polter_worktree("diff", "1")
    assert code == 1 and "no session is running, so there is no pane 1" in err
    code, out, err = await polter_worktree("diff", "coder", "--stat")  # the records, with no session
    assert code == 0 and "polter/coder against main" in out, err


async def test_a_session_that_ends_while_asking_about_the_setup_command_opens_no_pane(
    monkeypatch: Any, repo: Path
) -> None:
    with_setup(repo, "touch .ready")
    monkeypatch.setenv("PS1", "$ ")
    write_roles(config_dir() / "roles", ROLES)
    async with hosted(launch=Launch(worktree_plans(repo, "open"), discover(entry_points=False))) as host:
        await wait_until(lambda: host.questions.pending(), timeout=30, message="the question")
        await asyncio.wait_for(host.end("ended by the test"), 30)
        assert not host.panes and host.questions.pending() == []
    [entry] = await list_worktrees()  # the worktree stays (nothing of it is lost), not set up
    assert entry.state == "ready" and not (entry.worktree.path / ".ready").exists()
