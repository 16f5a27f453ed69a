"""What a child Polter supervises (the gateway, the egress proxy) says: its output read line by line as it
comes, and the last lines of its stderr kept, so that a child that cannot start or dies is reported in its own
words."""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Callable

__all__ = ["ChildOutput"]


class ChildOutput:
    """The readers of one supervised child's streams, and the tail of its stderr (``lines``)."""

    def __init__(self, keep: int = 40) -> None:
        self.lines: deque[str] = deque(maxlen=keep)
        self._readers: set[asyncio.Task[None]] = set()

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
