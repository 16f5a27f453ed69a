"""Waiting for something to happen without guessing how long it takes: poll with a deadline."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

DEFAULT_TIMEOUT = 15.0
"""Generous: CI machines are slow and shared; a passing test returns as soon as the condition holds."""


async def wait_until(
    condition: Callable[[], object],
    *,
    timeout: float = DEFAULT_TIMEOUT,
    interval: float = 0.01,
    message: str | Callable[[], str] = "condition",
) -> None:
    """Return as soon as ``condition()`` is truthy; fail the test after ``timeout`` seconds.

    ``message`` (or a callable building it, e.g. to include the screen) explains the failure.
    """
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            text = message() if callable(message) else message
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for: {text}")
        await asyncio.sleep(interval)
