"""The team calls the gateway hands to the session host, which owns the panes (their screens, their input).

A team tool the role allowed becomes a :class:`~polter.gateway.models.TeamRequest` published as a ``team`` event on
``/control/events``; the host carries it out and answers on ``POST /control/team/{id}`` (admin token). No pane can
reach either: the control API is not served on the panes' socket, so the only way an agent reaches another pane
is a floor tool the engine decided. With no controller listening (no host), or when the host stops listening,
every call ends with an error saying so.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections import deque
from typing import Any

from polter.gateway.events import EventHub
from polter.gateway.models import TeamReply, TeamRequest

__all__ = ["TeamDesk", "UnknownTeamRequest"]


class UnknownTeamRequest(KeyError):
    """No team call in progress has this id (answered, timed out, or never made)."""


class TeamDesk:
    """Team calls in progress, the ``wait`` calls (for cycles) and each pane's recent sends (for the rate)."""

    def __init__(self, events: EventHub) -> None:
        self._events = events
        self._pending: dict[str, asyncio.Future[TeamReply]] = {}
        self.waiting: dict[str, str] = {}
        """Caller pane → the pane its ``wait`` waits on."""
        self._sent: dict[str, deque[float]] = {}
        events.on_last_controller_left(lambda: self.end_all("the session host stopped listening (did it restart?)"))

    async def ask_host(self, within: float, **fields: Any) -> TeamReply:
        """Hand a call to the session host and wait for its answer (an error reply when it cannot be had)."""
        if self._events.controllers == 0:
            return TeamReply(error="no session host is listening to the gateway: the team tools need Polter's session")
        request = TeamRequest(id=f"t{secrets.token_hex(6)}", **fields)
        future: asyncio.Future[TeamReply] = asyncio.get_running_loop().create_future()
        self._pending[request.id] = future
        self._events.publish("team", request)
        try:
            return await asyncio.wait_for(asyncio.shield(future), within)
        except TimeoutError:
            return TeamReply(error=f"the session host did not answer within {within:g} s")
        finally:
            self._pending.pop(request.id, None)

    def answer(self, request_id: str, reply: TeamReply) -> None:
        future = self._pending.get(request_id)
        if future is None or future.done():
            raise UnknownTeamRequest(request_id)
        future.set_result(reply)

    def end_all(self, reason: str) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_result(TeamReply(error=reason))

    def sent_recently(self, pane: str, now: float | None = None) -> int:
        """Messages ``pane`` sent in the last minute."""
        now = time.monotonic() if now is None else now
        sent = self._sent.setdefault(pane, deque())
        while sent and now - sent[0] > 60.0:
            sent.popleft()
        return len(sent)

    def record_send(self, pane: str) -> None:
        self._sent.setdefault(pane, deque()).append(time.monotonic())

    def wait_cycle(self, caller: str, target: str) -> list[str] | None:
        """The panes of the cycle a ``wait`` of ``caller`` on ``target`` would close (caller first), or None."""
        chain = [caller, target]
        while chain[-1] != caller:
            following = self.waiting.get(chain[-1])
            if following is None or following in chain[1:]:
                return None
            chain.append(following)
        return chain

    def forget_pane(self, pane: str) -> None:
        self.waiting.pop(pane, None)
        self._sent.pop(pane, None)
