"""Removing a pane's worktree and its branch, where peers lost users' work (one deleted a whole repository).

Before any folder is deleted, all of these must hold, or nothing happens:

- Polter's record of the worktree is in its state dir, for that path and branch;
- ``git worktree list --porcelain`` lists the path as a *linked* worktree (not the main checkout, not a
  bare repository), git has not locked it, and no other checkout of the repository lies inside it;
- the worktree's admin dir in the repository carries Polter's marker for the same record;
- the path is a folder, not a symlink.

The folder is then deleted by ``git worktree remove``, which deletes that worktree's files only. Work
that would be lost (uncommitted files; commits the base lacks, when the branch goes too) needs the
caller's explicit ``discard=True``: the user's word, asked for by the UI or the command line.
"""

from __future__ import annotations

from polter.errors import WorktreeRefused
from polter.worktrees._git import git
from polter.worktrees._models import RemoveCheck, RemoveResult, Worktree
from polter.worktrees._naming import repository_folder
from polter.worktrees._repo import admin_dir, branch_exists, git_worktrees, is_inside, real, uncommitted_files
from polter.worktrees._store import delete_record, load_record, read_marker

__all__ = ["check_remove", "forget", "remove"]


async def check_remove(worktree: Worktree) -> RemoveCheck:
    """What removing the worktree would delete and lose, and what forbids it (nothing is changed)."""
    path = worktree.path
    folder_exists = path.exists() or path.is_symlink()
    blockers: list[str] = []
    stored = load_record(worktree.key)
    if stored is None or real(stored.path) != real(path) or stored.branch != worktree.branch:
        blockers.append(f"Polter has no record of making a worktree at {path} on {worktree.branch}")
    if not worktree.repository.is_dir():
        if folder_exists:
            blockers.append(f"its repository ({worktree.repository}) is gone; delete {path} by hand if you are sure")
        return RemoveCheck(
            worktree=worktree, folder_exists=folder_exists, blockers=tuple(blockers), branch_exists=False
        )
    uncommitted: list[str] = []
    if folder_exists:
        blockers.extend(await _folder_blockers(worktree))
        if not blockers:
            uncommitted = [path for _code, path in await uncommitted_files(worktree.path)]
    has_branch = await branch_exists(worktree.repository, worktree.branch)
    return RemoveCheck(
        worktree=worktree,
        folder_exists=folder_exists,
        blockers=tuple(blockers),
        uncommitted=tuple(uncommitted),
        unmerged=await _unmerged(worktree) if has_branch else 0,
        branch_exists=has_branch,
    )


async def remove(worktree: Worktree, *, discard: bool = False, keep_branch: bool = False) -> RemoveResult:
    """Delete the worktree's folder (if still there), its branch (unless ``keep_branch``) and Polter's record.

    Refuses (``WorktreeRefused``, nothing changed) on any blocker of :func:`check_remove`, and on work
    that would be lost unless ``discard`` is True.
    """
    check = await check_remove(worktree)
    if check.blockers:
        raise WorktreeRefused(f"not removing {worktree.path} (nothing was changed):", reasons=check.blockers)
    losses = check.losses(keep_branch=keep_branch)
    if losses and not discard:
        raise WorktreeRefused(
            f"removing the worktree of {worktree.branch} would lose work (nothing was changed; confirm to discard it):",
            reasons=tuple(losses),
        )
    repo = worktree.repository
    removed_folder = False
    if not repo.is_dir():
        delete_record(worktree)
        return RemoveResult(removed_folder=False, deleted_branch=False)
    if check.folder_exists:
        arguments = ["worktree", "remove", *(["--force"] if discard else []), str(worktree.path)]
        await git(*arguments, cwd=repo, what=f"removing {worktree.path}")
        removed_folder = True
        _drop_empty_parent(worktree)
    elif admin_dir(repo, worktree.path) is not None:
        await git("worktree", "remove", str(worktree.path), cwd=repo)  # clears git's entry for the deleted folder
    tip = None
    if check.branch_exists and not keep_branch:
        tip = (await git("rev-parse", f"refs/heads/{worktree.branch}", cwd=repo)).stdout.strip()
        await git("branch", "-D", worktree.branch, cwd=repo, what=f"deleting the branch {worktree.branch}")
    delete_record(worktree)
    return RemoveResult(removed_folder=removed_folder, deleted_branch=tip is not None, branch_tip=tip)


def forget(worktree: Worktree) -> None:
    """Drop Polter's record only (for a worktree whose repository is gone); deletes nothing else."""
    delete_record(worktree)


async def _folder_blockers(worktree: Worktree) -> list[str]:
    path, repo = worktree.path, worktree.repository
    if path.is_symlink():
        return [f"{path} is a symlink, not the worktree's folder"]
    entries = await git_worktrees(repo)
    entry = next((entry for entry in entries if real(entry.path) == real(path)), None)
    if entry is None:
        return [f"git does not list {path} as a worktree of {repo}; Polter deletes only its linked worktrees"]
    if entry.main or entry.bare:
        return [f"{path} is the repository's main checkout"]
    blockers = []
    if entry.locked is not None:
        reason = f" ({entry.locked})" if entry.locked else ""
        blockers.append(f"git has {path} locked{reason}; `git worktree unlock {path}` first")
    for other in entries:
        if other is not entry and is_inside(other.path, path):
            blockers.append(f"the checkout {other.path} lies inside {path}")
    if is_inside(repo, path):
        blockers.append(f"the repository's git dir {repo} lies inside {path}")
    marker = read_marker(admin_dir(repo, path))
    if marker is None or marker.key != worktree.key or marker.branch != worktree.branch:
        blockers.append(f"git's record of {path} carries no Polter marker for {worktree.branch}")
    return blockers


async def _unmerged(worktree: Worktree) -> int:
    """Commits on the branch its base lacks (a base that is no branch: that no other branch has either)."""
    repo, branch = worktree.repository, f"refs/heads/{worktree.branch}"
    if await branch_exists(repo, worktree.base):
        excluded = [worktree.base]
    else:
        base = await git("rev-parse", "--verify", "--quiet", f"{worktree.base}^{{commit}}", cwd=repo, ok=(0, 1))
        excluded = [*([base.stdout.strip()] if base.returncode == 0 else []), f"--exclude={branch}", "--branches"]
    count = await git("rev-list", "--count", branch, "--not", *excluded, "--", cwd=repo)
    return int(count.stdout.strip())


def _drop_empty_parent(worktree: Worktree) -> None:
    """Remove the repository's folder of worktrees once its last worktree is gone (only if empty)."""
    parent = worktree.path.parent
    if parent.name == repository_folder(worktree.repository):
        try:
            parent.rmdir()
        except OSError:
            pass
