"""Making a pane's worktree: where it lives, its branch, where the CLI starts; reuse and recreation."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.git_repos import git, sh

from polter.errors import NotARepository, WorktreeError
from polter.paths import state_dir
from polter.worktrees import MINIMUM_GIT, list_worktrees, open_worktree, recreate, require_git


async def test_git_is_new_enough_for_the_merge_dry_run() -> None:
    assert (await require_git())[:2] >= MINIMUM_GIT


async def test_a_pane_gets_its_own_branch_outside_the_checkout_and_starts_at_the_same_relative_path(
    repo: Path, worktrees_dir: Path
) -> None:
    opened = await open_worktree(repo / "src", title="Coder")

    worktree = opened.worktree
    assert opened.how == "created"
    assert worktree.branch == "polter/coder" and worktree.base == "main"
    assert worktree.path.is_relative_to(worktrees_dir.resolve()) and not worktree.path.is_relative_to(repo)
    assert opened.start_dir == worktree.path / "src" and (opened.start_dir / "app.py").is_file()
    assert git(worktree.path, "branch", "--show-current").strip() == "polter/coder"
    # the main checkout shows nothing new: no untracked folder, no other branch checked out
    assert git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    assert git(repo, "branch", "--show-current").strip() == "main"
    # recorded in the state dir and marked in git's admin dir for the worktree
    record = json.loads((state_dir() / "worktrees" / f"{worktree.key}.json").read_text())
    assert record["branch"] == "polter/coder" and Path(record["path"]) == worktree.path
    admin = Path(git(worktree.path, "rev-parse", "--absolute-git-dir").strip())
    assert json.loads((admin / "polter-worktree.json").read_text())["key"] == worktree.key


async def test_a_commit_in_the_worktree_stays_out_of_the_main_checkout(repo: Path) -> None:
    worktree = (await open_worktree(repo, title="coder")).worktree

    sh(worktree.path, "echo 'print(42)' > feature.py && git add feature.py && git commit -qm 'add feature'")

    assert (worktree.path / "feature.py").is_file()
    assert not (repo / "feature.py").exists()
    assert "add feature" not in git(repo, "log", "--oneline", "main")


async def test_a_directory_in_no_repository_says_so(tmp_path: Path) -> None:
    plain = tmp_path / "notes"
    plain.mkdir()
    with pytest.raises(NotARepository, match=r"notes is not in a git repository.*git init"):
        await open_worktree(plain, title="coder")


async def test_a_repository_without_a_commit_says_so(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    git(empty, "init", "--quiet")
    with pytest.raises(WorktreeError, match="has no commit yet"):
        await open_worktree(empty, title="coder")


async def test_panes_with_the_same_title_get_different_branches(repo: Path) -> None:
    first = await open_worktree(repo, title="Claude Code")
    second = await open_worktree(repo, title="Claude Code", in_use={first.worktree.branch})

    assert first.worktree.branch == "polter/claude-code"
    assert second.worktree.branch == "polter/claude-code-2" and second.how == "created"
    assert first.worktree.path != second.worktree.path


async def test_a_title_is_made_a_valid_branch_name(repo: Path) -> None:
    opened = await open_worktree(repo, title="Fix: the ~login~ bug.lock")
    assert opened.worktree.branch == "polter/fix-the-login-bug-lock"
    assert git(repo, "check-ref-format", "--branch", opened.worktree.branch).strip() == opened.worktree.branch


async def test_a_users_own_branch_with_the_panes_name_is_left_alone(repo: Path) -> None:
    git(repo, "branch", "polter/coder")
    opened = await open_worktree(repo, title="coder")
    assert opened.worktree.branch == "polter/coder-2"


async def test_opening_again_reuses_the_panes_worktree_and_its_work(repo: Path) -> None:
    first = await open_worktree(repo / "src", title="coder")
    sh(first.worktree.path, "echo draft > notes.txt")  # uncommitted work

    again = await open_worktree(repo / "src", title="coder")  # a restart, or --restore

    assert again.how == "reused" and again.worktree == first.worktree
    assert again.start_dir == first.start_dir
    assert (again.worktree.path / "notes.txt").read_text() == "draft\n"


async def test_restoring_by_branch_reuses_it(repo: Path) -> None:
    first = await open_worktree(repo, title="coder")
    again = await open_worktree(repo, title="renamed pane", branch=first.worktree.branch)
    assert again.how == "reused" and again.worktree.path == first.worktree.path


async def test_a_given_branch_and_base(repo: Path) -> None:
    git(repo, "switch", "--quiet", "-c", "develop")
    sh(repo, "echo dev > dev.txt && git add dev.txt && git commit -qm dev")
    git(repo, "switch", "--quiet", "main")

    opened = await open_worktree(repo, title="coder", branch="feature/login", base="develop")

    assert opened.worktree.branch == "feature/login" and opened.worktree.base == "develop"
    assert (opened.worktree.path / "dev.txt").is_file()
    assert opened.worktree.path.name == "feature-login"
    # not tracking develop: a plain `git pull` in the pane must not pull the base
    assert git(repo, "config", "--get-regexp", "branch.feature/login", check=False) == ""


async def test_an_existing_branch_gets_a_worktree(repo: Path) -> None:
    git(repo, "branch", "spike")
    opened = await open_worktree(repo, title="coder", branch="spike")
    assert opened.worktree.branch == "spike"
    assert git(opened.worktree.path, "branch", "--show-current").strip() == "spike"


async def test_bad_branch_base_and_taken_branch_are_refused(repo: Path) -> None:
    with pytest.raises(WorktreeError, match="branch 'a b': .*cannot contain ' '"):
        await open_worktree(repo, title="coder", branch="a b")
    with pytest.raises(WorktreeError, match="base 'nope' is neither a branch nor a commit"):
        await open_worktree(repo, title="coder", base="nope")
    with pytest.raises(WorktreeError, match="branch 'main' is checked out at"):
        await open_worktree(repo, title="coder", branch="main")
    first = await open_worktree(repo, title="coder")
    with pytest.raises(WorktreeError, match="already the worktree of another pane"):
        await open_worktree(repo, title="x", branch=first.worktree.branch, in_use={first.worktree.branch})


async def test_a_start_dir_missing_from_the_worktree_falls_back_to_its_parent(repo: Path) -> None:
    (repo / "scratch" / "deep").mkdir(parents=True)  # untracked: not in the worktree
    opened = await open_worktree(repo / "scratch" / "deep", title="coder")
    assert opened.start_dir == opened.worktree.path
    assert any("scratch/deep is not in the worktree" in note for note in opened.notes)


async def test_a_worktree_deleted_by_hand_is_reported_and_recreated_on_its_branch(repo: Path) -> None:
    first = await open_worktree(repo, title="coder")
    sh(first.worktree.path, "echo kept > kept.txt && git add kept.txt && git commit -qm kept")
    shutil.rmtree(first.worktree.path)

    [entry] = await list_worktrees()
    assert entry.state == "missing" and "deleted" in entry.detail
    assert (await first.worktree.status()).missing

    again = await open_worktree(repo, title="coder")  # the pane comes back

    assert again.how == "recreated" and again.worktree.path == first.worktree.path
    assert (again.worktree.path / "kept.txt").read_text() == "kept\n"  # the committed work is back
    assert git(again.worktree.path, "branch", "--show-current").strip() == "polter/coder"
    [entry] = await list_worktrees()
    assert entry.state == "ready"


async def test_recreate_after_git_pruned_the_deleted_folder(repo: Path) -> None:
    worktree = (await open_worktree(repo, title="coder")).worktree
    shutil.rmtree(worktree.path)
    git(repo, "worktree", "prune")

    again = await recreate(worktree)

    assert again.how == "recreated" and (worktree.path / "README.md").is_file()


async def test_a_deleted_folder_and_branch_cannot_be_recreated(repo: Path) -> None:
    worktree = (await open_worktree(repo, title="coder")).worktree
    shutil.rmtree(worktree.path)
    git(repo, "worktree", "prune")
    git(repo, "branch", "-D", "polter/coder")

    [entry] = await list_worktrees()
    assert entry.state == "lost"
    with pytest.raises(WorktreeError, match="so was its branch"):
        await recreate(worktree)


async def test_a_pane_whose_folder_and_branch_were_deleted_starts_afresh_on_its_name(repo: Path) -> None:
    worktree = (await open_worktree(repo, title="coder")).worktree
    shutil.rmtree(worktree.path)
    git(repo, "worktree", "prune")
    git(repo, "branch", "-D", "polter/coder")

    again = await open_worktree(repo, title="coder")

    assert again.how == "created" and again.worktree.branch == "polter/coder"
    assert again.worktree.key == worktree.key and again.worktree.created_at > worktree.created_at
    assert [entry.state for entry in await list_worktrees()] == ["ready"]
