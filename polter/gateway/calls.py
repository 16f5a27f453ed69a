"""The requests each upstream is serving for the panes right now.

A request a pane makes of an upstream (a tool call, a prompt, a resource read, a completion) is a
:class:`CallInFlight` while the upstream works on it. Three things use the registry:

- ending a call whose pane is gone: removing a pane abandons its calls, and a 2025-era client that hangs
  up abandons its own (the endpoint watches its HTTP request); the upstream is told
  (``notifications/cancelled``) and nothing waits for an answer nobody will read;
- routing what an upstream sends that names no call (a log line, a sampling or elicitation request):
  the MCP wire carries no link from such a message to the request that caused it, so it is taken to
  belong to the calling pane when the calls in flight on that upstream are all one pane's
  (:meth:`CallsInFlight.attributed`), and to nobody in particular otherwise;
- the calling session, so that such a message reaches the CLI that made the call.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.session import ServerSession
    from mcp_types import LoggingLevel

    from polter.gateway.panes import RegisteredPane

__all__ = ["CallAbandoned", "CallInFlight", "CallsInFlight"]

_numbers = itertools.count(1)


class CallAbandoned(Exception):
    """The caller is gone (its pane closed, its client hung up): the upstream request was cancelled."""


class CallInFlight:
    """One request of a pane's session to one upstream, while the upstream serves it."""

    __slots__ = (
        "_request",
        "abandoned",
        "log_level",
        "modern",
        "number",
        "pane",
        "questions",
        "server",
        "session",
        "session_id",
    )

    def __init__(
        self,
        pane: RegisteredPane,
        server: str,
        session: ServerSession | None,
        *,
        modern: bool,
        log_level: LoggingLevel | None = None,
        session_id: str | None = None,
    ) -> None:
        self.pane, self.server, self.session, self.modern = pane, server, session, modern
        self.session_id = session_id
        """A 2025-era session's ``Mcp-Session-Id`` (its GET stream is where requests of the server reach it)."""
        self.log_level = log_level
        """A 2026-era call's own opt-in to log lines (``_meta``): the least severe it wants, or None for none."""
        self.number = next(_numbers)
        """Increasing: the latest of a pane's calls is the one with the highest number."""
        self.abandoned: str | None = None
        """Why the call was abandoned, once it is."""
        self.questions: asyncio.Queue[Any] | None = None
        """A 2026-era tool call's: where the upstream's questions go, to be put to its client
        (:mod:`polter.gateway.round_trips`); None where they cannot be."""
        self._request: asyncio.Future[Any] | None = None

    def bind(self, request: asyncio.Future[Any]) -> None:
        """The task that sends the request upstream and waits for its answer."""
        self._request = request
        if self.abandoned is not None:
            request.cancel()

    def abandon(self, why: str) -> None:
        """Stop waiting for the upstream's answer, and cancel the request there."""
        if self.abandoned is None:
            self.abandoned = why
            if self._request is not None:
                self._request.cancel()


class CallsInFlight:
    def __init__(self) -> None:
        self._by_server: dict[str, dict[int, CallInFlight]] = {}

    @contextlib.contextmanager
    def running(self, call: CallInFlight) -> Iterator[CallInFlight]:
        calls = self._by_server.setdefault(call.server, {})
        calls[call.number] = call
        try:
            yield call
        finally:
            calls.pop(call.number, None)
            if not calls:
                self._by_server.pop(call.server, None)

    def of_server(self, server: str) -> list[CallInFlight]:
        return list(self._by_server.get(server, {}).values())

    def attributed(self, server: str) -> CallInFlight | None:
        """The call a message from ``server`` that names none belongs to: the latest call in flight there,
        when every call in flight there is the same pane's; ``None`` when there is none, or several panes'."""
        calls = self._by_server.get(server)
        if not calls:
            return None
        latest = max(calls.values(), key=lambda call: call.number)
        if any(call.pane is not latest.pane for call in calls.values()):
            return None
        return latest

    def abandon_pane(self, pane_id: str, why: str) -> int:
        """Abandon every call of a pane (it was removed); returns how many there were."""
        calls = [call for calls in self._by_server.values() for call in calls.values() if call.pane.id == pane_id]
        for call in calls:
            call.abandon(why)
        return len(calls)
