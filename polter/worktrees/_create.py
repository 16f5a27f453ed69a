"""A pane's worktree: made, reused or recreated, and where in it the pane's CLI starts.

A pane asking for a worktree in directory D gets a linked worktree of the repository containing D,
on its own branch, in ``<worktrees dir>/<repository>-<hash>/<branch>`` (outside every checkout; see
:func:`polter.paths.worktrees_dir`), and starts at D's path relative to its checkout's root.

Which worktree: with ``branch`` given, the Polter worktree on that branch if there is one, else a new
worktree on that branch (made from ``base`` or HEAD when it does not exist yet). Without ``branch``,
the pane's own branch ``polter/<title>``: reused when Polter made it for this repository and no other
pane of the session uses it (``in_use``), else ``polter/<title>-2`` and so on. A reused worktree whose
folder was deleted by hand is recreated on its branch.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import UTC, datetime
from pathlib import Path

from polter.errors import GitError, WorktreeError
from polter.paths import worktrees_dir
from polter.worktrees._git import git
from polter.worktrees._models import ConfirmSetup, HowOpened, OpenedWorktree, SetupOutcome, Worktree
from polter.worktrees._naming import branch_for, branch_problem, folder_for, repository_folder
from polter.worktrees._prepare import copy_included, prepare_setup, read_setup
from polter.worktrees._repo import (
    Repository,
    admin_dir,
    branch_exists,
    current_branch,
    find_repository,
    git_worktrees,
    is_inside,
    real,
)
from polter.worktrees._store import all_records, delete_record, record_key, save_record, write_marker

__all__ = ["open_worktree", "recreate"]

MAX_ATTEMPTS = 100


async def open_worktree(
    directory: Path,
    *,
    title: str,
    branch: str | None = None,
    base: str | None = None,
    in_use: Collection[str] = (),
    confirm_setup: ConfirmSetup | None = None,
) -> OpenedWorktree:
    """The worktree a pane titled ``title`` in ``directory`` runs in (see the module's docstring).

    ``in_use``: branches other panes of the session work in (never handed out twice). ``confirm_setup``
    asks the user, once per repository and command, whether the project's setup command may run in a new
    worktree; without it an unconfirmed command does not run. Raises ``NotARepository`` for a directory
    in no repository, ``WorktreeError`` for a bad ``branch`` or ``base``.
    """
    if branch is not None and (problem := branch_problem(branch)):
        raise WorktreeError(f"branch {branch!r}: {problem}")
    directory = directory.expanduser()
    if branch is not None and branch not in in_use:
        for record in all_records():
            if record.branch == branch and is_inside(directory, record.path):
                # a restored pane's directory is inside its own worktree, which may have been deleted by hand
                return await _reopen(record, real(directory).relative_to(real(record.path)), confirm_setup)
    repository = await find_repository(directory)
    relative = real(directory).relative_to(repository.toplevel)
    ours = {record.branch: record for record in all_records() if real(record.repository) == repository.common_dir}
    candidates = [branch] if branch is not None else [branch_for(title, attempt) for attempt in range(1, MAX_ATTEMPTS)]
    checked_out = {entry.branch: entry.path for entry in await git_worktrees(repository.common_dir) if entry.branch}
    for candidate in candidates:
        if candidate in in_use:
            if branch is not None:
                raise WorktreeError(f"branch {branch!r} is already the worktree of another pane")
            continue
        if (ours_before := ours.get(candidate)) is not None:
            if ours_before.path.is_dir() or await branch_exists(repository.common_dir, candidate):
                return await _reopen(ours_before, relative, confirm_setup)
            delete_record(ours_before)  # its folder and its branch were deleted: nothing left to come back to
        if candidate in checked_out:
            if branch is not None:
                raise WorktreeError(
                    f"branch {branch!r} is checked out at {checked_out[candidate]}; a pane's worktree needs a "
                    "branch no other checkout has"
                )
            continue
        exists = await branch_exists(repository.common_dir, candidate)
        if exists and branch is None:
            continue  # someone's own branch that happens to have the pane's name
        try:
            worktree = await _add(repository, candidate, base=base, title=title, new_branch=not exists)
        except GitError as exc:
            if branch is None and "already exists" in exc.stderr:
                continue  # another process took the name a moment ago
            raise
        return await _prepared(worktree, relative, "created", confirm_setup)
    raise WorktreeError(f"no free branch name for a pane titled {title!r} (tried {candidates[0]} and more)")


async def recreate(worktree: Worktree, confirm_setup: ConfirmSetup | None = None) -> OpenedWorktree:
    """Make a worktree whose folder was deleted by hand again, on its branch, at its path."""
    return await _reopen(worktree, Path(), confirm_setup)


async def _reopen(record: Worktree, relative: Path, confirm_setup: ConfirmSetup | None) -> OpenedWorktree:
    if record.path.is_dir():
        if admin_dir(record.repository, record.path) is None:
            raise WorktreeError(
                f"{record.path} exists but git does not know it as a worktree any more; move it away to recreate "
                f"the worktree of {record.branch}"
            )
        return await _prepared(record, relative, "reused", None)
    if record.path.exists() or record.path.is_symlink():
        raise WorktreeError(f"{record.path} is in the way of the worktree of {record.branch} (not a folder)")
    if not await branch_exists(record.repository, record.branch):
        raise WorktreeError(
            f"the worktree of {record.branch} was deleted, and so was its branch: nothing is left to recreate "
            f"(`polter worktree remove {record.title}` forgets it)"
        )
    if admin_dir(record.repository, record.path) is not None:
        # git still lists the deleted folder: clear that one entry (the same as `git worktree prune`, for it only)
        await git("worktree", "remove", str(record.path), cwd=record.repository)
    await git("worktree", "add", str(record.path), record.branch, cwd=record.repository, what="recreating the worktree")
    _mark(record)
    return await _prepared(record, relative, "recreated", confirm_setup)


async def _add(repository: Repository, branch: str, *, base: str | None, title: str, new_branch: bool) -> Worktree:
    source_branch = await current_branch(repository.toplevel)
    start = base or source_branch or "HEAD"
    verified = await git("rev-parse", "--verify", "--quiet", f"{start}^{{commit}}", cwd=repository.toplevel, ok=(0, 1))
    if verified.returncode != 0:
        if base is None:
            raise WorktreeError(f"{repository.toplevel} has no commit yet: commit something before making a worktree")
        raise WorktreeError(f"base {base!r} is neither a branch nor a commit of {repository.toplevel}")
    head = verified.stdout.strip()
    merge_into = base or source_branch or head  # a detached HEAD: the branch merges into nothing (merge refuses)
    path = _free_folder(worktrees_dir() / repository_folder(repository.common_dir), folder_for(branch))
    path.parent.mkdir(parents=True, exist_ok=True)
    if new_branch:
        arguments = ["worktree", "add", "--no-track", "-b", branch, str(path), start]
    else:
        arguments = ["worktree", "add", str(path), branch]
    await git(*arguments, cwd=repository.common_dir, what=f"making a worktree on {branch}")
    worktree = Worktree(
        key=record_key(path),
        path=real(path),
        branch=branch,
        base=merge_into,
        title=title,
        repository=repository.common_dir,
        checkout=repository.toplevel,
        created_at=datetime.now(UTC),
    )
    _mark(worktree)
    return worktree


def _mark(worktree: Worktree) -> None:
    """Record that Polter made this worktree: in the state dir and in its admin dir."""
    admin = admin_dir(worktree.repository, worktree.path)
    if admin is None:
        raise WorktreeError(f"git made {worktree.path} but does not list it as a worktree")
    write_marker(admin, worktree)
    save_record(worktree)


def _free_folder(parent: Path, name: str) -> Path:
    for attempt in range(1, MAX_ATTEMPTS):
        path = parent / (name if attempt == 1 else f"{name}-{attempt}")
        if not path.exists() and not path.is_symlink():
            return path
    raise WorktreeError(f"no free folder for {name} in {parent}")


async def _prepared(
    worktree: Worktree, relative: Path, how: HowOpened, confirm_setup: ConfirmSetup | None
) -> OpenedWorktree:
    """Copy the included files it lacks, run the setup command in a new folder, find the start dir."""
    copied = await copy_included(worktree.checkout, worktree.path) if worktree.checkout.is_dir() else []
    setup: SetupOutcome | None = None
    notes: list[str] = []
    if how != "reused" and worktree.checkout.is_dir():
        setup = await prepare_setup(worktree, read_setup(worktree.checkout, worktree.repository), confirm_setup)
        if setup is not None and not setup.ran:
            notes.append(f"the setup command `{setup.command.display}` did not run (not allowed for this repository)")
        elif setup is not None and not setup.ok:
            notes.append(
                f"the setup command `{setup.command.display}` failed (exit {setup.returncode}, log {setup.log})"
            )
    start = worktree.path / relative
    while not start.is_dir() and start != worktree.path:
        start = start.parent
    if start != worktree.path / relative:
        notes.append(f"{relative} is not in the worktree (untracked?); the pane starts in {start}")
    return OpenedWorktree(
        worktree=worktree, start_dir=start, how=how, copied=tuple(copied), setup=setup, notes=tuple(notes)
    )
