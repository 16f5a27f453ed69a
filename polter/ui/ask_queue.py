"""Asks waiting for the human, in the order they came: each an ask and the future its answer resolves."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass

from polter.gateway.models import AskAnswer, AskInfo

__all__ = ["AskQueue", "PendingAsk"]


@dataclass(frozen=True)
class PendingAsk:
    ask: AskInfo
    future: asyncio.Future[AskAnswer]

    @property
    def open(self) -> bool:
        return not self.future.done()


class AskQueue:
    """Pending asks, oldest first. An ask leaves when its future is done (answered, or withdrawn
    because the gateway resolved it otherwise)."""

    def __init__(self) -> None:
        self._items: dict[str, PendingAsk] = {}

    def add(self, ask: AskInfo, future: asyncio.Future[AskAnswer]) -> PendingAsk | None:
        """Queue an ask; ``None`` when it is already queued or already over."""
        if ask.id in self._items or future.done():
            return None
        item = PendingAsk(ask, future)
        self._items[ask.id] = item
        return item

    def remove(self, ask_id: str) -> PendingAsk | None:
        return self._items.pop(ask_id, None)

    def get(self, ask_id: str) -> PendingAsk | None:
        item = self._items.get(ask_id)
        return item if item is not None and item.open else None

    def __iter__(self) -> Iterator[PendingAsk]:
        self._drop_done()
        return iter(list(self._items.values()))

    def __len__(self) -> int:
        self._drop_done()
        return len(self._items)

    def first(self) -> PendingAsk | None:
        return next(iter(self), None)

    def position(self, ask_id: str) -> tuple[int, int]:
        """``(n, of)``: where an ask stands in the queue, 1-based."""
        ids = [item.ask.id for item in self]
        return (ids.index(ask_id) + 1 if ask_id in ids else 0), len(ids)

    def count(self, pane_id: str) -> int:
        return sum(1 for item in self if item.ask.pane == pane_id)

    def _drop_done(self) -> None:
        for ask_id in [ask_id for ask_id, item in self._items.items() if not item.open]:
            del self._items[ask_id]
