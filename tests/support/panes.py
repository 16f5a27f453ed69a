"""Helpers for tests that drive Polter's panes: a quiet bash with a fixed prompt, reading screens."""

from __future__ import annotations

import shutil
from pathlib import Path

from polter.terminal.launch import LaunchSpec
from polter.host.pty import PtyProcess
from polter.window.terminal_view import TerminalView
from support.waiting import wait_until

BASH = shutil.which("bash") or "/bin/bash"


def bash_spec(**env: str) -> LaunchSpec:
    """bash without rc files and with the prompt ``$ ``, so screens are the same on every machine."""
    return LaunchSpec(argv=(BASH, "--norc", "--noprofile"), env={"PS1": "$ ", **env}, title="bash")


def screen_text(terminal: TerminalView) -> str:
    """The terminal's live screen as text, one line per row, trailing blanks removed."""
    if terminal.screen_model is None:
        return ""
    return "\n".join(line.rstrip() for line in terminal.screen_model.display()).rstrip("\n")


async def wait_for_text(terminal: TerminalView, text: str, *, timeout: float = 15.0) -> None:
    await wait_until(
        lambda: text in screen_text(terminal),
        timeout=timeout,
        message=lambda: f"{text!r} on the screen:\n{screen_text(terminal)}",
    )


async def wait_for_prompt(*terminals: TerminalView) -> None:
    """Until every terminal shows the ``$`` prompt of :func:`bash_spec`."""
    for terminal in terminals:
        await wait_for_text(terminal, "$")


def runs_in_foreground(process: PtyProcess | None, command: str) -> bool:
    """Whether ``command`` (e.g. ``sleep``) is the job in the terminal's foreground by now, exec'd:
    before the exec the job is still a copy of the shell and may not act on signals as itself."""
    if process is None or not process.running:
        return False
    group = process.foreground_process_group()
    if group is None or group == process.pid:
        return False
    try:
        return Path(f"/proc/{group}/comm").read_text().strip() == command
    except OSError:
        return False
