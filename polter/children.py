"""What a child Polter supervises (the gateway, the egress proxy) says: its output read line by line as it
comes, and the last lines of its stderr kept, so that a child that cannot start or dies is reported in its own
words."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections import deque
from collections.abc import Callable, Sequence

from polter.paths import ENV_GATEWAY_URL, ENV_TOKEN

__all__ = ["ChildOutput", "stop"]


class ChildOutput:
    """The readers of one supervised child's streams, and the tail of its stderr (``lines``)."""

    def __init__(self, keep: int = 40) -> None:
        self.lines: deque[str] = deque(maxlen=keep)
        self._readers: set[asyncio.Task[None]] = set()

    async def start(self, argv: Sequence[str]) -> asyncio.subprocess.Process:
        """Start the child: in a session of its own, its stdin a pipe only this process writes to (so it stops
        when this process ends, however it ends), without a pane's identity in its environment, its stderr
        followed."""
        env = {key: value for key, value in os.environ.items() if key not in (ENV_TOKEN, ENV_GATEWAY_URL)}
        env["PYTHONUNBUFFERED"] = "1"
        self.lines.clear()
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        assert process.stdout is not None and process.stderr is not None
        self.follow(process.stderr)
        return process

    def follow(self, stream: asyncio.StreamReader, sink: Callable[[str], None] | None = None) -> None:
        """Read ``stream`` until its end, each line to ``sink`` (default: kept as stderr's tail)."""
        take = sink or self.lines.append

        async def read() -> None:
            while line := await stream.readline():
                take(line.decode(errors="replace").rstrip())

        task = asyncio.create_task(read())
        self._readers.add(task)
        task.add_done_callback(self._readers.discard)

    def failure(self, what: str) -> str:
        """``what``, with the child's last words on stderr when it said anything."""
        tail = [line for line in self.lines if line.strip()][-3:]
        return f"{what}: " + " / ".join(tail) if tail else what

    def cancel(self) -> None:
        for reader in list(self._readers):
            reader.cancel()


async def stop(process: asyncio.subprocess.Process, grace: float, *, stdin_first: bool = False) -> None:
    """End a supervised child: close its stdin first when that is its own way to stop (``stdin_first``), then
    SIGTERM, then SIGKILL, each after ``grace`` seconds; returns once it is reaped."""
    steps = [process.stdin.close] if stdin_first and process.stdin is not None else []
    steps += [lambda: process.send_signal(signal.SIGTERM), process.kill]
    for step in steps:
        if process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            step()
        if step is process.kill:
            break
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(process.wait(), grace)
    await process.wait()
