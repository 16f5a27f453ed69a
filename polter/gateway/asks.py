"""Asks: a call the role says to ask about waits here until a human answers.

Each ask is a future. The gateway publishes it on ``/control/events``; a controller (the app's
modal, or ``polter asks answer``) resolves it. Every path that is not an explicit "allow" is a deny:
no controller listening, the last controller leaving, the timeout (120 s by default), the pane
being removed or switching role, or the caller giving up.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from polter.gateway.events import EventHub
from polter.gateway.models import AskAnswer, AskInfo, AskKind

__all__ = ["AskBroker", "AskOutcome", "DEFAULT_ASK_TIMEOUT", "UnknownAsk"]

DEFAULT_ASK_TIMEOUT = 120.0


class UnknownAsk(KeyError):
    """No pending ask has this id (already answered, expired, or never existed)."""


@dataclass(frozen=True)
class AskOutcome:
    allowed: bool
    answer: AskAnswer | None
    reason: str
    answered_by: str


@dataclass
class _Pending:
    info: AskInfo
    future: asyncio.Future[tuple[AskAnswer, str]]


class AskBroker:
    def __init__(self, events: EventHub, *, timeout: float = DEFAULT_ASK_TIMEOUT) -> None:
        self.timeout = timeout
        self.on_resolved: Callable[[AskInfo], None] | None = None
        """Called with every settled ask (answered, timed out, refused for want of a controller...)."""
        self._events = events
        self._pending: dict[str, _Pending] = {}
        events.on_last_controller_left(lambda: self.deny_all("the last controller stopped listening"))

    def pending(self, pane: str | None = None) -> list[AskInfo]:
        return [p.info for p in self._pending.values() if pane is None or p.info.pane == pane]

    async def ask(
        self,
        *,
        pane: str,
        pane_title: str | None,
        role: str,
        kind: AskKind,
        server: str | None,
        name: str,
        arguments: dict[str, Any],
        rule: str | None,
        reason: str,
    ) -> AskOutcome:
        """Wait for a human's answer; anything but an explicit allow is a deny."""
        now = datetime.now(UTC)
        info = AskInfo(
            id=f"a{secrets.token_hex(4)}",
            pane=pane,
            pane_title=pane_title,
            role=role,
            kind=kind,
            server=server,
            name=name,
            arguments=arguments,
            rule=rule,
            reason=reason,
            created_at=now,
            expires_at=now + timedelta(seconds=self.timeout),
        )
        if self._events.controllers == 0:
            self._settled(info.model_copy(update={"state": "denied", "answer": "deny", "answered_by": "no-controller"}))
            return AskOutcome(False, None, "the role asks a human, but no controller is listening", "no-controller")
        future: asyncio.Future[tuple[AskAnswer, str]] = asyncio.get_running_loop().create_future()
        self._pending[info.id] = _Pending(info, future)
        self._events.publish("ask", info)
        try:
            answer, by = await asyncio.wait_for(asyncio.shield(future), self.timeout)
        except TimeoutError:
            answer, by = "deny", "timeout"
        except asyncio.CancelledError:
            self._finish(info.id, "deny", "cancelled")
            raise
        self._finish(info.id, answer, by)
        if answer == "deny":
            why = {
                "timeout": f"nobody answered within {self.timeout:g} s",
                "controller": "the human denied it",
            }.get(by, by)
            return AskOutcome(False, answer, f"asked a human: {why}", by)
        scope = "for this pane" if answer == "allow_pane" else "once"
        return AskOutcome(True, answer, f"asked a human: allowed {scope}", by)

    def answer(self, ask_id: str, answer: AskAnswer, *, by: str = "controller") -> AskInfo:
        pending = self._pending.get(ask_id)
        if pending is None or pending.future.done():
            raise UnknownAsk(ask_id)
        pending.future.set_result((answer, by))
        return pending.info

    def deny_pane(self, pane: str, why: str) -> None:
        for pending in list(self._pending.values()):
            if pending.info.pane == pane and not pending.future.done():
                pending.future.set_result(("deny", why))

    def deny_all(self, why: str) -> None:
        for pending in list(self._pending.values()):
            if not pending.future.done():
                pending.future.set_result(("deny", why))

    def _finish(self, ask_id: str, answer: AskAnswer, by: str) -> None:
        pending = self._pending.pop(ask_id, None)
        if pending is None:
            return
        if not pending.future.done():
            pending.future.set_result((answer, by))
        info = pending.info.model_copy(
            update={"state": "denied" if answer == "deny" else "allowed", "answer": answer, "answered_by": by}
        )
        self._events.publish("ask_resolved", info)
        self._settled(info)

    def _settled(self, info: AskInfo) -> None:
        if self.on_resolved is not None:
            self.on_resolved(info)
