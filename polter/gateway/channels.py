"""Where the gateway can push ``list_changed`` to one pane, and only that pane.

Two protocol eras, two channels:

- 2025-era clients hold a session (``Mcp-Session-Id``) with a standalone GET stream. The endpoint
  middleware remembers each session's connection under the pane that opened it, and forgets it when
  the connection closes (its ``exit_stack``).
- 2026-07-28 clients open ``subscriptions/listen`` streams. Each (pane, endpoint) gets its own
  subscription bus, so publishing a change reaches that pane's streams and nobody else's.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from mcp.server.session import ServerSession

__all__ = ["ChangeKind", "GetStreams", "PaneChannels"]

logger = logging.getLogger(__name__)

ChangeKind = Literal["tools", "prompts", "resources"]
_Key = tuple[str, str]  # (pane id, endpoint)


class _Listeners:
    """A pane's 2026-era listen streams of one endpoint, made at the first of them (an MCP request)."""

    def __init__(self) -> None:
        # lazy: the SDK's server side loads with the gateway's first MCP request (docs/architecture.md)
        from mcp.server.subscriptions import (
            InMemorySubscriptionBus,
            ListenHandler,
            PromptsListChanged,
            ResourcesListChanged,
            ToolsListChanged,
        )

        self.bus = InMemorySubscriptionBus()
        self.handler = ListenHandler(self.bus, max_subscriptions=64)
        self.open = 0
        self.changed: dict[ChangeKind, type[ToolsListChanged | PromptsListChanged | ResourcesListChanged]] = {
            "tools": ToolsListChanged,
            "prompts": PromptsListChanged,
            "resources": ResourcesListChanged,
        }


class GetStreams:
    """Which 2025-era sessions hold a GET stream open now (counted as the endpoint serves each GET): only those
    can be sent a request of the server's (an elicitation, a sampling request) or a notification."""

    def __init__(self) -> None:
        self._open: dict[str, int] = {}

    @contextlib.contextmanager
    def open(self, scope: Any) -> Iterator[None]:
        session_id = next(
            (value.decode("latin-1") for key, value in scope["headers"] if key == b"mcp-session-id"), None
        )
        if session_id is None:
            yield
            return
        self._open[session_id] = self._open.get(session_id, 0) + 1
        try:
            yield
        finally:
            left = self._open.pop(session_id) - 1
            if left:
                self._open[session_id] = left

    def __contains__(self, session_id: object) -> bool:
        return session_id in self._open


class PaneChannels:
    def __init__(self) -> None:
        self._sessions: dict[_Key, dict[int, ServerSession]] = {}
        self._listeners: dict[_Key, _Listeners] = {}
        self.get_streams = GetStreams()

    def remember_session(self, pane_id: str, endpoint: str, session: ServerSession) -> None:
        """Record a 2025-era session's connection (called on each of its requests; cheap when known)."""
        from polter.gateway.sdk import session_connection  # lazy: as in _Listeners (a session means it is loaded)

        connection = session_connection(session)
        if connection is None:
            return
        sessions = self._sessions.setdefault((pane_id, endpoint), {})
        key = id(connection)
        if key in sessions:
            return
        sessions[key] = session

        async def forget() -> None:
            known = self._sessions.get((pane_id, endpoint))
            if known is not None:
                known.pop(key, None)
                if not known:
                    self._sessions.pop((pane_id, endpoint), None)

        connection.exit_stack.push_async_callback(forget)

    async def listen(self, pane_id: str, endpoint: str, ctx: Any, params: Any) -> Any:
        """Serve one 2026-era ``subscriptions/listen`` stream for this pane and endpoint."""
        listeners = self._listeners.setdefault((pane_id, endpoint), _Listeners())
        listeners.open += 1
        try:
            return await listeners.handler(ctx, params)
        finally:
            listeners.open -= 1

    def publisher(self, pane_id: str, endpoint: str) -> Any:
        """How to put an event on the pane's 2026-era listen streams of ``endpoint`` (each stream takes what its
        filter asked for)."""
        return self._listeners.setdefault((pane_id, endpoint), _Listeners()).bus.publish

    def count(self, pane_id: str) -> int:
        sessions = sum(len(found) for (pane, _), found in self._sessions.items() if pane == pane_id)
        streams = sum(found.open for (pane, _), found in self._listeners.items() if pane == pane_id)
        return sessions + streams

    async def notify(
        self, *, pane_id: str | None = None, endpoint: str | None = None, kinds: Iterable[ChangeKind] = ("tools",)
    ) -> int:
        """Send ``list_changed`` to the matching panes' sessions and streams; returns how many got it."""
        kinds = tuple(kinds)
        reached = 0
        for (pane, name), sessions in list(self._sessions.items()):
            if (pane_id is None or pane == pane_id) and (endpoint is None or name == endpoint):
                for session in list(sessions.values()):
                    for kind in kinds:
                        await _send_legacy(session, kind)
                    reached += 1
        for (pane, name), listeners in list(self._listeners.items()):
            if (pane_id is None or pane == pane_id) and (endpoint is None or name == endpoint):
                for kind in kinds:
                    await listeners.bus.publish(listeners.changed[kind]())
                reached += listeners.open
        return reached

    def forget_pane(self, pane_id: str) -> None:
        for key in [key for key in self._sessions if key[0] == pane_id]:
            del self._sessions[key]
        for key in [key for key in self._listeners if key[0] == pane_id]:
            self._listeners.pop(key).handler.close()


async def _send_legacy(session: ServerSession, kind: ChangeKind) -> None:
    try:
        if kind == "tools":
            await session.send_tool_list_changed()
        elif kind == "prompts":
            await session.send_prompt_list_changed()
        else:
            await session.send_resource_list_changed()
    except Exception:  # best effort: a dead stream must not fail a role switch
        logger.debug("list_changed to a closed session dropped", exc_info=True)
