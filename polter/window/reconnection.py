"""A session on another host reached again when the link to it drops: with backoff, until attached again, the
session is gone, or the window leaves. The session on the host never notices more than a window that left."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Final

from polter.errors import SessionError, SessionMissing

if TYPE_CHECKING:
    from polter.window.remote import RemoteSession

__all__ = ["RECONNECT_DELAYS", "Reconnection"]

RECONNECT_DELAYS: Final = (0.5, 1.0, 2.0, 4.0, 8.0, 15.0)
"""Seconds before each new try to reach a session on another host again (the last repeats, without end)."""


class Reconnection:
    """``active`` while the link is down and being made again (``RemoteSession.Reconnecting`` says each try)."""

    def __init__(self, session: RemoteSession) -> None:
        self._session = session
        self.active = False

    def start(self, reason: str) -> None:
        self.active = True
        self._session.tasks.run(self._run(reason), "reconnecting to the session")

    async def _run(self, reason: str) -> None:
        session = self._session
        attempt = 0
        while not session.leaving:
            delay = RECONNECT_DELAYS[min(attempt, len(RECONNECT_DELAYS) - 1)]
            attempt += 1
            session.messages.post(session.Reconnecting(reason, attempt, delay))
            await asyncio.sleep(delay)
            if session.leaving:
                return
            try:
                client = await session.open_client()
            except SessionMissing as exc:  # it ended meanwhile
                self.active, session.ended = False, True
                session.messages.post(session.Lost(str(exc)))
                return
            except SessionError as exc:
                reason = str(exc)
                continue
            self.active = False
            session.attached_again(client)
            return
