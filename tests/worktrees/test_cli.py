"""``polter worktree list | diff | merge | remove | restore`` with no app running."""

from __future__ import annotations

import asyncio
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.git_repos import git, sh
from support.waiting import wait_until

from polter import cli
from polter.terminal.launch import LaunchSpec
from polter.host.pty import PtyProcess
from polter.worktrees import Worktree, open_worktree


@pytest.fixture
def here(repo: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The command runs inside the repository (its worktrees win a tie)."""
    monkeypatch.chdir(repo)
    return repo


async def open_pane(repo: Path, title: str = "coder") -> Worktree:
    return (await open_worktree(repo, title=title)).worktree


def pane(repo: Path, title: str = "coder") -> Worktree:
    """A pane's worktree, made before the command runs (the command runs its own event loop)."""
    return asyncio.run(open_pane(repo, title))


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = cli.main(["worktree", *argv])
    out, err = capsys.readouterr()
    return code, out, err


async def test_list_shows_every_worktree_its_state_and_changes_in_a_fresh_process(here: Path) -> None:
    coder = await open_pane(here)
    reviewer = await open_pane(here, "reviewer")
    sh(coder.path, "printf 'a\\nb\\n' > a.txt && git add a.txt && git commit -qm a")
    shutil.rmtree(reviewer.path)

    result = subprocess.run(
        [sys.executable, "-m", "polter", "worktree", "list"], capture_output=True, text=True, cwd=here
    )

    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["PANE", "BRANCH", "BASE", "STATE", "OPEN", "CHANGES", "PATH"]
    assert lines[1].split()[:9] == ["coder", "polter/coder", "main", "ready", "-", "+2", "-0", "·", "1"]
    assert lines[2].split()[:5] == ["reviewer", "polter/reviewer", "main", "missing", "-"]
    assert "polter/reviewer: the folder was deleted; recreate it" in result.stdout

    listed = json.loads(
        subprocess.run(
            [sys.executable, "-m", "polter", "worktree", "list", "--json"], capture_output=True, text=True, cwd=here
        ).stdout
    )
    assert [(item["worktree"]["branch"], item["state"], item["status"]["insertions"]) for item in listed] == [
        ("polter/coder", "ready", 2),
        ("polter/reviewer", "missing", 0),
    ]


def test_list_with_none(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "list")[:2] == (0, "no worktrees made by Polter\n")


def test_diff_by_title_or_branch_marks_committed_and_uncommitted(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    worktree = pane(here)
    sh(worktree.path, "echo one > one.txt && git add one.txt && git commit -qm one && echo two > two.txt")

    code, out, _ = run(capsys, "diff", "coder")
    assert code == 0
    assert "polter/coder against main: 1 commit(s) ahead, 0 behind" in out
    assert re.search(r"^ +C +\+1 -0 +one\.txt$", out, re.M) and re.search(r"^ +U +\+1 -0 +two\.txt$", out, re.M)
    assert "── one.txt: committed on polter/coder" in out and "+one" in out
    assert "── two.txt: uncommitted in the worktree" in out and "+two" in out

    code, stat, _ = run(capsys, "diff", "polter/coder", "--stat")
    assert code == 0 and "one.txt" in stat and "+one" not in stat

    _, coloured, _ = run(capsys, "diff", "coder", "--color", "always")
    assert "\x1b[32m+one\x1b[0m" in coloured


def test_an_unknown_pane_says_how_to_list_them(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(capsys, "diff", "nobody")
    assert code == 1 and "no worktree of Polter's is called 'nobody' (`polter worktree list` shows them)" in err


def test_merge_commits_first_when_asked_and_lands_on_the_base(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    worktree = pane(here)
    sh(worktree.path, "echo done > done.txt")

    code, _, err = run(capsys, "merge", "coder", "--yes")
    assert code == 1 and "the pane has 1 uncommitted file(s): done.txt" in err
    assert "pass --commit MESSAGE to commit the pane's files first" in err
    assert not (here / "done.txt").exists()

    code, out, err = run(capsys, "merge", "coder", "--commit", "finish the job", "--yes")
    assert code == 0, err
    assert "committed" in out and "merged polter/coder into main" in out
    assert (here / "done.txt").read_text() == "done\n"
    assert git(here, "log", "-1", "--format=%s", "main").strip() == "finish the job"

    sh(worktree.path, "echo more > more.txt && git add more.txt && git commit -qm more")
    code, _, err = run(capsys, "merge", "coder")  # no terminal to ask on, no --yes
    assert code == 1 and "not a terminal: pass --yes" in err and not (here / "more.txt").exists()


def test_remove_needs_discard_without_a_terminal_and_yes_when_nothing_is_lost(
    here: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    worktree = pane(here)
    sh(worktree.path, "echo draft > draft.txt")

    code, out, err = run(capsys, "remove", "coder")
    assert code == 1 and "draft.txt" in out and "pass --discard" in err
    assert worktree.path.is_dir()

    code, out, err = run(capsys, "remove", "coder", "--discard")
    assert code == 0, err
    assert not worktree.path.exists() and "deleted polter/coder" in out
    assert git(here, "branch", "--list", "polter/coder") == ""

    clean = pane(here, "reviewer")
    code, _, err = run(capsys, "remove", "reviewer")
    assert code == 1 and "not a terminal: pass --yes" in err and clean.path.is_dir()
    assert run(capsys, "remove", "reviewer", "--yes")[0] == 0 and not clean.path.exists()


def test_restore_recreates_a_deleted_folder(here: Path, capsys: pytest.CaptureFixture[str]) -> None:
    worktree = pane(here)
    shutil.rmtree(worktree.path)
    code, out, _ = run(capsys, "restore", "coder")
    assert code == 0 and f"recreated {worktree.path} on polter/coder" in out
    assert (worktree.path / "README.md").is_file()


class Terminal:
    """``polter worktree ...`` on a real pseudo-terminal, typed at like a user would."""

    def __init__(self, process: PtyProcess, output: bytearray) -> None:
        self.process, self.output = process, output

    @classmethod
    def start(cls, cwd: Path, *argv: str) -> Terminal:
        output = bytearray()
        spec = LaunchSpec(argv=(sys.executable, "-m", "polter", "worktree", *argv), cwd=cwd)
        process = PtyProcess.spawn(spec, columns=160, lines=40, on_output=output.extend, on_exit=lambda _code: None)
        return cls(process, output)

    @property
    def text(self) -> str:
        return self.output.decode(errors="replace")

    async def answer(self, prompt: str, line: str) -> None:
        await wait_until(lambda: prompt in self.text, timeout=30, message=lambda: f"{prompt!r} in:\n{self.text}")
        self.process.write(line.encode() + b"\r")

    async def exit_code(self) -> int:
        try:
            return await self.process.wait()
        finally:
            await self.process.aclose()


async def test_removing_work_on_a_terminal_takes_the_branch_name_typed_out(here: Path) -> None:
    worktree = await open_pane(here)
    sh(worktree.path, "echo x > x.txt && git add x.txt && git commit -qm x && echo draft > draft.txt")

    wrong = Terminal.start(here, "remove", "coder")
    await wrong.answer("Type the branch name (polter/coder) to confirm:", "yes")
    assert await wrong.exit_code() == 1
    assert (
        "1 uncommitted file(s): draft.txt" in wrong.text and "1 commit(s) on polter/coder that main lacks" in wrong.text
    )
    assert "not removed" in wrong.text and worktree.path.is_dir()

    right = Terminal.start(here, "remove", "coder")
    await right.answer("Type the branch name (polter/coder) to confirm:", "polter/coder")
    assert await right.exit_code() == 0, right.text
    assert not worktree.path.exists() and git(here, "branch", "--list", "polter/coder") == ""


async def test_merging_on_a_terminal_offers_to_commit_first(here: Path) -> None:
    worktree = await open_pane(here)
    sh(worktree.path, "echo done > done.txt")

    terminal = Terminal.start(here, "merge", "coder")
    await terminal.answer("Commit them first with this message (empty: stop):", "the pane's work")
    await terminal.answer("into main (checked out at", "y")

    assert await terminal.exit_code() == 0, terminal.text
    assert git(here, "log", "-1", "--format=%s", "main").strip() == "the pane's work"
