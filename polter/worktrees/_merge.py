"""Merging a pane's branch into its base: checked first, refused without touching anything.

The check is a dry run: ``git merge-tree --write-tree`` computes the merge in git's object store only
(no checkout, no ref moves) and names the conflicting files. A merge is refused when it would conflict,
when the pane has uncommitted changes (:func:`commit_all` commits them), when the checkout that has
the base branch has uncommitted changes, or when it would overwrite an untracked file there.

The merge itself: the merge commit is made from that tree (``git commit-tree``; no commit when a fast
forward does), then the base moves to it: in its checkout with ``git merge --ff-only`` (which updates
the files), or with ``git update-ref`` guarded by the old value when no checkout has the base. By hand
the same is ``git -C <base checkout> merge <branch>``.
"""

from __future__ import annotations

from pathlib import Path

from polter.errors import WorktreeError, WorktreeRefused
from polter.worktrees._git import git
from polter.worktrees._models import MergeCheck, MergeResult, Worktree
from polter.worktrees._repo import branch_exists, current_branch, git_worktrees, uncommitted_files

__all__ = ["check_merge", "commit_all", "merge"]


async def check_merge(worktree: Worktree) -> MergeCheck:
    """Everything that would stop the merge of the pane's branch into its base (nothing is changed)."""
    repo, branch, base = worktree.repository, worktree.branch, worktree.base
    problems: list[str] = []
    if not await branch_exists(repo, branch):
        problems.append(f"the branch {branch} no longer exists")
    if not await branch_exists(repo, base):
        problems.append(f"the base {base} is not a local branch, so there is nothing to merge into (merge by hand)")
    if problems:
        return MergeCheck(worktree=worktree, problems=tuple(problems))
    count = await git("rev-list", "--count", f"{base}..{branch}", cwd=repo)
    commits = int(count.stdout.strip())
    pane_uncommitted = await _uncommitted(worktree.path, untracked=True) if worktree.path.is_dir() else []
    if pane_uncommitted:
        problems.append(
            f"the pane has {len(pane_uncommitted)} uncommitted file(s): {_names(pane_uncommitted)} (commit them first)"
        )
    if commits == 0:
        return MergeCheck(
            worktree=worktree, already_merged=True, pane_uncommitted=tuple(pane_uncommitted), problems=tuple(problems)
        )
    ancestor = await git("merge-base", "--is-ancestor", base, branch, cwd=repo, ok=(0, 1))
    tree, conflicts = await _merged_tree(repo, base, branch)
    if conflicts:
        problems.append(f"merging {branch} into {base} would conflict in {_names(conflicts)}")
    checkout = next(
        (entry.path for entry in await git_worktrees(repo) if entry.branch == base and not entry.prunable), None
    )
    base_uncommitted: list[str] = []
    if checkout is not None and checkout.is_dir():
        base_uncommitted = await _uncommitted(checkout, untracked=False)
        if base_uncommitted:
            problems.append(
                f"{checkout}, where {base} is checked out, has uncommitted changes: {_names(base_uncommitted)}"
            )
        if tree is not None and (clobbered := await _untracked_in_the_way(checkout, base, tree)):
            problems.append(f"the merge would overwrite untracked files in {checkout}: {_names(clobbered)}")
    return MergeCheck(
        worktree=worktree,
        commits=commits,
        fast_forward=ancestor.returncode == 0,
        conflicts=tuple(conflicts),
        pane_uncommitted=tuple(pane_uncommitted),
        base_checkout=checkout,
        base_uncommitted=tuple(base_uncommitted),
        problems=tuple(problems),
    )


async def merge(worktree: Worktree, *, no_ff: bool = False) -> MergeResult:
    """Merge the branch into its base after :func:`check_merge`; ``WorktreeRefused`` changes nothing."""
    check = await check_merge(worktree)
    repo, branch, base = worktree.repository, worktree.branch, worktree.base
    if not check.ok:
        raise WorktreeRefused(f"not merging {branch} into {base} (nothing was changed):", reasons=check.problems)
    old = (await git("rev-parse", f"refs/heads/{base}", cwd=repo)).stdout.strip()
    if check.already_merged:
        return MergeResult(base=base, commit=old, already_merged=True)
    tip = (await git("rev-parse", f"refs/heads/{branch}", cwd=repo)).stdout.strip()
    if check.fast_forward and not no_ff:
        new = tip
    else:
        tree, conflicts = await _merged_tree(repo, old, tip)  # the commits the merge commit will have as parents
        if tree is None or conflicts:  # the base moved since the check
            raise WorktreeRefused(f"not merging {branch} into {base}: it changed meanwhile (nothing was changed)")
        message = f"Merge branch '{branch}' (Polter pane {worktree.title})"
        made = await git(
            "commit-tree", tree, "-p", old, "-p", tip, "-m", message, cwd=repo, what="making the merge commit"
        )
        new = made.stdout.strip()
    if check.base_checkout is not None:
        if await current_branch(check.base_checkout) != base:
            raise WorktreeRefused(
                f"not merging: {check.base_checkout} no longer has {base} checked out (nothing was changed)"
            )
        await git(
            "merge",
            "--ff-only",
            "--quiet",
            new,
            cwd=check.base_checkout,
            what=f"moving {base} in {check.base_checkout}",
        )
    else:
        await git("update-ref", "-m", f"polter: merge {branch}", f"refs/heads/{base}", new, old, cwd=repo)
    return MergeResult(base=base, commit=new, commits=check.commits, fast_forward=new == tip)


async def commit_all(worktree: Worktree, message: str) -> str:
    """Commit everything uncommitted in the pane's worktree (``git add -A && git commit``); the new commit."""
    if not message.strip():
        raise WorktreeError("a commit needs a message")
    if not worktree.path.is_dir():
        raise WorktreeError(f"the worktree of {worktree.branch} is missing ({worktree.path})")
    if not await _uncommitted(worktree.path, untracked=True):
        raise WorktreeError(f"nothing to commit in {worktree.path}")
    await git("add", "--all", cwd=worktree.path)
    await git("commit", "--quiet", "-m", message, cwd=worktree.path, what=f"committing in {worktree.path}")
    return (await git("rev-parse", "HEAD", cwd=worktree.path)).stdout.strip()


async def _merged_tree(repo: Path, base: str, branch: str) -> tuple[str | None, list[str]]:
    """The merge's tree and its conflicting files (``git merge-tree --write-tree``: touches no ref or checkout)."""
    output = await git(
        "merge-tree", "--write-tree", "--name-only", "--no-messages", "-z", base, branch, cwd=repo, ok=(0, 1)
    )
    tree, *conflicts = output.fields()
    return (tree or None), sorted(set(conflicts)) if output.returncode == 1 else []


async def _uncommitted(checkout: Path, *, untracked: bool) -> list[str]:
    return [path for _code, path in await uncommitted_files(checkout, untracked=untracked)]


async def _untracked_in_the_way(checkout: Path, base: str, tree: str) -> list[str]:
    """Files the merge adds that already exist, untracked, in the base's checkout."""
    added = await git("diff", "--name-only", "--no-renames", "--diff-filter=A", "-z", base, tree, cwd=checkout)
    return [path for path in added.fields() if (checkout / path).exists() or (checkout / path).is_symlink()]


def _names(paths: list[str], limit: int = 8) -> str:
    shown = ", ".join(paths[:limit])
    return shown + (f" and {len(paths) - limit} more" if len(paths) > limit else "")
