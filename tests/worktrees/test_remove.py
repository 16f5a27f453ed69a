"""Removing a pane's worktree: only that folder and branch, never work without the user's word, never
a folder that is not a linked worktree Polter made."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest
from support.git_repos import git, refs, sh, snapshot

from polter.errors import WorktreeRefused
from polter.paths import state_dir
from polter.worktrees import Worktree, list_worktrees, open_worktree
from polter.worktrees._store import record_key, save_record


async def pane(repo: Path, title: str = "coder") -> Worktree:
    return (await open_worktree(repo, title=title)).worktree


async def test_remove_deletes_only_that_worktree_and_branch(repo: Path, tmp_path: Path) -> None:
    worktree = await pane(repo)
    neighbour = await pane(repo, "reviewer")
    users_own = tmp_path / "hotfix"
    git(repo, "worktree", "add", "--quiet", "-b", "hotfix", str(users_own))
    for folder in (repo, neighbour.path, users_own):
        sh(folder, "echo draft > draft.txt && echo local > .env")  # uncommitted and ignored files
    sh(worktree.path, "echo x > x.txt && git add x.txt && git commit -qm x")
    await worktree.merge()  # merged: nothing would be lost
    before = {folder: snapshot(folder) for folder in (repo, neighbour.path, users_own)}
    other_refs = [line for line in refs(repo).splitlines() if "polter/coder" not in line]

    result = await worktree.remove()

    assert result.removed_folder and result.deleted_branch
    assert not worktree.path.exists()
    assert {folder: snapshot(folder) for folder in (repo, neighbour.path, users_own)} == before
    assert refs(repo).splitlines() == other_refs
    listed = git(repo, "worktree", "list", "--porcelain")
    assert str(worktree.path) not in listed and str(neighbour.path) in listed and str(users_own) in listed
    assert [entry.worktree.branch for entry in await list_worktrees()] == ["polter/reviewer"]


async def test_uncommitted_work_is_kept_unless_the_user_says_discard(repo: Path) -> None:
    worktree = await pane(repo)
    sh(worktree.path, "echo draft > draft.txt")
    before = (refs(repo), snapshot(worktree.path))

    check = await worktree.check_remove()
    with pytest.raises(WorktreeRefused, match=r"would lose work.*\n  1 uncommitted file\(s\): draft.txt"):
        await worktree.remove()

    assert check.uncommitted == ("draft.txt",) and not check.blockers
    assert (refs(repo), snapshot(worktree.path)) == before

    result = await worktree.remove(discard=True)
    assert result.removed_folder and not worktree.path.exists()


async def test_unmerged_commits_are_kept_unless_discarded_or_the_branch_kept(repo: Path) -> None:
    worktree = await pane(repo)
    sh(worktree.path, "echo x > x.txt && git add x.txt && git commit -qm x")

    with pytest.raises(WorktreeRefused, match=r"1 commit\(s\) on polter/coder that main lacks"):
        await worktree.remove()
    assert worktree.path.is_dir()

    result = await worktree.remove(keep_branch=True)  # the commits stay on the branch: nothing lost
    assert result.removed_folder and not result.deleted_branch
    assert git(repo, "log", "-1", "--format=%s", "polter/coder").strip() == "x"


async def test_a_record_pointing_at_the_main_checkout_is_refused_and_nothing_deleted(repo: Path) -> None:
    before = snapshot(repo)
    forged = Worktree(
        key=record_key(repo),
        path=repo.resolve(),
        branch="main",
        base="main",
        title="forged",
        repository=(repo / ".git").resolve(),
        checkout=repo.resolve(),
        created_at=datetime.now(UTC),
    )
    save_record(forged)

    with pytest.raises(WorktreeRefused, match="is the repository's main checkout"):
        await forged.remove(discard=True)

    assert snapshot(repo) == before and git(repo, "rev-parse", "--verify", "main")


async def test_a_folder_that_is_no_worktree_is_refused_and_kept(repo: Path, tmp_path: Path) -> None:
    folder = tmp_path / "precious"
    folder.mkdir()
    (folder / "thesis.tex").write_text("years of work\n")
    forged = (await pane(repo)).model_copy(update={"path": folder, "key": record_key(folder)})
    save_record(forged)

    with pytest.raises(WorktreeRefused, match="git does not list .*precious as a worktree"):
        await forged.remove(discard=True)

    assert (folder / "thesis.tex").read_text() == "years of work\n"


async def test_a_worktree_polter_did_not_make_is_refused(repo: Path, tmp_path: Path) -> None:
    users_own = tmp_path / "mine"
    git(repo, "worktree", "add", "--quiet", "-b", "mine", str(users_own))
    stranger = Worktree(
        key=record_key(users_own),
        path=users_own.resolve(),
        branch="mine",
        base="main",
        title="mine",
        repository=(repo / ".git").resolve(),
        checkout=repo.resolve(),
        created_at=datetime.now(UTC),
    )
    with pytest.raises(WorktreeRefused, match="no record of making a worktree") as refused:
        await stranger.remove(discard=True)
    assert "carries no Polter marker" in str(refused.value)
    save_record(stranger)  # a record alone is not enough: git's side has no marker
    with pytest.raises(WorktreeRefused, match="carries no Polter marker"):
        await stranger.remove(discard=True)
    assert users_own.is_dir() and git(repo, "rev-parse", "--verify", "mine")


async def test_a_locked_worktree_is_refused(repo: Path) -> None:
    worktree = await pane(repo)
    git(repo, "worktree", "lock", "--reason", "on a USB disk", str(worktree.path))
    with pytest.raises(WorktreeRefused, match=r"locked \(on a USB disk\)"):
        await worktree.remove(discard=True)
    assert worktree.path.is_dir()


async def test_a_checkout_nested_inside_is_refused(repo: Path) -> None:
    worktree = await pane(repo)
    nested = worktree.path / "nested"
    git(repo, "worktree", "add", "--quiet", "-b", "nested", str(nested))
    with pytest.raises(WorktreeRefused, match="lies inside"):
        await worktree.remove(discard=True)
    assert (nested / "README.md").is_file()


async def test_a_symlink_in_place_of_the_folder_is_refused(repo: Path, tmp_path: Path) -> None:
    worktree = await pane(repo)
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep.txt").write_text("keep\n")
    shutil.rmtree(worktree.path)
    worktree.path.symlink_to(target)
    with pytest.raises(WorktreeRefused, match="is a symlink"):
        await worktree.remove(discard=True)
    assert (target / "keep.txt").read_text() == "keep\n"


async def test_a_hand_deleted_worktree_is_removed_from_git_and_polter(repo: Path) -> None:
    worktree = await pane(repo)
    shutil.rmtree(worktree.path)

    result = await worktree.remove()

    assert not result.removed_folder and result.deleted_branch
    assert str(worktree.path) not in git(repo, "worktree", "list", "--porcelain")
    assert git(repo, "branch", "--list", "polter/coder") == ""
    assert await list_worktrees() == []
    assert not any((state_dir() / "worktrees").glob("*.json"))
