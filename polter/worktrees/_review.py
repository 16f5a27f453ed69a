"""What a pane changed against its base: the header's figures, the changed files, one file's diff.

"Against the base" means since the branch forked from it (``git diff base...HEAD``), so commits
landing on the base meanwhile do not show as the pane's. Committed changes (fork point → the branch's
last commit) and uncommitted ones (that commit → the folder, untracked files included) are kept apart.
A worktree whose folder was deleted by hand still shows its committed changes.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from polter.errors import WorktreeError
from polter.worktrees._git import git
from polter.worktrees._models import ChangedFile, ChangeKind, FileChange, FileDiff, ReviewData, Worktree, WorktreeStatus
from polter.worktrees._repo import uncommitted_files

__all__ = ["DIFF_LIMIT", "file_diff", "review", "status"]

DIFF_LIMIT = 2_000_000
"""Characters of one file's diff shown at most (a generated file can be enormous)."""
BINARY_PROBE = 8000
"""Like git, a file with a NUL byte in its first 8000 bytes is binary."""
LARGEST_COUNTED = 64 << 20
"""An untracked file larger than this counts as binary (its lines are not worth reading)."""
_KINDS: dict[str, ChangeKind] = {
    "A": "added",
    "M": "modified",
    "D": "deleted",
    "R": "renamed",
    "C": "copied",
    "T": "type-changed",
}
_DIFF_OPTIONS = (
    "--no-color",
    "--no-ext-diff",
    "--no-relative",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)


def _where(worktree: Worktree) -> tuple[Path, str, bool]:
    """Where to run git, what the branch's tip is called there, and whether the folder is there."""
    if worktree.path.is_dir():
        return worktree.path, "HEAD", True
    return worktree.repository, f"refs/heads/{worktree.branch}", False


async def _fork_point(worktree: Worktree, cwd: Path, tip: str) -> tuple[str | None, int, int]:
    """The merge base with the base, and how many commits the branch is ahead and behind."""
    exists = await git("rev-parse", "--verify", "--quiet", f"{worktree.base}^{{commit}}", cwd=cwd, ok=(0, 1))
    if exists.returncode != 0:
        raise WorktreeError(f"the base of {worktree.branch}, {worktree.base}, no longer exists")
    counts, fork = await asyncio.gather(
        git("rev-list", "--left-right", "--count", f"{worktree.base}...{tip}", cwd=cwd),
        git("merge-base", worktree.base, tip, cwd=cwd, ok=(0, 1)),
    )
    behind, ahead = (int(number) for number in counts.stdout.split())
    return fork.stdout.strip() or None, ahead, behind


async def status(worktree: Worktree) -> WorktreeStatus:
    """The branch and its change against the base, committed or not (four cheap git commands)."""
    cwd, tip, present = _where(worktree)
    fork, ahead, behind = await _fork_point(worktree, cwd, tip)
    left = fork or worktree.base
    if not present:
        numbers = await git("diff", "--numstat", "-z", "-M", left, tip, cwd=cwd)
        changes = _parse_changes(numbers.stdout, raw=False)
        return WorktreeStatus(
            branch=worktree.branch,
            base=worktree.base,
            missing=True,
            ahead=ahead,
            behind=behind,
            files=len(changes),
            insertions=sum(change.insertions for change in changes.values()),
            deletions=sum(change.deletions for change in changes.values()),
        )
    numbers, entries = await asyncio.gather(
        git("diff", "--numstat", "-z", "-M", left, cwd=cwd), uncommitted_files(cwd, untracked=True)
    )
    changes = _parse_changes(numbers.stdout, raw=False)
    untracked = [path for code, path in entries if code == "??"]
    new_files = await asyncio.to_thread(_count_untracked, cwd, untracked)
    files = {**changes, **new_files}
    return WorktreeStatus(
        branch=worktree.branch,
        base=worktree.base,
        ahead=ahead,
        behind=behind,
        files=len(files),
        insertions=sum(change.insertions for change in files.values()),
        deletions=sum(change.deletions for change in files.values()),
        uncommitted=len(entries),
    )


async def review(worktree: Worktree) -> ReviewData:
    """Every file that differs from the fork point, its committed and uncommitted changes apart."""
    cwd, tip, present = _where(worktree)
    fork, ahead, behind = await _fork_point(worktree, cwd, tip)
    committed_output = await git("diff", "--raw", "--numstat", "-z", "-M", fork or worktree.base, tip, cwd=cwd)
    committed = _parse_changes(committed_output.stdout, raw=True)
    uncommitted: dict[str, FileChange] = {}
    if present:
        tracked, others = await asyncio.gather(
            git("diff", "--raw", "--numstat", "-z", "-M", "HEAD", cwd=cwd),
            git("ls-files", "--others", "--exclude-standard", "-z", cwd=cwd),
        )
        uncommitted = _parse_changes(tracked.stdout, raw=True)
        uncommitted.update(await asyncio.to_thread(_count_untracked, cwd, others.fields()))
    files = [
        ChangedFile(path=path, committed=committed.get(path), uncommitted=uncommitted.get(path))
        for path in sorted({*committed, *uncommitted})
    ]
    return ReviewData(worktree=worktree, merge_base=fork, ahead=ahead, behind=behind, files=tuple(files))


async def file_diff(worktree: Worktree, file: str | ChangedFile) -> FileDiff:
    """The unified diff of one file against the fork point (a :class:`ChangedFile` keeps renames whole)."""
    changed = file if isinstance(file, ChangedFile) else ChangedFile(path=file)
    cwd, tip, present = _where(worktree)
    fork, _ahead, _behind = await _fork_point(worktree, cwd, tip)
    options = ("-c", "core.quotePath=false", "diff", *_DIFF_OPTIONS, "-M")

    def paths(change: FileChange | None) -> list[str]:
        return [changed.path, *([change.old_path] if change and change.old_path else [])]

    committed = await git(*options, fork or worktree.base, tip, "--", *paths(changed.committed), cwd=cwd)
    uncommitted = ""
    if present:
        if changed.uncommitted is not None and changed.uncommitted.untracked:
            output = await git(*options, "--no-index", "--", "/dev/null", changed.path, cwd=cwd, ok=(0, 1))
        else:
            output = await git(*options, "HEAD", "--", *paths(changed.uncommitted), cwd=cwd)
        uncommitted = output.stdout
    truncated = len(committed.stdout) + len(uncommitted) > DIFF_LIMIT
    return FileDiff(
        path=changed.path,
        committed=committed.stdout[:DIFF_LIMIT],
        uncommitted=uncommitted[: max(0, DIFF_LIMIT - len(committed.stdout))],
        truncated=truncated,
    )


# -- parsing git's -z output ------------------------------------------------------------------------


def _parse_changes(output: str, *, raw: bool) -> dict[str, FileChange]:
    """``git diff --numstat -z`` (with ``--raw`` first when ``raw``): path → change."""
    tokens = output.split("\0")
    kinds: list[tuple[ChangeKind, str | None]] = []
    changes: dict[str, FileChange] = {}
    index = 0
    while index < len(tokens) and tokens[index]:
        token = tokens[index]
        if token.startswith(":"):  # --raw: ":modes shas STATUS", then the path (two for renames and copies)
            letter = token.split()[-1][:1]
            two = letter in "RC"
            kinds.append((_KINDS.get(letter, "modified"), tokens[index + 1] if two else None))
            index += 3 if two else 2
            continue
        added, deleted, path = token.split("\t", 2)
        old_path = None
        if not path:  # a rename: the old and the new path follow
            old_path, path = tokens[index + 1], tokens[index + 2]
            index += 2
        index += 1
        position = len(changes)
        kind, raw_old = (
            kinds[position] if raw and position < len(kinds) else ("renamed" if old_path else "modified", None)
        )
        binary = added == "-"
        changes[path] = FileChange(
            kind=kind,
            insertions=0 if binary else int(added),
            deletions=0 if binary else int(deleted),
            binary=binary,
            old_path=old_path or raw_old,
        )
    return changes


def _count_untracked(cwd: Path, paths: list[str]) -> dict[str, FileChange]:
    """Untracked files as additions (their lines counted here: git has no diff for them)."""
    changes = {}
    for path in paths:
        lines, binary = _count_lines(cwd / path)
        if lines is not None:
            changes[path] = FileChange(kind="added", insertions=lines, binary=binary, untracked=True)
    return changes


def _count_lines(path: Path) -> tuple[int | None, bool]:
    """A new file's lines and whether it is binary (a symlink is one line, its target; None: unreadable)."""
    try:
        if path.is_symlink():
            return 1, False
        if path.stat().st_size > LARGEST_COUNTED:
            return 0, True
        lines, last, binary = 0, b"", False
        with path.open("rb") as stream:
            while chunk := stream.read(1 << 20):
                if not lines and not last and b"\0" in chunk[:BINARY_PROBE]:
                    return 0, True
                lines += chunk.count(b"\n")
                last = chunk[-1:]
        return lines + (1 if last and last != b"\n" else 0), binary
    except OSError:
        return None, False  # a socket, or gone since git listed it
