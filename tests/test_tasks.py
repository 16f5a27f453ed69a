"""BackgroundTasks: an owner closing from one of its own tasks finishes closing."""

from __future__ import annotations

import asyncio
import logging

from polter.tasks import BackgroundTasks


async def test_a_task_that_closes_its_owner_is_not_cancelled_with_the_others() -> None:
    """A session ended by a window's call runs its ending as one of its tasks, and cancels its tasks half-way
    through: the ending must go on past that (it once stopped at its next await, and the session never ended)."""
    tasks = BackgroundTasks(logging.getLogger("test"))
    other_started = asyncio.Event()
    closed = asyncio.Event()

    async def other() -> None:
        other_started.set()
        await asyncio.Event().wait()

    async def close() -> str:
        await other_started.wait()
        tasks.cancel()
        await asyncio.sleep(0)  # the next await, where a cancellation would land
        await asyncio.sleep(0.01)
        closed.set()
        return "closed"

    running = tasks.run(other(), "waiting")
    closing = tasks.run(close(), "closing")
    assert await asyncio.wait_for(closing, 5) == "closed" and closed.is_set()
    await asyncio.wait([running], timeout=5)
    assert running.cancelled()
    assert len(tasks) == 0
