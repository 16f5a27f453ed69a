"""Fan-out of gateway events to controllers listening on ``/control/events`` (SSE).

A listener is a *controller*: while at least one is connected, asks wait for a human; with none,
an ask is denied at once (nobody could answer it). Publishing never blocks the gateway: a listener
that stops reading is dropped when its queue fills.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any

from pydantic import BaseModel

from polter.gateway.models import GatewayEvent, GatewayEventType

__all__ = ["EventHub"]

logger = logging.getLogger(__name__)

_QUEUE_LIMIT = 1000


class EventHub:
    def __init__(self) -> None:
        self._queues: set[asyncio.Queue[GatewayEvent | None]] = set()
        self._on_last_leave: list[Callable[[], None]] = []

    @property
    def controllers(self) -> int:
        return len(self._queues)

    def on_last_controller_left(self, callback: Callable[[], None]) -> None:
        self._on_last_leave.append(callback)

    def publish(self, type_: GatewayEventType, data: BaseModel | dict[str, Any]) -> None:
        payload = data.model_dump(mode="json") if isinstance(data, BaseModel) else data
        event = GatewayEvent(type=type_, data=payload)
        for queue in list(self._queues):
            try:
                queue.put_nowait(event)
            except asyncio.QueueFull:
                logger.warning("a controller stopped reading /control/events; dropping it")
                self._queues.discard(queue)
                with contextlib.suppress(asyncio.QueueFull):
                    queue.get_nowait()
                    queue.put_nowait(None)
                self._after_leave()

    @contextlib.asynccontextmanager
    async def listen(self) -> AsyncIterator[asyncio.Queue[GatewayEvent | None]]:
        """Register a controller for the duration of the block. ``None`` in the queue ends it."""
        queue: asyncio.Queue[GatewayEvent | None] = asyncio.Queue(_QUEUE_LIMIT)
        self._queues.add(queue)
        try:
            yield queue
        finally:
            if queue in self._queues:
                self._queues.discard(queue)
                self._after_leave()

    def close(self) -> None:
        """End every listener's stream (gateway shutdown)."""
        for queue in list(self._queues):
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(None)

    def _after_leave(self) -> None:
        if not self._queues:
            for callback in self._on_last_leave:
                callback()
