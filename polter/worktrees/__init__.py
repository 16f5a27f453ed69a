"""A git worktree per pane: made, reviewed, merged and removed with plain git (2.38 or newer).

UI-agnostic: the app's panes, its palette and ``polter worktree`` all use this package. The
entry points, for a pane:

- :func:`open_worktree` before its CLI starts: make (or reuse, or recreate) the pane's worktree and
  get the directory to start in;
- :meth:`Worktree.status` when its agent goes idle: the header's ``polter/coder +120 -8 · 5 files``;
- :meth:`Worktree.review` and :meth:`Worktree.file_diff`: the review screen's data;
- :meth:`Worktree.check_merge` / :meth:`~Worktree.merge` / :meth:`~Worktree.commit_all`, and
  :meth:`Worktree.check_remove` / :meth:`~Worktree.remove`: refused (``WorktreeRefused``) before
  anything changes when they would conflict or lose work;
- :func:`list_worktrees` / :func:`find_worktree`: every worktree Polter made, with no app running.

Where worktrees live, what is recorded and the safety rules: docs/worktrees.md.
"""

from polter.worktrees._create import open_worktree, recreate
from polter.worktrees._git import MINIMUM_GIT, require_git
from polter.worktrees._listing import find_worktree, list_worktrees
from polter.worktrees._models import (
    ChangedFile,
    ChangeKind,
    ConfirmSetup,
    FileChange,
    FileDiff,
    MergeCheck,
    MergeResult,
    OpenedWorktree,
    RemoveCheck,
    RemoveResult,
    ReviewData,
    SetupCommand,
    SetupOutcome,
    Worktree,
    WorktreeEntry,
    WorktreeState,
    WorktreeStatus,
)
from polter.worktrees._naming import BRANCH_PREFIX, branch_problem
from polter.worktrees._prepare import INCLUDE_FILE, SETUP_FILE, read_setup, run_setup
from polter.worktrees._remove import forget
from polter.worktrees._store import grant_consent, revoke_consent

__all__ = [
    "BRANCH_PREFIX",
    "INCLUDE_FILE",
    "MINIMUM_GIT",
    "SETUP_FILE",
    "ChangeKind",
    "ChangedFile",
    "ConfirmSetup",
    "FileChange",
    "FileDiff",
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
    "branch_problem",
    "find_worktree",
    "forget",
    "grant_consent",
    "list_worktrees",
    "open_worktree",
    "read_setup",
    "recreate",
    "require_git",
    "revoke_consent",
    "run_setup",
]
