"""Running git: one asyncio subprocess per command, a predictable environment, failures as :class:`GitError`.

Everything Polter does to a repository is a plain git command a user could type. The environment
drops variables that would point git at another repository (``GIT_DIR`` from a hook, say), never
prompts, takes no optional locks (an agent's own ``git commit`` in the pane must not find the index
locked by Polter's status reading) and speaks English, so messages can be matched.
"""

from __future__ import annotations

import asyncio
import os
import re
from dataclasses import dataclass
from pathlib import Path

from polter.errors import GitError, WorktreeError

__all__ = ["MINIMUM_GIT", "GitOutput", "git", "git_version", "require_git"]

MINIMUM_GIT = (2, 38)
"""``git merge-tree --write-tree`` (the merge's dry run) came with 2.38."""

_REPOSITORY_VARIABLES = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
)
_checked: tuple[int, ...] | None = None


@dataclass(frozen=True)
class GitOutput:
    returncode: int
    stdout: str
    stderr: str

    def fields(self) -> list[str]:
        """The NUL-separated fields of a ``-z`` output (the empty trailing field dropped)."""
        return [field for field in self.stdout.split("\0") if field]


def git_environment() -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in _REPOSITORY_VARIABLES}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_OPTIONAL_LOCKS="0", LC_ALL="C", LANGUAGE="C")
    return env


async def git(
    *args: str,
    cwd: Path,
    ok: tuple[int, ...] = (0,),
    stdin: str | None = None,
    what: str | None = None,
) -> GitOutput:
    """``git ARGS`` in ``cwd``. An exit code outside ``ok`` raises :class:`GitError` naming ``what``
    was being done (default: the command) and quoting git's message."""
    if _checked is None:
        await require_git()
    return await _run(args, cwd=cwd, ok=ok, stdin=stdin, what=what)


async def _run(
    args: tuple[str, ...], *, cwd: Path, ok: tuple[int, ...] = (0,), stdin: str | None = None, what: str | None = None
) -> GitOutput:
    command = ("git", *args)
    try:
        process = await asyncio.create_subprocess_exec(
            *command,
            cwd=cwd,
            env=git_environment(),
            stdin=asyncio.subprocess.PIPE if stdin is not None else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
        )
    except FileNotFoundError as exc:
        if not cwd.is_dir():
            raise WorktreeError(f"{cwd} does not exist") from None
        raise WorktreeError("git is not installed (Polter's worktrees need git 2.38 or newer)") from exc
    try:
        out, err = await process.communicate(stdin.encode() if stdin is not None else None)
    except asyncio.CancelledError:
        if process.returncode is None:
            process.kill()
            await process.wait()
        raise
    result = GitOutput(process.returncode or 0, out.decode(errors="replace"), err.decode(errors="replace"))
    if result.returncode not in ok:
        message = result.stderr.strip() or result.stdout.strip() or f"exit status {result.returncode}"
        doing = what or " ".join(command)
        raise GitError(f"{doing}: {message}", command=command, stderr=result.stderr)
    return result


async def git_version() -> tuple[int, ...]:
    """The installed git's version, e.g. ``(2, 39, 5)``."""
    output = await _run(("--version",), cwd=Path("/"))
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", output.stdout)
    if match is None:
        raise WorktreeError(f"cannot read git's version from {output.stdout.strip()!r}")
    return tuple(int(part) for part in match.groups() if part is not None)


async def require_git() -> tuple[int, ...]:
    """Check once per process that git is new enough; raise :class:`WorktreeError` naming both versions."""
    global _checked
    if _checked is None:
        version = await git_version()
        if version[:2] < MINIMUM_GIT:
            have, need = ".".join(map(str, version)), ".".join(map(str, MINIMUM_GIT))
            raise WorktreeError(f"git {have} is too old: Polter's worktrees need git {need} or newer")
        _checked = version
    return _checked
