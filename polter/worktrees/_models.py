"""What crosses the package's boundary: a pane's worktree and what Polter reports about it.

:class:`Worktree` is both the record Polter keeps of a worktree it made and the handle callers use:
``await worktree.status()``, ``.review()``, ``.merge()``, ``.remove()``. Its methods are one-line
calls into the modules that implement them (imported when called: those modules import this one).
"""

from __future__ import annotations

import shlex
from collections.abc import Awaitable, Callable
from datetime import datetime
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ChangeKind",
    "ChangedFile",
    "ConfirmSetup",
    "FileChange",
    "FileDiff",
    "HowOpened",
    "MergeCheck",
    "MergeResult",
    "OpenedWorktree",
    "RemoveCheck",
    "RemoveResult",
    "ReviewData",
    "SetupCommand",
    "SetupOutcome",
    "Worktree",
    "WorktreeEntry",
    "WorktreeState",
    "WorktreeStatus",
]

_FROZEN = ConfigDict(frozen=True, extra="forbid")

HowOpened = Literal["created", "reused", "recreated"]


class Worktree(BaseModel):
    """A linked worktree Polter made for a pane, as recorded in Polter's state dir (and, as a
    marker, in the worktree's own admin dir inside the repository's ``.git``)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    version: Literal[1] = 1
    key: str = Field(description="The record's name: a hash of the folder's path.")
    path: Path = Field(description="The worktree's folder (absolute).")
    branch: str = Field(description="The pane's branch, without refs/heads/ (e.g. polter/coder).")
    base: str = Field(description="What the branch merges into: a branch name, or a commit if HEAD was detached.")
    title: str = Field(description="The pane's title when the worktree was made.")
    repository: Path = Field(description="The repository's common git dir (what identifies the repository).")
    checkout: Path = Field(description="The checkout it was made from (where .worktreeinclude files come from).")
    created_at: datetime

    async def status(self) -> WorktreeStatus:
        """The header's figures (a few cheap git commands; call it when the agent goes idle)."""
        from polter.worktrees._review import status

        return await status(self)

    async def review(self) -> ReviewData:
        """The changed files against the base, committed and uncommitted."""
        from polter.worktrees._review import review

        return await review(self)

    async def file_diff(self, path: str | ChangedFile) -> FileDiff:
        """One file's diff against the base: the committed part and the uncommitted part (a
        :class:`ChangedFile` from :meth:`review` keeps a renamed file's two paths together)."""
        from polter.worktrees._review import file_diff

        return await file_diff(self, path)

    async def check_merge(self) -> MergeCheck:
        from polter.worktrees._merge import check_merge

        return await check_merge(self)

    async def merge(self, *, no_ff: bool = False) -> MergeResult:
        """Merge the branch into its base; raises ``WorktreeRefused`` (nothing changed) when the check fails."""
        from polter.worktrees._merge import merge

        return await merge(self, no_ff=no_ff)

    async def commit_all(self, message: str) -> str:
        """Commit everything uncommitted in the worktree (``git add -A``); returns the commit."""
        from polter.worktrees._merge import commit_all

        return await commit_all(self, message)

    async def check_remove(self) -> RemoveCheck:
        from polter.worktrees._remove import check_remove

        return await check_remove(self)

    async def remove(self, *, discard: bool = False, keep_branch: bool = False) -> RemoveResult:
        """Delete the folder and the branch; ``discard=True`` is the user's word that losing work is fine."""
        from polter.worktrees._remove import remove

        return await remove(self, discard=discard, keep_branch=keep_branch)


WorktreeState = Literal["ready", "missing", "lost"]
"""``ready``: the folder is there; ``missing``: deleted by hand, the branch is left (recreate it);
``lost``: the branch or the repository is gone too (only the record remains)."""


class WorktreeEntry(BaseModel):
    """A Polter worktree found by ``list_worktrees``, with the state of its folder."""

    model_config = _FROZEN

    worktree: Worktree
    state: WorktreeState
    detail: str = Field(default="", description="What is wrong, for a state other than ready.")


class OpenedWorktree(BaseModel):
    """What ``open_worktree`` did, and where the pane's CLI starts."""

    model_config = _FROZEN

    worktree: Worktree
    start_dir: Path = Field(description="The pane's directory inside the worktree (the same relative path).")
    how: HowOpened
    copied: tuple[str, ...] = Field(default=(), description="Files copied by .worktreeinclude (relative paths).")
    setup: SetupOutcome | None = Field(default=None, description="The project's setup command, if it has one.")
    notes: tuple[str, ...] = Field(default=(), description="Things the user should know, one sentence each.")


class SetupCommand(BaseModel):
    """A project's setup command (``.polter/worktrees.toml``) and whether the user allowed it for the repository."""

    model_config = _FROZEN

    command: str | tuple[str, ...] = Field(description="A shell command (run with sh -c) or an argument list.")
    source: Path = Field(description="The file it was read from.")
    repository: Path = Field(description="The repository's common git dir (consent is per repository).")
    consented: bool = False

    @property
    def argv(self) -> list[str]:
        return ["sh", "-c", self.command] if isinstance(self.command, str) else list(self.command)

    @property
    def display(self) -> str:
        return self.command if isinstance(self.command, str) else shlex.join(self.command)


ConfirmSetup = Callable[[SetupCommand], Awaitable[bool]]
"""Asks the user whether a repository's setup command may run in its new worktrees (once per command)."""


class SetupOutcome(BaseModel):
    model_config = _FROZEN

    command: SetupCommand
    ran: bool = Field(description="False when the user has not allowed it (or declined).")
    returncode: int | None = None
    log: Path | None = Field(default=None, description="Everything it printed.")
    tail: str = Field(default="", description="The last lines it printed.")

    @property
    def ok(self) -> bool:
        return self.ran and self.returncode == 0


class WorktreeStatus(BaseModel):
    """A pane header's worktree figures: the branch and its change against the base."""

    model_config = _FROZEN

    branch: str
    base: str
    missing: bool = Field(default=False, description="The folder was deleted by hand.")
    ahead: int = Field(default=0, description="Commits on the branch that the base lacks.")
    behind: int = Field(default=0, description="Commits on the base since the branch forked.")
    files: int = Field(default=0, description="Files that differ from the fork point, committed or not.")
    insertions: int = 0
    deletions: int = 0
    uncommitted: int = Field(default=0, description="Files with uncommitted changes (untracked ones included).")

    def summary(self) -> str:
        """``polter/coder +120 -8 · 5 files`` (with ``· 2 uncommitted`` or ``missing`` when so)."""
        if self.missing:
            return f"{self.branch} · folder missing"
        parts = [f"+{self.insertions} -{self.deletions}", f"{self.files} file{'s' if self.files != 1 else ''}"]
        if self.uncommitted:
            parts.append(f"{self.uncommitted} uncommitted")
        return f"{self.branch} " + " · ".join(parts)


ChangeKind = Literal["added", "modified", "deleted", "renamed", "copied", "type-changed"]


class FileChange(BaseModel):
    """One side of a file's change: what the commits did, or what is not committed yet."""

    model_config = _FROZEN

    kind: ChangeKind
    insertions: int = 0
    deletions: int = 0
    binary: bool = False
    untracked: bool = Field(default=False, description="A new file git does not track yet.")
    old_path: str | None = Field(default=None, description="The path before a rename or copy.")


class ChangedFile(BaseModel):
    """A file that differs from the base, with its committed and its uncommitted change apart."""

    model_config = _FROZEN

    path: str
    committed: FileChange | None = None
    uncommitted: FileChange | None = None

    @property
    def marks(self) -> str:
        """``C`` committed, ``U`` uncommitted, ``CU`` both."""
        return ("C" if self.committed else "") + ("U" if self.uncommitted else "")

    @property
    def insertions(self) -> int:
        return sum(change.insertions for change in (self.committed, self.uncommitted) if change)

    @property
    def deletions(self) -> int:
        return sum(change.deletions for change in (self.committed, self.uncommitted) if change)


class ReviewData(BaseModel):
    model_config = _FROZEN

    worktree: Worktree
    merge_base: str | None = Field(description="The commit the branch forked from (None: no common history).")
    ahead: int = 0
    behind: int = 0
    files: tuple[ChangedFile, ...] = ()


class FileDiff(BaseModel):
    """A unified diff of one file against the base, split at the last commit."""

    model_config = _FROZEN

    path: str
    committed: str = Field(default="", description="Fork point → the branch's last commit.")
    uncommitted: str = Field(default="", description="The branch's last commit → the folder (untracked: whole file).")
    truncated: bool = Field(default=False, description="Cut at DIFF_LIMIT bytes.")


class MergeCheck(BaseModel):
    """Whether the branch can be merged into its base without touching anything else, and why not."""

    model_config = _FROZEN

    worktree: Worktree
    commits: int = Field(default=0, description="Commits the merge brings.")
    already_merged: bool = False
    fast_forward: bool = False
    conflicts: tuple[str, ...] = Field(default=(), description="Files both sides changed differently.")
    pane_uncommitted: tuple[str, ...] = Field(default=(), description="Uncommitted files in the pane's worktree.")
    base_checkout: Path | None = Field(default=None, description="Where the base branch is checked out, if anywhere.")
    base_uncommitted: tuple[str, ...] = Field(default=(), description="Uncommitted files in that checkout.")
    problems: tuple[str, ...] = Field(default=(), description="Every reason to refuse, one sentence each.")

    @property
    def ok(self) -> bool:
        return not self.problems


class MergeResult(BaseModel):
    model_config = _FROZEN

    base: str
    commit: str = Field(description="The base's new tip.")
    commits: int = 0
    fast_forward: bool = False
    already_merged: bool = False


class RemoveCheck(BaseModel):
    """What removing a worktree would delete, and what would stop it."""

    model_config = _FROZEN

    worktree: Worktree
    folder_exists: bool = True
    blockers: tuple[str, ...] = Field(default=(), description="Reasons no confirmation overrides (not Polter's...).")
    uncommitted: tuple[str, ...] = Field(default=(), description="Uncommitted files that would be lost.")
    unmerged: int = Field(default=0, description="Commits on the branch that its base lacks.")
    branch_exists: bool = True

    def losses(self, *, keep_branch: bool = False) -> tuple[str, ...]:
        """What removing would lose, one sentence each (removal needs the user's word when there is any);
        unmerged commits are no loss when the branch is kept."""
        lost = []
        if self.uncommitted:
            lost.append(f"{len(self.uncommitted)} uncommitted file(s): {', '.join(self.uncommitted[:8])}")
        if self.unmerged and not keep_branch:
            lost.append(f"{self.unmerged} commit(s) on {self.worktree.branch} that {self.worktree.base} lacks")
        return tuple(lost)


class RemoveResult(BaseModel):
    model_config = _FROZEN

    removed_folder: bool
    deleted_branch: bool
    branch_tip: str | None = Field(default=None, description="The deleted branch's last commit (to recover it).")
