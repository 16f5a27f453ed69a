"""Yes/no questions the session host puts to the human through its windows.

The host cannot ask anyone itself: it runs detached, with no terminal. A question goes to every attached
window (:class:`~polter.wire.messages.Question`), and to each window that attaches while it waits;
the first answer (the ``answer_question`` call) decides it, and every window is told it is over
(:class:`~polter.wire.messages.QuestionClosed`). Nobody to ask is an answer too: when no window is
attached and none attaches within a short grace (a session that is starting: its window attaches a
moment after the host), or nobody answers in time, the question is decided "nobody answered" (None),
and whatever asked does not act.
"""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable
from typing import Final

from pydantic import BaseModel

from polter.wire import messages as wire

__all__ = ["ATTACH_GRACE", "QUESTION_TIMEOUT", "Questions"]

QUESTION_TIMEOUT: Final = 120.0
"""Seconds a question waits for an answer."""
ATTACH_GRACE: Final = 15.0
"""Seconds a question asked while no window is attached waits for one to attach."""


class Questions:
    """The pending questions of a session. ``broadcast`` sends a message to every attached window;
    ``attached()`` says whether one is attached now. The host calls :meth:`window_attached` for each
    window that attaches (after its welcome) so that it shows the questions that wait."""

    def __init__(
        self,
        broadcast: Callable[[BaseModel], None],
        attached: Callable[[], bool],
        *,
        timeout: float = QUESTION_TIMEOUT,
        grace: float = ATTACH_GRACE,
    ) -> None:
        self._broadcast = broadcast
        self._attached = attached
        self.timeout = timeout
        self.grace = grace
        self._pending: dict[str, tuple[wire.Question, asyncio.Future[bool | None]]] = {}
        self._arrival = asyncio.Event()

    async def ask(self, title: str, text: str, detail: str = "", *, yes: str = "Yes", no: str = "No") -> bool | None:
        """Ask every window; the first answer, or None when nobody answered (no window, or not in time)."""
        loop = asyncio.get_running_loop()
        question = wire.Question(id=secrets.token_hex(6), title=title, text=text, detail=detail, yes=yes, no=no)
        future: asyncio.Future[bool | None] = loop.create_future()
        self._pending[question.id] = (question, future)
        deadline = loop.time() + self.timeout
        self._broadcast(question)
        try:
            if not self._attached() and not await self._window_arrives(min(self.grace, self.timeout)):
                return None
            with contextlib.suppress(TimeoutError):
                return await asyncio.wait_for(asyncio.shield(future), max(0.0, deadline - loop.time()))
            return None
        finally:
            self._pending.pop(question.id, None)
            answer = future.result() if future.done() and not future.cancelled() else None
            future.cancel()
            self._broadcast(wire.QuestionClosed(id=question.id, answer=answer))

    async def _window_arrives(self, timeout: float) -> bool:
        arrival = self._arrival
        try:
            await asyncio.wait_for(arrival.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def window_attached(self) -> None:
        """A window attached: a question waiting for one is asked now (the window's state carries it)."""
        arrival, self._arrival = self._arrival, asyncio.Event()
        arrival.set()

    def pending(self) -> list[wire.Question]:
        return [question for question, _future in self._pending.values()]

    def close_all(self) -> None:
        """The session ends: every waiting question is decided "nobody answered"."""
        pending, self._pending = self._pending, {}
        for _question, future in pending.values():
            if not future.done():
                future.set_result(None)
        self._arrival.set()  # (an ask waiting for a window to attach wakes, and finds its answer)

    def answer(self, question_id: str, answer: bool) -> bool:
        """Decide a question; False when it is over already (answered elsewhere, timed out)."""
        entry = self._pending.get(question_id)
        if entry is None or entry[1].done():
            return False
        entry[1].set_result(answer)
        return True
