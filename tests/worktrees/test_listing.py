"""Finding Polter's worktrees with no app running: by title, branch or folder; ties; lost records."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support.git_repos import make_repo

from polter.errors import WorktreeError
from polter.paths import state_dir
from polter.worktrees import find_worktree, list_worktrees, open_worktree


async def test_a_pane_is_found_by_title_branch_or_folder(repo: Path) -> None:
    worktree = (await open_worktree(repo, title="Coder One")).worktree
    for name in ("Coder One", "polter/coder-one", "coder-one"):
        assert await find_worktree(name) == worktree


async def test_the_repository_you_are_in_breaks_a_tie(repo: Path, tmp_path: Path) -> None:
    other = make_repo(tmp_path / "other")
    mine = (await open_worktree(repo, title="coder")).worktree
    theirs = (await open_worktree(other, title="coder")).worktree

    assert await find_worktree("coder", near=repo / "src") == mine
    assert await find_worktree("coder", near=theirs.path) == theirs
    with pytest.raises(WorktreeError, match=r"'coder' could mean polter/coder in .*app, polter/coder in .*other"):
        await find_worktree("coder", near=tmp_path)


async def test_a_worktree_whose_record_was_lost_is_still_listed_from_git(repo: Path) -> None:
    worktree = (await open_worktree(repo, title="coder")).worktree
    shutil.rmtree(state_dir() / "worktrees")  # a new state dir, say

    assert await list_worktrees() == []  # from nowhere, nothing is known
    [entry] = await list_worktrees(near=repo)  # inside the repository, git's markers are read
    assert entry.worktree == worktree and entry.state == "ready"
    assert "not in Polter's records (remove refuses)" in entry.detail
    with pytest.raises(WorktreeError, match="no record of making a worktree"):
        await entry.worktree.remove(discard=True)
    assert worktree.path.is_dir()


async def test_a_worktree_of_a_deleted_repository_is_lost_and_can_be_forgotten(repo: Path) -> None:
    worktree = (await open_worktree(repo, title="coder")).worktree
    shutil.rmtree(worktree.path)
    shutil.rmtree(repo)

    [entry] = await list_worktrees()
    assert entry.state == "lost" and "is gone" in entry.detail
    result = await worktree.remove()
    assert not result.removed_folder and await list_worktrees() == []
