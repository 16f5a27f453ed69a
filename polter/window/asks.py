"""Asks waiting for the human in this window, in the order they came (each an ask and the future its answer
resolves), shown one at a time in the ask modal; an ask put off (escape) waits until the human comes back for it."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from polter.gateway.models import AskAnswer, AskInfo
from polter.window.ask_screen import AskScreen
from polter.window.pane import PaneWidget

if TYPE_CHECKING:
    from polter.window.session_screen import SessionScreen

__all__ = ["AskDesk", "AskQueue", "PendingAsk"]


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


class AskDesk:
    """``screen``'s asks: the queue, the modal that shows the oldest one not put off, and the counts in the panes'
    headers."""

    def __init__(self, screen: SessionScreen) -> None:
        self.screen = screen
        self.queue = AskQueue()
        self.showing: AskScreen | None = None
        self._later: set[str] = set()
        """Asks the human put off (escape): not shown again by themselves."""

    def requested(self, ask: AskInfo, future: asyncio.Future[AskAnswer]) -> None:
        """Queue ``ask`` and show it (its modal names the pane; the header counts it), or its place behind the one
        showing."""
        item = self.queue.add(ask, future)
        if item is None:
            return
        self._count(ask.pane)
        if self.showing is not None:
            self.showing.show_position(self.queue.position(self.showing.ask.id))
        self._show_next()

    def closed(self, ask: AskInfo) -> None:
        """The ask is over (answered here or in another window, timed out, the pane switched role...)."""
        screen = self.screen
        item = self.queue.remove(ask.id)
        self._later.discard(ask.id)
        self._count(ask.pane)
        showing = self.showing
        if showing is not None and showing.ask.id == ask.id:
            self.showing = None
            showing.withdraw(None)
            why = ask.answered_by or "elsewhere"
            screen.notify(f"The ask for {ask_call(ask)} is over ({ask.state}: {why}).", severity="warning")
        elif item is not None and ask.answered_by == "timeout":
            screen.notify(f"Nobody answered {ask_call(ask)} in time: denied.", severity="warning")
        self._show_next()

    def show_all(self) -> None:
        """Show the pending asks again, oldest first (also the ones put off with escape)."""
        if not len(self.queue):
            self.screen.notify("No asks are waiting.")
            return
        self._later.clear()
        self._show_next()

    def arrived_at(self, pane: PaneWidget) -> bool:
        """The human went to ``pane``, which waits for them: its asks that were put off show again (True if any)."""
        put_off = {item.ask.id for item in self.queue if item.ask.pane == pane.remote.id} & self._later
        if not put_off:
            return False
        self._later -= put_off
        self._show_next()
        return True

    def _count(self, pane_id: str) -> None:
        pane = self.screen.grid.pane_of(pane_id)
        if pane is not None:
            pane.pending_asks = self.queue.count(pane_id)
            pane.show_state()

    def _show_next(self) -> None:
        if self.showing is not None:
            return
        item = next((item for item in self.queue if item.ask.id not in self._later), None)
        if item is None:
            return
        pane = self.screen.grid.pane_of(item.ask.pane)
        label = f"Pane {pane.number} {pane.agent.title}" if pane is not None and pane.agent else None
        region = pane.region if pane is not None and pane.display else None
        showing = AskScreen(item.ask, pane_label=label, region=region, position=self.queue.position(item.ask.id))
        self.showing = showing
        self.screen.app.push_screen(showing, lambda answer: self._answered(item, showing, answer))

    def _answered(self, item: PendingAsk, screen: AskScreen, answer: AskAnswer | None) -> None:
        """``screen`` closed: answered, put off, or withdrawn (then the next ask may be showing already)."""
        if self.showing is screen:
            self.showing = None
        if answer is None:
            if not screen.withdrawn:  # put off by the human (a withdrawn ask is over)
                self._later.add(item.ask.id)
        elif item.open:
            item.future.set_result(answer)
        self._show_next()


def ask_call(ask: AskInfo) -> str:
    """``server/tool``, or the skill or built-in tool's name: what an ask is for, in notifications."""
    return f"{ask.server}/{ask.name}" if ask.server else ask.name
