"""The asks of a session that wait for the human in this window: each with the future its dialog resolves. An
answer given while the link to a session on another host was down goes to the host once attached again (the ask
waits there for its timeout); an ask that came meanwhile is shown then."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from polter.errors import SessionLost
from polter.gateway.models import AskAnswer, AskInfo
from polter.wire import messages as wire
from polter.wire import methods

if TYPE_CHECKING:
    from polter.window.remote import RemoteSession

__all__ = ["PendingAsks"]


class PendingAsks:
    """``pending``: the asks by id, oldest first; each arrives as ``RemoteSession.AskRequested``."""

    def __init__(self, session: RemoteSession) -> None:
        self._session = session
        self.pending: dict[str, AskInfo] = {}
        self._futures: dict[str, asyncio.Future[AskAnswer]] = {}
        self._unsent: dict[str, AskAnswer] = {}
        """Answers that did not reach the host (the link broke): sent again once attached again."""

    def arrived(self, ask: AskInfo) -> None:
        if ask.id in self._futures:
            return
        future: asyncio.Future[AskAnswer] = asyncio.get_running_loop().create_future()
        self._futures[ask.id] = future
        self.pending[ask.id] = ask
        future.add_done_callback(lambda done: self._resolved(ask.id, done))
        self._session.messages.post(self._session.AskRequested(ask, future), first_only=True)

    def over(self, ask: AskInfo) -> bool:
        """Whether ``ask`` was one this window knew (then its screens hear that it is over)."""
        future = self._futures.pop(ask.id, None)
        self.pending.pop(ask.id, None)
        self._unsent.pop(ask.id, None)
        if future is not None and not future.done():
            future.cancel()
        return future is not None

    def answer(self, ask_id: str, answer: AskAnswer) -> None:
        """Answer an ask (the same as resolving its future)."""
        future = self._futures.get(ask_id)
        if future is not None and not future.done():
            future.set_result(answer)

    def attached_again(self, asks: list[AskInfo]) -> None:
        """The host's pending asks once attached again: those gone are over here, those new arrive, and an answer
        that did not reach the host goes again."""
        waiting = {ask.id for ask in asks}
        for ask in list(self.pending.values()):
            if ask.id not in waiting:
                self._session.take_event(wire.AskClosedEvent(ask=ask))
        unsent, self._unsent = self._unsent, {}
        for ask in asks:
            if ask.id in unsent:
                self._send(ask.id, unsent[ask.id])
            else:
                self.arrived(ask)

    def _resolved(self, ask_id: str, future: asyncio.Future[AskAnswer]) -> None:
        if not future.cancelled():
            self._send(ask_id, future.result())

    def _send(self, ask_id: str, answer: AskAnswer) -> None:
        async def send() -> None:
            try:
                await self._session.client.call(methods.AnswerParams(ask=ask_id, answer=answer))
            except SessionLost:
                if ask_id in self.pending:
                    self._unsent[ask_id] = answer

        self._session.tasks.run(send(), f"answering the ask {ask_id}")
