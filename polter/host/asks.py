"""The session's pending asks: calls the gateway holds until the human answers them (or their timeout says no).

An ask arrives from the gateway's event stream (or its list, after a restart) and waits here on a future until
the human's answer (:meth:`Asks.answer`, from whichever window it came) resolves it; the answer goes back to the
gateway.
An ask the gateway closed (answered elsewhere, timed out, the pane switched role) is over here too, and one
whose gateway died is over with it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from polter.errors import ControlError
from polter.gateway.client import GatewayClient
from polter.gateway.models import AskAnswer, AskInfo
from polter.tasks import BackgroundTasks

__all__ = ["Asks", "unless_over"]


async def unless_over(answer: Awaitable[object]) -> None:
    """Send an answer to the gateway; one it finds already over (404: timed out, answered elsewhere, its caller
    gone) is no error: the first answer counts."""
    try:
        await answer
    except ControlError as exc:
        if exc.status != 404:
            raise


class Asks:
    """The pending asks. ``on_asked(ask)`` tells of a new one (answer it with :meth:`answer`); ``on_over(ask)``
    tells that one is over; ``client()`` is the gateway's client of the moment."""

    def __init__(
        self,
        *,
        client: Callable[[], GatewayClient],
        tasks: BackgroundTasks,
        on_asked: Callable[[AskInfo], None],
        on_over: Callable[[AskInfo], None],
    ) -> None:
        self._client = client
        self._tasks = tasks
        self._on_asked = on_asked
        self._on_over = on_over
        self.pending: dict[str, AskInfo] = {}
        """Pending asks by id, oldest first."""
        self._futures: dict[str, asyncio.Future[AskAnswer]] = {}

    def of_pane(self, pane_id: str) -> list[str]:
        """The pane's pending asks, oldest first, one line each."""
        return [
            f"asks to use {ask.server}/{ask.name}" if ask.server else f"asks to use {ask.kind} {ask.name}"
            for ask in self.pending.values()
            if ask.pane == pane_id
        ]

    def arrived(self, ask: AskInfo) -> None:
        if ask.id in self._futures:
            return
        future: asyncio.Future[AskAnswer] = asyncio.get_running_loop().create_future()
        self._futures[ask.id] = future
        self.pending[ask.id] = ask
        future.add_done_callback(lambda done: self._resolved(ask, done))
        self._on_asked(ask)

    def answer(self, ask_id: str, answer: AskAnswer) -> None:
        """Answer an ask (the same as resolving its future)."""
        future = self._futures.get(ask_id)
        if future is not None and not future.done():
            future.set_result(answer)

    def over(self, ask: AskInfo | None, ask_id: str) -> None:
        """Ask ``ask_id`` is over (``ask``: as the gateway says it ended, if it says)."""
        future = self._futures.pop(ask_id, None)
        known = self.pending.pop(ask_id, None)
        if future is not None and not future.done():
            future.cancel()
        ask = ask or known
        if ask is not None and future is not None:
            self._on_over(ask)

    def gateway_gone(self) -> None:
        """The gateway that held the asks died: they died with it."""
        for ask_id in list(self._futures):
            self.over(self.pending.get(ask_id), ask_id)

    def _resolved(self, ask: AskInfo, future: asyncio.Future[AskAnswer]) -> None:
        if not future.cancelled():
            self._tasks.run(self._send(ask, future.result()), f"answering the ask {ask.id}")

    async def _send(self, ask: AskInfo, answer: AskAnswer) -> None:
        await unless_over(self._client().answer(ask.id, answer))
