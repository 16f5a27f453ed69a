"""What upstreams send of their own accord, routed to the panes' sessions under their roles: log lines
(``notifications/message``) and resource updates (``notifications/resources/updated``), and what the panes
asked of the upstreams for that (``logging/setLevel``, ``resources/subscribe``).

Every upstream runs once for all panes, so the gateway keeps the panes' wishes and sends the upstream
their union:

- **Log levels.** Each 2025-era session sets its own level. The upstream gets the lowest level any session
  of that server asked for (one upstream session serves every pane, so it cannot hold one level per
  pane), and each line is then filtered again per session: a line goes to the session whose call caused
  it (see :meth:`~polter.gateway.calls.CallsInFlight.attributed`) if that session wants its level, else
  to every session of that server that asked for that level. 2026-07-28 clients opt in per request
  (``_meta``): a line caused by such a call rides that call's own stream, at the levels it asked for.
- **Subscriptions.** A session subscribes to a URI once the role lets it read the server (as a read is
  decided); the upstream is subscribed while anyone is, and each update goes to the subscribers whose
  role may still read the server. A role switch drops what the new role may not read. 2026-07-28 clients
  subscribe with their ``subscriptions/listen`` stream's ``resourceSubscriptions``.

Nothing here reaches a pane whose role denies the server, and nothing names another pane.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
from collections.abc import AsyncIterator, Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any

import mcp_types as types

if TYPE_CHECKING:
    from mcp.server.session import ServerSession

    from polter.gateway.core import Gateway
    from polter.gateway.panes import RegisteredPane

__all__ = ["LEVELS", "Router"]

logger = logging.getLogger(__name__)

_keys = itertools.count(1)

LEVELS: tuple[types.LoggingLevel, ...] = (
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
)
"""Log levels, least severe first: the SDK's ``LoggingLevel`` (a test holds them equal), written out so that
routing loads without ``mcp_types`` (``sdk_imports.py``)."""
_RANK = {level: rank for rank, level in enumerate(LEVELS)}


class _Session:
    """A 2025-era session of one pane on one endpoint, as routing knows it."""

    __slots__ = ("endpoint", "key", "level", "pane", "session", "uris")

    def __init__(self, key: int, pane: RegisteredPane, endpoint: str, session: ServerSession) -> None:
        self.key, self.pane, self.endpoint, self.session = key, pane, endpoint, session
        self.level: types.LoggingLevel | None = None
        self.uris: set[str] = set()

    async def resource_updated(self, uri: str) -> None:
        try:
            await self.session.send_resource_updated(uri)
        except Exception:  # best effort: a session gone away must not fail the others
            logger.debug("resource update for a closed session dropped", exc_info=True)


class _Listen:
    """A 2026-era ``subscriptions/listen`` stream's resource subscriptions: updates go on the pane's bus."""

    __slots__ = ("endpoint", "key", "pane", "publish", "uris")

    def __init__(
        self, key: int, pane: RegisteredPane, endpoint: str, publish: Callable[[Any], Any], uris: set[str]
    ) -> None:
        self.key, self.pane, self.endpoint, self.publish, self.uris = key, pane, endpoint, publish, uris

    async def resource_updated(self, uri: str) -> None:
        # lazy: the SDK's server side loads with the gateway's first MCP request (docs/architecture.md)
        from mcp.server.subscriptions import ResourceUpdated

        await self.publish(ResourceUpdated(uri=uri))


_Subscriber = _Session | _Listen


class Router:
    """The gateway's :class:`~polter.gateway.upstreams.UpstreamListener`, and the panes' wishes it serves."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self._sessions: dict[int, _Session] = {}
        self._listens: dict[int, _Listen] = {}
        self._levels_sent: dict[str, types.LoggingLevel] = {}
        self._tasks: set[asyncio.Task[None]] = set()

    def _later(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` in a task of its own: cleanup that happens while its caller is being cancelled (a listen
        stream its client closed, a session ending) would otherwise be cancelled with it."""
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # -- the panes' sessions --------------------------------------------------------------------------

    def session(self, pane: RegisteredPane, endpoint: str, session: ServerSession) -> _Session | None:
        """Routing's record of a 2025-era session, made on first use and forgotten when it ends."""
        from polter.gateway.sdk import session_connection  # lazy: as above (a session means it is loaded)

        connection = session_connection(session)
        if connection is None:
            return None
        key = id(connection)
        known = self._sessions.get(key)
        if known is not None:
            return known
        record = self._sessions[key] = _Session(key, pane, endpoint, session)

        async def forget() -> None:
            gone = self._sessions.pop(key, None)
            if gone is not None and gone.uris:
                self._later(self._unsubscribed(gone.endpoint, gone.uris))

        connection.exit_stack.push_async_callback(forget)
        return record

    def forget_pane(self, pane_id: str) -> None:
        for key in [key for key, record in self._sessions.items() if record.pane.id == pane_id]:
            del self._sessions[key]
        for key in [key for key, listen in self._listens.items() if listen.pane.id == pane_id]:
            del self._listens[key]

    # -- logging --------------------------------------------------------------------------------------

    async def set_level(
        self, pane: RegisteredPane, endpoint: str, session: ServerSession, level: types.LoggingLevel
    ) -> None:
        record = self.session(pane, endpoint, session)
        if record is not None:
            record.level = level
        await self._send_level(endpoint)

    async def _send_level(self, endpoint: str) -> None:
        """Tell the upstream the lowest level any session of it wants, when that changed."""
        wanted = [record.level for record in self._sessions.values() if record.endpoint == endpoint and record.level]
        upstream = self.gateway.pool.get(endpoint)
        if not wanted or upstream is None or not upstream.supports("logging"):
            return
        level = min(wanted, key=_RANK.__getitem__)
        if self._levels_sent.get(endpoint) == level:
            return
        self._levels_sent[endpoint] = level
        try:
            await upstream.request(
                types.SetLevelRequest(params=types.SetLevelRequestParams(level=level)), types.EmptyResult
            )
        except Exception:
            self._levels_sent.pop(endpoint, None)
            logger.warning("upstream %s: setting its log level to %s failed", endpoint, level, exc_info=True)

    async def upstream_log(self, server: str, params: types.LoggingMessageNotificationParams) -> None:
        """A line caused by a pane's call goes to that call's session alone (if it wants that level): what a call
        of one pane makes the upstream say is never another pane's to hear. A line that names no call goes to
        every session of the server that asked for its level."""
        call = self.gateway.calls.attributed(server)
        if call is not None:
            if call.session is not None and self._readable(call.pane, server):
                if call.modern:  # on the call's own stream, at the levels its _meta asked for
                    if call.log_level is not None and _RANK[params.level] >= _RANK[call.log_level]:
                        await _send_log(call.session, params, request_scoped=True)
                    return
                record = self.session(call.pane, server, call.session)
                if record is None or record.level is None or _RANK[params.level] >= _RANK[record.level]:
                    await _send_log(call.session, params, request_scoped=False)
            return
        for record in list(self._sessions.values()):
            if (
                record.endpoint == server
                and record.level is not None
                and _RANK[params.level] >= _RANK[record.level]
                and self._readable(record.pane, server)
            ):
                await _send_log(record.session, params, request_scoped=False)

    # -- subscriptions --------------------------------------------------------------------------------

    async def subscribe(self, pane: RegisteredPane, endpoint: str, session: ServerSession, uri: str) -> None:
        """Subscribe the session (the role allowed reading the server); the upstream, when it is the first."""
        record = self.session(pane, endpoint, session)
        first = not self._subscribers(endpoint, uri)
        if first:
            await self._upstream_subscription(endpoint, uri, subscribe=True, strict=True)
        if record is not None:
            record.uris.add(uri)

    async def unsubscribe(self, pane: RegisteredPane, endpoint: str, session: ServerSession, uri: str) -> None:
        record = self.session(pane, endpoint, session)
        if record is not None and uri in record.uris:
            record.uris.discard(uri)
            await self._unsubscribed(endpoint, {uri})

    @contextlib.asynccontextmanager
    async def listening(
        self, pane: RegisteredPane, endpoint: str, uris: Sequence[str], publish: Callable[[Any], Any]
    ) -> AsyncIterator[None]:
        """A 2026-era listen stream's resource subscriptions, while it is open (only if the role may read)."""
        wanted = set(uris) if uris and self._readable(pane, endpoint) else set()
        listen = _Listen(next(_keys), pane, endpoint, publish, set())
        self._listens[listen.key] = listen
        try:
            for uri in sorted(wanted):
                if not self._subscribers(endpoint, uri):
                    await self._upstream_subscription(endpoint, uri, subscribe=True, strict=False)
                listen.uris.add(uri)
            yield
        finally:
            self._listens.pop(listen.key, None)
            self._later(self._unsubscribed(endpoint, listen.uris))

    async def resource_updated(self, server: str, uri: str) -> None:
        for subscriber in self._subscribers(server, uri):
            if self._readable(subscriber.pane, server):
                await subscriber.resource_updated(uri)

    async def drop_unreadable(self, pane: RegisteredPane) -> None:
        """After a role switch: end the pane's subscriptions to servers its new role may not read."""
        subscribers: list[_Subscriber] = [*self._sessions.values(), *self._listens.values()]
        for subscriber in subscribers:
            if subscriber.pane is pane and subscriber.uris and not self._readable(pane, subscriber.endpoint):
                dropped, subscriber.uris = subscriber.uris, set()
                await self._unsubscribed(subscriber.endpoint, dropped)

    def _subscribers(self, endpoint: str, uri: str) -> list[_Subscriber]:
        subscribers: list[_Subscriber] = [*self._sessions.values(), *self._listens.values()]
        return [each for each in subscribers if each.endpoint == endpoint and uri in each.uris]

    async def _unsubscribed(self, endpoint: str, uris: set[str]) -> None:
        """Unsubscribe the upstream from those of ``uris`` nobody subscribes to any more."""
        for uri in sorted(uris):
            if not self._subscribers(endpoint, uri):
                await self._upstream_subscription(endpoint, uri, subscribe=False, strict=False)

    async def _upstream_subscription(self, endpoint: str, uri: str, *, subscribe: bool, strict: bool) -> None:
        """(Un)subscribe the upstream; ``strict``: let its refusal reach the client that asked."""
        upstream = self.gateway.pool.get(endpoint)
        if upstream is None or (not subscribe and not upstream.running):  # a stopped upstream holds nothing
            return
        params = types.SubscribeRequestParams(uri=uri)
        request: Any = (
            types.SubscribeRequest(params=params)
            if subscribe
            else types.UnsubscribeRequest(params=types.UnsubscribeRequestParams(uri=uri))
        )
        try:
            await upstream.request(request, types.EmptyResult)
        except Exception:
            if strict:
                raise
            logger.warning("upstream %s: %s %s failed", endpoint, request.method, uri, exc_info=True)

    async def upstream_running(self, server: str) -> None:
        """A restarted upstream forgot everything: send it the panes' level and subscriptions again."""
        self._levels_sent.pop(server, None)
        await self._send_level(server)
        subscribers: list[_Subscriber] = [*self._sessions.values(), *self._listens.values()]
        for uri in sorted({uri for each in subscribers if each.endpoint == server for uri in each.uris}):
            await self._upstream_subscription(server, uri, subscribe=True, strict=False)

    async def create_message(
        self, server: str, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        return await self.gateway.server_requests.create_message(server, params)

    async def elicit(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        return await self.gateway.server_requests.elicit(server, params)

    def _readable(self, pane: RegisteredPane, server: str) -> bool:
        """Whether the pane's role lets it read the server (not denied; a role that is not loaded reads
        nothing: these are the server's data, not a listing)."""
        return pane in self.gateway.panes and self.gateway.policy.decide_server(pane, server).decision != "deny"


async def _send_log(
    session: ServerSession, params: types.LoggingMessageNotificationParams, *, request_scoped: bool
) -> None:
    """Send a log line on the session's GET stream (2025-era), or on the call's own stream (2026-era)."""
    try:
        await session.send_notification(
            types.LoggingMessageNotification(params=params), related_request_id=0 if request_scoped else None
        )
    except Exception:  # best effort: a client gone away must not fail the upstream's other lines
        logger.debug("a log line for a closed session dropped", exc_info=True)
