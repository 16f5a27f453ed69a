"""What a new worktree needs besides git's checkout: the project's ignored files and its setup command.

``.worktreeinclude`` at the root of the checkout lists, in ``.gitignore`` syntax, files git ignores
that the project needs anyway (``.env``, local config). A file is copied when it matches a pattern
*and* git ignores it (a tracked file is checked out already), and only when the worktree lacks it, so
an agent's edited copy is never overwritten.

``.polter/worktrees.toml`` names the project's setup command (``setup = "npm ci"``). It runs with
the user's environment and secrets, so it runs only after the user allowed that command for that
repository (kept in Polter's state dir; a changed command asks again).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field
from pydantic_core import ErrorDetails

from polter.toml_files import TomlFile
from polter.worktrees._git import git
from polter.worktrees._models import ConfirmSetup, SetupCommand, SetupOutcome, Worktree
from polter.worktrees._store import consented, grant_consent, logs_dir

__all__ = [
    "INCLUDE_FILE",
    "SETUP_FILE",
    "copy_included",
    "prepare_setup",
    "read_setup",
    "run_setup",
]

INCLUDE_FILE = ".worktreeinclude"
SETUP_FILE = Path(".polter") / "worktrees.toml"
TAIL_LINES = 20
TAIL_BYTES = 16384


class ProjectWorktreeConfig(BaseModel):
    """``.polter/worktrees.toml``, committed with the project."""

    model_config = ConfigDict(extra="forbid")

    setup: str | list[str] | None = Field(
        default=None,
        description="Run in every new worktree of the repository once the user allowed it: a shell "
        "command (sh -c) or an argument list.",
    )


async def copy_included(checkout: Path, worktree: Path) -> list[str]:
    """Copy the ignored files ``.worktreeinclude`` names from ``checkout`` into ``worktree`` (those it
    lacks). Returns the copied files' relative paths."""
    if not (checkout / INCLUDE_FILE).is_file():
        return []
    matching = await git("ls-files", "--others", "--ignored", f"--exclude-from={INCLUDE_FILE}", "-z", cwd=checkout)
    if not matching.fields():
        return []
    ignored = await git(
        "check-ignore", "--stdin", "-z", cwd=checkout, stdin="\0".join(matching.fields()) + "\0", ok=(0, 1)
    )
    return await asyncio.to_thread(_copy, checkout, worktree, ignored.fields())


def _copy(source: Path, target: Path, paths: list[str]) -> list[str]:
    copied = []
    for relative in paths:
        origin, destination = source / relative, target / relative
        if destination.exists() or destination.is_symlink() or not (origin.is_file() or origin.is_symlink()):
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(origin, destination, follow_symlinks=False)
        copied.append(relative)
    return copied


def read_setup(checkout: Path, repository: Path) -> SetupCommand | None:
    """The setup command ``.polter/worktrees.toml`` of ``checkout`` names (None without one), with
    whether the user allowed it for ``repository``; a bad file raises ``ConfigError`` with its line."""
    path = checkout / SETUP_FILE
    try:
        file = TomlFile.read(path, what="it")
    except FileNotFoundError:
        return None
    config = file.validate(ProjectWorktreeConfig, message=_setup_message, field=_key)
    if config.setup is None:
        return None
    if not config.setup or (isinstance(config.setup, str) and not config.setup.strip()):
        raise file.problem("must not be empty", ["setup"])
    command: str | tuple[str, ...] = config.setup if isinstance(config.setup, str) else tuple(config.setup)
    setup = SetupCommand(command=command, source=path, repository=repository)
    return setup.model_copy(update={"consented": consented(setup)})


def _key(loc: Sequence[int | str]) -> str:
    """The file's key a problem is under (``setup``, not the union's branch ``setup.str``)."""
    return str(loc[0]) if loc else ""


def _setup_message(error: ErrorDetails) -> str:
    return "unknown key (the file knows: setup)" if error["type"] == "extra_forbidden" else str(error["msg"])


async def prepare_setup(
    worktree: Worktree, setup: SetupCommand | None, confirm: ConfirmSetup | None
) -> SetupOutcome | None:
    """Run ``setup`` in a new worktree if the user allowed it before, or allows it now through ``confirm``."""
    if setup is None:
        return None
    if not setup.consented:
        if confirm is None or not await confirm(setup):
            return SetupOutcome(command=setup, ran=False)
        grant_consent(setup)
        setup = setup.model_copy(update={"consented": True})
    return await run_setup(worktree, setup)


async def run_setup(worktree: Worktree, setup: SetupCommand) -> SetupOutcome:
    """Run an allowed setup command in the worktree's root; everything it prints goes to a log file.

    It gets the user's environment plus ``POLTER_WORKTREE`` (the worktree) and ``POLTER_WORKTREE_SOURCE``
    (the checkout it was made from). Cancelling kills its whole process group.
    """
    if not setup.consented:
        raise ValueError("run_setup needs a command the user allowed (see prepare_setup)")
    log = logs_dir() / f"{worktree.key}-setup.log"
    log.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    env = {**os.environ, "POLTER_WORKTREE": str(worktree.path), "POLTER_WORKTREE_SOURCE": str(worktree.checkout)}
    last = bytearray()
    with log.open("wb") as sink:
        sink.write(f"$ {setup.display}\n".encode())
        try:
            process = await asyncio.create_subprocess_exec(
                *setup.argv,
                cwd=worktree.path,
                env=env,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as exc:
            sink.write(f"cannot start: {exc}\n".encode())
            return SetupOutcome(command=setup, ran=True, returncode=127, log=log, tail=f"cannot start: {exc}")
        try:
            assert process.stdout is not None
            while chunk := await process.stdout.read(65536):
                sink.write(chunk)
                last = (last + chunk)[-TAIL_BYTES:]
            returncode = await process.wait()
        except asyncio.CancelledError:
            if process.returncode is None:
                os.killpg(process.pid, signal.SIGKILL)
                await process.wait()
            raise
    lines = last.decode(errors="replace").replace("\r", "\n").splitlines()
    tail = "\n".join(line.rstrip() for line in lines[-TAIL_LINES:] if line.strip())
    return SetupOutcome(command=setup, ran=True, returncode=returncode, log=log, tail=tail)
