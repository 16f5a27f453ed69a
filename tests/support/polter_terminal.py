"""``polter ARGS`` run in a real terminal as a user runs it: its screen read as text, keys typed at it."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from polter.host.hosted_terminal import HostedTerminal
from polter.terminal.launch import LaunchSpec
from support.waiting import wait_until

COLUMNS, LINES = 120, 40


def polter(*args: str) -> subprocess.CompletedProcess[str]:
    """``polter ARGS`` without a terminal, its output captured."""
    return subprocess.run(
        [sys.executable, "-m", "polter", *args], capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL
    )


class Terminal:
    """A terminal window running ``polter ARGS`` (what the user sees: its screen as text)."""

    def __init__(self, *args: str) -> None:
        self.terminal = HostedTerminal(LaunchSpec(argv=(sys.executable, "-m", "polter", *args)))
        self.terminal.start(COLUMNS, LINES)

    def text(self) -> str:
        screen = self.terminal.screen
        return "\n".join(line.rstrip() for line in screen.display()) if screen is not None else ""

    def type(self, text: str) -> None:
        self.terminal.send(text.encode())

    async def shows(self, text: str, timeout: float = 60) -> None:
        await wait_until(
            lambda: text in self.text(), timeout=timeout, message=lambda: f"{text!r} in the window:\n{self.text()}"
        )

    @property
    def pid(self) -> int:
        process = self.terminal.process
        assert process is not None
        return process.pid

    async def exited(self, timeout: float = 30) -> int:
        process = self.terminal.process
        assert process is not None
        return await asyncio.wait_for(process.wait(), timeout)


@asynccontextmanager
async def window(*args: str) -> AsyncIterator[Terminal]:
    """``polter ARGS`` in a terminal until the block ends."""
    terminal = Terminal(*args)
    try:
        yield terminal
    finally:
        await terminal.terminal.close()
