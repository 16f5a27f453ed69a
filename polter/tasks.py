"""Background tasks that belong to an owner: each one named for the log, all cancelled when the owner closes.

asyncio keeps only a weak reference to a task, and a task's exception nobody awaits is reported (if at all)
when the task is collected, far from its cause. :class:`BackgroundTasks` holds its tasks until they end,
logs a failure at once with what the task was doing, and cancels what is left in :meth:`cancel`. An
expected failure (a :class:`~polter.errors.PolterError`: the gateway restarting, a session that went) is a
warning with its message; anything else is a bug, logged with its traceback.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
from collections.abc import Awaitable
from typing import Any, TypeVar

from polter.errors import PolterError

__all__ = ["BackgroundTasks"]

ResultT = TypeVar("ResultT")


class BackgroundTasks:
    """The tasks an owner started, logged to ``logger`` when they fail."""

    def __init__(self, logger: logging.Logger) -> None:
        self._logger = logger
        self._tasks: set[asyncio.Task[Any]] = set()

    def run(self, work: Awaitable[ResultT], what: str) -> asyncio.Task[ResultT | None]:
        """Run ``work`` in the background; ``what`` names it in the log (``"answering the ask 3"``)."""

        async def run() -> ResultT | None:
            try:
                return await work
            except asyncio.CancelledError:
                raise
            except PolterError as exc:
                self._logger.warning("%s failed: %s", what, exc)
            except Exception:
                self._logger.exception("%s failed", what)
            return None

        task = asyncio.ensure_future(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(lambda _task: _close(work))  # (cancelled before it ran: never awaited)
        return task

    def cancel(self) -> None:
        """Cancel every task still running (the owner closes), but the one asking: an owner that closes from one of
        its own tasks (a session ended by a window's call) would otherwise stop its closing half-way, at its next
        await."""
        current = asyncio.current_task()
        for task in list(self._tasks):
            if task is not current:
                task.cancel()

    def __len__(self) -> int:
        return len(self._tasks)


def _close(work: Awaitable[Any]) -> None:
    if inspect.iscoroutine(work):
        work.close()
