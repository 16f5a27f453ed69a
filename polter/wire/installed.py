"""Which Polter this is, as a user would update it: the clone of Polter's repository it runs from (``make run``
installs Polter into that clone's ``.venv``, editable), and that clone's commit. Two machines' Polters must be the
same to talk (a session's protocol changes between commits of one version number), so the lines that say they
differ name both clones and commits, and how to update the other one (:mod:`polter.wire.ssh`).

Standard library only, reading git's files directly (no ``git`` process): the relay says it in its first line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import polter

__all__ = ["Installation", "this_installation"]

_COMMIT = re.compile(r"^[0-9a-f]{40,64}$")


@dataclass(frozen=True)
class Installation:
    """The clone Polter runs from (None: not a clone, e.g. a wheel in site-packages), at ``commit``."""

    clone: str | None
    commit: str | None

    @property
    def short_commit(self) -> str:
        return self.commit[:10] if self.commit else "an unknown commit"

    def describe(self, version: str, protocol: int) -> str:
        """``Polter 0.1.0 (protocol 3) from /home/me/polter at 1a2b3c4d5e``."""
        where = f" from {self.clone} at {self.short_commit}" if self.clone else ""
        return f"Polter {version} (protocol {protocol}){where}"


def this_installation() -> Installation:
    clone = Path(polter.__file__).resolve().parent.parent
    git = clone / ".git"
    if not git.exists() or not (clone / "pyproject.toml").is_file():
        return Installation(None, None)
    return Installation(str(clone), _head_commit(git))


def _head_commit(git: Path) -> str | None:
    """HEAD's commit, from git's files (a linked worktree's ``.git`` is a file naming its folder)."""
    try:
        if git.is_file():
            git = (git.parent / git.read_text().removeprefix("gitdir:").strip()).resolve()
        head = (git / "HEAD").read_text().strip()
        if _COMMIT.match(head):
            return head
        ref = head.removeprefix("ref:").strip()
        common = git
        if (git / "commondir").is_file():
            common = (git / (git / "commondir").read_text().strip()).resolve()
        loose = common / ref
        if loose.is_file():
            return loose.read_text().strip()
        for line in (common / "packed-refs").read_text().splitlines():
            commit, _, name = line.partition(" ")
            if name == ref and _COMMIT.match(commit):
                return commit
    except OSError:
        return None
    return None
