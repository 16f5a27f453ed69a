"""Merging a pane's branch into its base: checked first, refused with nothing changed."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.git_repos import git, refs, sh, snapshot

from polter.errors import WorktreeError, WorktreeRefused
from polter.worktrees import Worktree, open_worktree


async def pane(repo: Path, title: str = "coder", **options: str) -> Worktree:
    return (await open_worktree(repo, title=title, **options)).worktree


def untouched(repo: Path, worktree: Worktree) -> tuple[object, ...]:
    """Everything a refused merge must leave as it was: refs, both checkouts' files and status."""
    return (
        refs(repo),
        snapshot(repo),
        snapshot(worktree.path),
        git(repo, "status", "--porcelain"),
        git(worktree.path, "status", "--porcelain"),
    )


async def test_a_pane_commit_is_reviewed_then_merged_onto_the_base(repo: Path) -> None:
    worktree = await pane(repo)
    sh(worktree.path, "echo 'print(42)' > feature.py && git add feature.py && git commit -qm 'add feature'")
    assert not (repo / "feature.py").exists()
    assert [file.path for file in (await worktree.review()).files] == ["feature.py"]
    assert "+print(42)" in (await worktree.file_diff("feature.py")).committed

    check = await worktree.check_merge()
    assert check.ok and check.fast_forward and check.commits == 1 and check.base_checkout == repo.resolve()
    result = await worktree.merge()

    assert result.fast_forward and result.commits == 1
    assert (repo / "feature.py").read_text() == "print(42)\n"  # the base's checkout was updated too
    assert git(repo, "log", "-1", "--format=%s", "main").strip() == "add feature"
    assert git(repo, "status", "--porcelain") == ""
    assert (await worktree.check_merge()).already_merged


async def test_a_base_that_moved_on_gets_a_merge_commit(repo: Path) -> None:
    worktree = await pane(repo)
    sh(worktree.path, "echo pane > pane.txt && git add pane.txt && git commit -qm pane")
    sh(repo, "echo main > main.txt && git add main.txt && git commit -qm main")

    result = await worktree.merge()

    assert not result.fast_forward
    parents = git(repo, "log", "-1", "--format=%P", "main").split()
    assert len(parents) == 2
    assert git(repo, "log", "-1", "--format=%s", "main").strip() == "Merge branch 'polter/coder' (Polter pane coder)"
    assert (repo / "pane.txt").is_file() and (repo / "main.txt").is_file()
    assert git(repo, "status", "--porcelain") == ""


async def test_no_ff_makes_a_merge_commit_even_when_a_fast_forward_would_do(repo: Path) -> None:
    worktree = await pane(repo)
    sh(worktree.path, "echo pane > pane.txt && git add pane.txt && git commit -qm pane")
    result = await worktree.merge(no_ff=True)
    assert not result.fast_forward and len(git(repo, "log", "-1", "--format=%P", "main").split()) == 2


async def test_a_conflict_is_refused_naming_the_files_and_nothing_changes(repo: Path) -> None:
    worktree = await pane(repo)
    sh(worktree.path, "echo pane > README.md && git commit -qam 'pane readme'")
    sh(repo, "echo main > README.md && git commit -qam 'main readme'")
    before = untouched(repo, worktree)

    check = await worktree.check_merge()
    with pytest.raises(WorktreeRefused, match=r"would conflict in README\.md") as refused:
        await worktree.merge()

    assert check.conflicts == ("README.md",) and not check.ok
    assert "nothing was changed" in str(refused.value)
    assert untouched(repo, worktree) == before


async def test_uncommitted_work_in_the_pane_is_refused_until_committed(repo: Path) -> None:
    worktree = await pane(repo)
    sh(worktree.path, "echo draft > draft.txt && echo changed >> README.md")
    before = untouched(repo, worktree)

    with pytest.raises(WorktreeRefused, match=r"the pane has 2 uncommitted file\(s\): README.md, draft.txt"):
        await worktree.merge()
    assert untouched(repo, worktree) == before

    commit = await worktree.commit_all("pane: draft and readme")
    assert git(worktree.path, "log", "-1", "--format=%H %s").strip() == f"{commit} pane: draft and readme"
    await worktree.merge()
    assert (repo / "draft.txt").read_text() == "draft\n"


async def test_commit_all_needs_a_message_and_something_to_commit(repo: Path) -> None:
    worktree = await pane(repo)
    with pytest.raises(WorktreeError, match="nothing to commit"):
        await worktree.commit_all("empty")
    sh(worktree.path, "echo x > x.txt")
    with pytest.raises(WorktreeError, match="needs a message"):
        await worktree.commit_all("  ")


async def test_uncommitted_changes_in_the_bases_checkout_are_refused(repo: Path) -> None:
    worktree = await pane(repo)
    sh(worktree.path, "echo pane > pane.txt && git add pane.txt && git commit -qm pane")
    sh(repo, "echo 'work in progress' >> src/app.py")
    before = untouched(repo, worktree)

    with pytest.raises(WorktreeRefused, match=r"where main is checked out, has uncommitted changes: src/app.py"):
        await worktree.merge()

    assert untouched(repo, worktree) == before


async def test_an_untracked_file_the_merge_would_overwrite_is_refused(repo: Path) -> None:
    worktree = await pane(repo)
    sh(worktree.path, "echo pane > notes.txt && git add notes.txt && git commit -qm notes")
    sh(repo, "echo mine > notes.txt")  # the user's own, untracked
    before = untouched(repo, worktree)

    with pytest.raises(WorktreeRefused, match=r"would overwrite untracked files in .*: notes.txt"):
        await worktree.merge()

    assert untouched(repo, worktree) == before and (repo / "notes.txt").read_text() == "mine\n"


async def test_a_base_no_checkout_has_is_moved_by_ref(repo: Path) -> None:
    git(repo, "branch", "release")
    worktree = await pane(repo, base="release")
    sh(worktree.path, "echo fix > fix.txt && git add fix.txt && git commit -qm fix")
    main_before = snapshot(repo)

    result = await worktree.merge()

    assert git(repo, "rev-parse", "release").strip() == result.commit
    assert git(repo, "log", "-1", "--format=%s", "release").strip() == "fix"
    assert snapshot(repo) == main_before  # main's checkout is not release's


async def test_a_detached_base_cannot_be_merged_into(repo: Path) -> None:
    git(repo, "switch", "--quiet", "--detach", "HEAD")
    worktree = await pane(repo)
    sh(worktree.path, "echo x > x.txt && git add x.txt && git commit -qm x")

    with pytest.raises(WorktreeRefused, match="is not a local branch"):
        await worktree.merge()
