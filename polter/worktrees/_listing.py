"""Finding Polter's worktrees with no app running: its records, checked against git."""

from __future__ import annotations

from pathlib import Path

from polter.errors import NotARepository, WorktreeError
from polter.worktrees._models import Worktree, WorktreeEntry
from polter.worktrees._repo import admin_dir, branch_exists, find_repository, git_worktrees, real
from polter.worktrees._store import all_records, read_marker

__all__ = ["find_worktree", "list_worktrees"]


async def list_worktrees(near: Path | None = None) -> list[WorktreeEntry]:
    """Every worktree Polter recorded (any repository), with its state; plus, for the repository
    containing ``near``, any whose marker git still has but this state dir has no record of."""
    records = {record.key: record for record in all_records()}
    recorded = set(records)
    if near is not None:
        for marker in await _markers(near):
            records.setdefault(marker.key, marker)
    entries = []
    for worktree in sorted(records.values(), key=lambda record: record.created_at):
        entry = await _entry(worktree)
        if worktree.key not in recorded:
            entry = entry.model_copy(update={"detail": "found in git but not in Polter's records (remove refuses)"})
        entries.append(entry)
    return entries


async def find_worktree(name: str, near: Path | None = None) -> Worktree:
    """The Polter worktree a pane title, branch or folder name means; the repository containing
    ``near`` breaks a tie. ``WorktreeError`` names the candidates when it stays ambiguous."""
    entries = await list_worktrees(near)
    matches = [
        entry.worktree
        for entry in entries
        if name in (entry.worktree.branch, entry.worktree.title, entry.worktree.path.name)
    ]
    if len(matches) > 1 and near is not None:
        repository = await _repository(near)
        if repository is not None:
            matches = [match for match in matches if real(match.repository) == repository] or matches
    if not matches:
        raise WorktreeError(f"no worktree of Polter's is called {name!r} (`polter worktree list` shows them)")
    if len(matches) > 1:
        listed = ", ".join(f"{match.branch} in {match.checkout}" for match in matches)
        raise WorktreeError(f"{name!r} could mean {listed}: give the branch, or run this inside the repository")
    return matches[0]


async def _entry(worktree: Worktree) -> WorktreeEntry:
    if not worktree.repository.is_dir():
        return WorktreeEntry(worktree=worktree, state="lost", detail=f"the repository {worktree.repository} is gone")
    if worktree.path.is_dir():
        listed = any(real(entry.path) == real(worktree.path) for entry in await git_worktrees(worktree.repository))
        if listed:
            return WorktreeEntry(worktree=worktree, state="ready")
        return WorktreeEntry(worktree=worktree, state="lost", detail="git no longer lists the folder as a worktree")
    if await branch_exists(worktree.repository, worktree.branch):
        return WorktreeEntry(worktree=worktree, state="missing", detail="the folder was deleted; recreate it")
    return WorktreeEntry(worktree=worktree, state="lost", detail="the folder and the branch were deleted")


async def _repository(near: Path) -> Path | None:
    try:
        return (await find_repository(near)).common_dir
    except (NotARepository, WorktreeError):
        return None


async def _markers(near: Path) -> list[Worktree]:
    """Polter's markers in the admin dirs of the worktrees of the repository containing ``near``."""
    repository = await _repository(near)
    if repository is None:
        return []
    markers = []
    for entry in await git_worktrees(repository):
        if not entry.main and (marker := read_marker(admin_dir(repository, entry.path))) is not None:
            markers.append(marker)
    return markers
