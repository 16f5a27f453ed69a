"""Where a folder's git repository keeps its own files (hooks, config): found by reading ``.git`` as git does,
with no git process, for the gateway's protected targets and the pane sandbox alike."""

from __future__ import annotations

import contextlib
from pathlib import Path

__all__ = ["git_dirs", "repository"]


def repository(project: Path) -> tuple[Path | None, list[Path]]:
    """The folder holding the ``.git`` that governs ``project``, and the git dirs (a linked worktree has its own
    and the repository's common dir)."""
    for folder in (project, *project.parents):
        marker = folder / ".git"
        if marker.is_dir():
            return folder, [marker]
        if marker.is_file():
            try:
                text = marker.read_text(encoding="utf-8", errors="replace").strip()
            except OSError:
                return folder, []
            if not text.startswith("gitdir:"):
                return folder, []
            own = (folder / text[len("gitdir:") :].strip()).resolve()
            with contextlib.suppress(OSError):
                common = (own / (own / "commondir").read_text(encoding="utf-8").strip()).resolve()
                return folder, [own, common] if common != own else [own]
            return folder, [own]
    return None, []


def git_dirs(project: Path) -> list[Path]:
    """The git dirs that govern ``project`` (see :func:`repository`)."""
    return repository(project)[1]
