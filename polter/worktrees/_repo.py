"""A repository as git describes it: where a directory's checkout is, and ``git worktree list --porcelain``."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from polter.errors import GitError, NotARepository
from polter.worktrees._git import git

__all__ = [
    "GitWorktree",
    "Repository",
    "admin_dir",
    "branch_exists",
    "current_branch",
    "find_repository",
    "git_worktrees",
    "is_inside",
    "real",
    "uncommitted_files",
]


class Repository(BaseModel):
    """The checkout a directory is in, and the repository it belongs to."""

    model_config = ConfigDict(frozen=True)

    toplevel: Path
    """The root of the checkout containing the directory (the main one or a linked worktree)."""
    common_dir: Path
    """The repository's git dir shared by all its worktrees (``.../.git``); identifies the repository."""


class GitWorktree(BaseModel):
    """One entry of ``git worktree list --porcelain``."""

    model_config = ConfigDict(frozen=True)

    path: Path
    head: str | None = None
    branch: str | None = None
    """Without ``refs/heads/``; None when detached or bare."""
    main: bool = False
    """The first entry: the main checkout (or the bare repository)."""
    bare: bool = False
    locked: str | None = None
    """The lock's reason ('' when locked without one)."""
    prunable: str | None = None
    """Why git would prune it (its folder is gone)."""


def real(path: Path) -> Path:
    """The path with symlinks resolved, also for a path that no longer exists."""
    return Path(os.path.realpath(path))


def is_inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` is ``folder`` or below it (both resolved)."""
    return real(path).is_relative_to(real(folder))


async def find_repository(directory: Path) -> Repository:
    """The checkout and repository containing ``directory``; :class:`NotARepository` when there is none."""
    directory = directory.expanduser()
    if not directory.is_dir():
        raise NotARepository(f"{directory} is not a directory")
    try:
        output = await git("rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir", cwd=directory)
    except GitError as exc:
        if "not a git repository" in exc.stderr:
            raise NotARepository(
                f"{directory} is not in a git repository, so it cannot have a worktree "
                "(run `git init` there, or start the pane in a repository)"
            ) from None
        if "must be run in a work tree" in exc.stderr:
            raise NotARepository(f"{directory} is inside a git dir or a bare repository, not a checkout") from None
        raise
    toplevel, common_dir = output.stdout.splitlines()[:2]
    return Repository(toplevel=real(Path(toplevel)), common_dir=real(Path(common_dir)))


async def git_worktrees(common_dir: Path) -> list[GitWorktree]:
    """``git worktree list --porcelain -z``: every checkout of the repository, the main one first."""
    output = await git("worktree", "list", "--porcelain", "-z", cwd=common_dir)
    entries: list[GitWorktree] = []
    fields: dict[str, str | None] = {}
    for line in [*output.stdout.split("\0"), ""]:
        if line:
            name, _, value = line.partition(" ")
            fields[name] = value
            continue
        if "worktree" in fields:
            branch = fields.get("branch")
            entries.append(
                GitWorktree(
                    path=Path(fields["worktree"] or ""),
                    head=fields.get("HEAD"),
                    branch=branch.removeprefix("refs/heads/") if branch else None,
                    main=not entries,
                    bare="bare" in fields,
                    locked=fields.get("locked"),
                    prunable=fields.get("prunable"),
                )
            )
        fields = {}
    return entries


def admin_dir(common_dir: Path, path: Path) -> Path | None:
    """The linked worktree's own git dir (``<common>/worktrees/<name>``), found from the repository's
    side: the entry whose ``gitdir`` file points at ``<path>/.git``. None when git knows no such worktree."""
    target = real(path / ".git")
    folder = common_dir / "worktrees"
    if not folder.is_dir():
        return None
    for entry in sorted(folder.iterdir()):
        try:
            pointer = (entry / "gitdir").read_text(encoding="utf-8").strip()
        except OSError:
            continue
        if real(Path(pointer)) == target:
            return entry
    return None


async def current_branch(checkout: Path) -> str | None:
    """The branch checked out in ``checkout`` (None when HEAD is detached)."""
    output = await git("symbolic-ref", "--quiet", "--short", "HEAD", cwd=checkout, ok=(0, 1))
    return output.stdout.strip() or None


async def branch_exists(repo: Path, name: str) -> bool:
    """Whether ``refs/heads/<name>`` exists (``repo``: any directory of the repository)."""
    found = await git("show-ref", "--verify", "--quiet", f"refs/heads/{name}", cwd=repo, ok=(0, 1))
    return found.returncode == 0


async def uncommitted_files(checkout: Path, *, untracked: bool = True) -> list[tuple[str, str]]:
    """``git status --porcelain``'s entries for a checkout: (two-letter code, path), ``??`` for untracked."""
    output = await git(
        "status", "--porcelain=v1", "-z", f"--untracked-files={'all' if untracked else 'no'}", cwd=checkout
    )
    entries, tokens, index = [], output.stdout.split("\0"), 0
    while index < len(tokens) and tokens[index]:
        code, path = tokens[index][:2], tokens[index][3:]
        entries.append((code, path))
        index += 2 if ("R" in code or "C" in code) else 1  # a rename's old path follows
    return entries
