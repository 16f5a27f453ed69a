"""Names: a pane's branch (``polter/<title>``), its folder, and git's rules for a branch name.

Pure functions, so the config file can reject a bad ``branch`` with its line before git is asked.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

__all__ = ["BRANCH_PREFIX", "branch_for", "branch_problem", "folder_for", "repository_folder", "slug"]

BRANCH_PREFIX = "polter/"
_UNSAFE = re.compile(r"[^a-z0-9._-]+")
_FORBIDDEN = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]")
SLUG_LENGTH = 40


def slug(text: str) -> str:
    """A pane title as one safe name part: lower case, ``[a-z0-9._-]``, no leading dot or dash
    (``"Claude Code #2"`` → ``claude-code-2``); ``pane`` when nothing is left."""
    cleaned = _UNSAFE.sub("-", text.lower()).strip("-.")
    cleaned = re.sub(r"\.{2,}", ".", cleaned)[:SLUG_LENGTH].strip("-.")
    if cleaned.endswith(".lock"):
        cleaned = cleaned[: -len(".lock")] + "-lock"
    return cleaned or "pane"


def branch_for(title: str, attempt: int = 1) -> str:
    """The branch of a pane titled ``title``: ``polter/<slug>``, then ``-2``, ``-3``... on later attempts."""
    name = slug(title)
    return f"{BRANCH_PREFIX}{name}" if attempt == 1 else f"{BRANCH_PREFIX}{name}-{attempt}"


def branch_problem(name: str) -> str | None:
    """Why git would refuse ``name`` as a branch (``git check-ref-format --branch`` rules), or None."""
    if not name:
        return "a branch name cannot be empty"
    if name.startswith("-"):
        return "a branch name cannot start with '-'"
    if name == "HEAD" or name == "@":
        return f"{name!r} cannot be a branch name"
    if match := _FORBIDDEN.search(name):
        return f"a branch name cannot contain {match.group()!r} (no spaces, control characters or ~^:?*[\\)"
    if ".." in name or "@{" in name or "//" in name:
        return "a branch name cannot contain '..', '@{' or '//'"
    if name.startswith("/") or name.endswith("/") or name.endswith("."):
        return "a branch name cannot start or end with '/' or end with '.'"
    for part in name.split("/"):
        if part.startswith("."):
            return "no part of a branch name can start with '.'"
        if part.endswith(".lock"):
            return "no part of a branch name can end with '.lock'"
    return None


def repository_folder(common_dir: Path) -> str:
    """The folder holding one repository's worktrees: its name and a hash of where it is
    (``app-1a2b3c4d``), so two clones called ``app`` never share one."""
    resolved = common_dir.resolve()
    name = resolved.parent.name if resolved.name == ".git" else resolved.name.removesuffix(".git")
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:8]
    return f"{slug(name)}-{digest}"


def folder_for(branch: str) -> str:
    """A worktree's folder name from its branch: ``polter/fix-login`` → ``fix-login``; other
    branches keep their path parts joined by ``-`` (``feature/x`` → ``feature-x``)."""
    return slug(branch.removeprefix(BRANCH_PREFIX).replace("/", "-"))
