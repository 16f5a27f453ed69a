"""The upstream pool: every managed MCP server runs once, shared by all panes.

Each upstream has a supervisor task that connects (spawning the stdio process, or opening the HTTP
session: :mod:`~polter.gateway.transports`), caches the server's tools, prompts and resources, and waits
for the connection to break.
A broken upstream is restarted with exponential backoff; meanwhile calls to it get an error result
from the gateway (never a bypass) and the other upstreams are unaffected. The caches are refreshed
when the upstream sends its own ``list_changed`` notifications, and the gateway is told so it can
pass the change on to the panes' sessions.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

import anyio
import mcp_types as types

from polter.errors import UpstreamError, UpstreamTimeout
from polter.gateway.calls import CallAbandoned, CallInFlight
from polter.gateway.models import UpstreamInfo
from polter.gateway.transports import EndWatch, connection_failure, open_transport
from polter.servers import HttpServer, ServerConfig

if TYPE_CHECKING:
    from mcp.client.session import ClientSession
    from mcp.shared.dispatcher import ProgressFnT

__all__ = ["ListKind", "Upstream", "UpstreamListener", "UpstreamPool"]

logger = logging.getLogger(__name__)

ListKind = Literal["tools", "prompts", "resources"]
ChangeCallback = Callable[[str, ListKind], Awaitable[None]]


class UpstreamListener(Protocol):
    """Where what an upstream sends of its own accord goes (the gateway routes it to the panes' sessions)."""

    async def upstream_running(self, server: str) -> None:
        """The upstream is (again) connected: what the panes asked of it (log level, subscriptions) is re-sent."""

    async def upstream_log(self, server: str, params: types.LoggingMessageNotificationParams) -> None:
        """A ``notifications/message`` of the upstream's."""

    async def resource_updated(self, server: str, uri: str) -> None:
        """A ``notifications/resources/updated`` of the upstream's."""

    async def create_message(
        self, server: str, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        """The upstream's ``sampling/createMessage``: an answer of the pane's model, or the error it gets."""

    async def elicit(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        """The upstream's ``elicitation/create``: the human's answer, or the error it gets."""


CONNECT_TIMEOUT = 60.0
"""How long an upstream may take to start and answer ``initialize`` plus its first listings."""
READY_WAIT = 20.0
"""How long a request waits for an upstream that is still starting (not for one that crashed)."""
BACKOFF_FIRST, BACKOFF_MAX, HEALTHY_AFTER = 0.25, 30.0, 30.0
CANCEL_GRACE = 0.5
"""How long a timed-out request may take to be cancelled upstream before its caller is answered anyway."""


class _CallClock:
    """A request's timeout: ``timeout`` seconds since it was sent or since its last progress, and never more
    than ``max_timeout`` in all (the spec lets progress restart the count, and asks for a cap)."""

    __slots__ = ("_end", "_last", "max_timeout", "timeout")

    def __init__(self, timeout: float, max_timeout: float) -> None:
        self.timeout, self.max_timeout = timeout, max_timeout
        now = time.monotonic()
        self._last, self._end = now, now + max_timeout

    def restart(self) -> None:
        self._last = time.monotonic()

    def left(self) -> float:
        return min(self._last + self.timeout, self._end) - time.monotonic()

    def why(self) -> str:
        if time.monotonic() >= self._end:
            return f"did not answer within {self.max_timeout:g} s (its max_timeout), progress notwithstanding"
        return f"did not answer within {self.timeout:g} s (its timeout in the servers file)"


class Upstream:
    """One managed server: its connection, its cached listings, and its health."""

    def __init__(
        self,
        name: str,
        config: ServerConfig,
        *,
        log_dir: Path,
        on_change: ChangeCallback,
        listener: UpstreamListener | None = None,
    ) -> None:
        self.name = name
        self.config = config
        self.state: Literal["starting", "running", "restarting", "stopped"] = "starting"
        self.error: str | None = None
        self.restarts = 0
        self.tools: list[types.Tool] = []
        self.prompts: list[types.Prompt] = []
        self.resources: list[types.Resource] = []
        self.resource_templates: list[types.ResourceTemplate] = []
        self.instructions: str | None = None
        self.server_info: types.Implementation | None = None
        self.capabilities: types.ServerCapabilities | None = None
        self.generation = 0
        """Bumped whenever a listing changes, so per-pane listing caches know they are stale."""
        self._tool_index: dict[str, types.Tool] = {}
        self._session: ClientSession | None = None
        self._running = asyncio.Event()
        self._broken: asyncio.Event | None = None
        self._log_dir = log_dir
        self._on_change = on_change
        self._listener = listener
        self._refreshing: set[asyncio.Task[None]] = set()
        self._served_stale = False
        """A request went on with an incomplete listing while the upstream was down or starting."""

    # -- what handlers use ----------------------------------------------------------------------

    @property
    def transport(self) -> Literal["stdio", "http"]:
        return "http" if isinstance(self.config, HttpServer) else "stdio"

    def info(self) -> UpstreamInfo:
        return UpstreamInfo(
            name=self.name,
            transport=self.transport,
            state=self.state,
            tools=len(self.tools),
            error=self.error,
            restarts=self.restarts,
        )

    def tool(self, name: str) -> types.Tool | None:
        return self._tool_index.get(name)

    @property
    def running(self) -> bool:
        return self.state == "running"

    async def wait_running(self, timeout: float = READY_WAIT) -> bool:
        """True once the upstream runs; waits only while it is starting for the first time."""
        if self.running:
            return True
        if self.state != "starting":
            self._served_stale = True
            return False
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._running.wait(), timeout)
        if not self.running:  # (a property: the state changes while this waits)
            self._served_stale = True
        return self.running

    async def request(
        self,
        request: Any,
        result_type: type[Any],
        progress: ProgressFnT | None = None,
        call: CallInFlight | None = None,
    ) -> Any:
        """Send one request upstream; a dead or dying upstream raises :class:`UpstreamError`, one that does not
        answer in time :class:`UpstreamTimeout` (the request is cancelled there). ``progress`` receives the
        upstream's progress notifications for it, each of which restarts the timeout. ``call`` is the pane's
        call it serves: abandoning it cancels the request upstream and raises :class:`CallAbandoned`.

        The request runs in a task of its own, so that a request the upstream never answers, or whose
        cancellation cannot be written (a stuck pipe or connection), still ends here on time: the caller
        is answered at most :data:`CANCEL_GRACE` seconds after the timeout, whatever the SDK is doing."""
        if not await self.wait_running():
            raise UpstreamError(self._down_message())
        session = self._session
        assert session is not None
        clock, relay = _CallClock(self.config.timeout, self.config.max_timeout), progress

        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            clock.restart()
            if relay is not None:
                await relay(progress, total, message)

        sent = asyncio.ensure_future(self._send(session, request, result_type, on_progress))
        if call is not None:
            call.bind(sent)
        try:
            while not sent.done() and (left := clock.left()) > 0:
                await asyncio.wait({sent}, timeout=left)
        except asyncio.CancelledError:  # the caller gave up: the SDK tells the upstream (notifications/cancelled)
            sent.cancel()
            raise
        if not sent.done():
            sent.cancel()
            await asyncio.wait({sent}, timeout=CANCEL_GRACE)
            raise UpstreamTimeout(f"upstream {self.name!r} {clock.why()}; Polter cancelled the request there")
        if sent.cancelled():  # abandoned: the caller is gone
            raise CallAbandoned(call.abandoned if call is not None and call.abandoned else "the call was cancelled")
        return sent.result()

    async def _send(self, session: ClientSession, request: Any, result_type: type[Any], progress: ProgressFnT) -> Any:
        from mcp.shared.exceptions import MCPError  # lazy: it loads mcp_types' models (sdk_imports.py)

        try:
            return await session.send_request(request, result_type, progress_callback=progress)
        except MCPError as exc:
            if exc.error.code == types.CONNECTION_CLOSED:
                self._mark_broken(f"the connection closed during a request ({exc.error.message})")
                raise UpstreamError(
                    f"upstream {self.name!r} went away during the call; Polter is restarting it"
                ) from exc
            raise
        except Exception as exc:
            if not connection_failure(exc):
                raise
            self._mark_broken(f"{type(exc).__name__}: {exc}")
            raise UpstreamError(f"upstream {self.name!r} failed: {type(exc).__name__}: {exc}") from exc

    async def call_tool(
        self,
        name: str,
        arguments: dict[str, Any] | None,
        progress: ProgressFnT | None = None,
        call: CallInFlight | None = None,
    ) -> types.CallToolResult:
        return await self.request(
            types.CallToolRequest(params=types.CallToolRequestParams(name=name, arguments=arguments)),
            types.CallToolResult,
            progress,
            call,
        )

    def supports(self, feature: Literal["logging", "completions", "subscribe"]) -> bool:
        """Whether the upstream said it serves ``feature`` (``logging/setLevel``, ``completion/complete``,
        ``resources/subscribe``)."""
        caps = self.capabilities
        if caps is None:
            return False
        if feature == "subscribe":
            return caps.resources is not None and bool(caps.resources.subscribe)
        return getattr(caps, feature) is not None

    def _down_message(self) -> str:
        detail = f" ({self.error})" if self.error else ""
        if self.state == "stopped":
            return f"upstream {self.name!r} is stopped{detail}"
        return f"upstream {self.name!r} is not running{detail}; Polter restarts it automatically, try again shortly"

    def reconfigure(self, config: ServerConfig) -> None:
        """Serve from ``config`` from now on: the running connection (if any) is closed and made anew, unless
        only its timeouts changed (they apply to the next request)."""
        restart = not self.config.same_connection(config)
        self.config = config
        if restart:
            self._mark_broken("its entry in the servers file changed")  # one still connecting checks when it is up

    def _mark_broken(self, why: str) -> None:
        if self._broken is not None and not self._broken.is_set():
            self.error = why
            self._broken.set()

    # -- supervisor ------------------------------------------------------------------------------

    async def supervise(self) -> None:
        """Connect, serve, and reconnect with backoff until cancelled."""
        backoff = BACKOFF_FIRST
        while True:
            started = time.monotonic()
            try:
                await self._serve_once(_signature(self.tools) if self.restarts else None)
            except asyncio.CancelledError:
                raise
            except Exception as exc:  # one upstream's failure must never take the gateway down
                self.error = _describe(exc)
                logger.warning("upstream %s failed: %s", self.name, self.error)
            self._running.clear()
            self._session = None
            self.state = "restarting"
            self.restarts += 1
            if time.monotonic() - started > HEALTHY_AFTER:
                backoff = BACKOFF_FIRST
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, BACKOFF_MAX)

    async def _serve_once(self, previous: str | None) -> None:
        """One connection's life. Clients are told the tools changed only if they did (or if someone was
        served an incomplete listing meanwhile)."""
        # lazy: the SDK's client side loads with the first upstream, not with the gateway's modules
        from mcp.client.session import ClientSession

        config = self.config
        async with AsyncExitStack() as stack:
            read, write = await stack.enter_async_context(open_transport(self.name, config, stack, self._log_dir))
            watched = EndWatch(read)
            session = ClientSession(watched, write, message_handler=self._on_message, **self._callbacks())
            await stack.enter_async_context(session)
            with anyio.fail_after(CONNECT_TIMEOUT):
                init = await session.initialize()
                self._session = session
                self.server_info, self.capabilities, self.instructions = (
                    init.server_info,
                    init.capabilities,
                    init.instructions,
                )
                await self._refresh("tools", notify=False)
                await self._refresh("prompts", notify=False)
                await self._refresh("resources", notify=False)
            self._broken = asyncio.Event()
            if config is not self.config:
                raise UpstreamError("its entry in the servers file changed while it started")
            self.state, self.error = "running", None
            self._running.set()
            logger.info("upstream %s running (%d tools)", self.name, len(self.tools))
            signature = _signature(self.tools)
            if self._served_stale or (previous is not None and previous != signature):
                await self._on_change(self.name, "tools")
            self._served_stale, previous = False, signature
            if self._listener is not None:
                self._spawn(self._listener.upstream_running(self.name))
            ended = asyncio.ensure_future(watched.ended.wait())
            broken = asyncio.ensure_future(self._broken.wait())
            try:
                await asyncio.wait({ended, broken}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                ended.cancel()
                broken.cancel()
            self.state = "restarting"
            self._running.clear()
            if self.error is None:
                self.error = "the server exited"
            raise UpstreamError(self.error)

    async def _on_message(self, message: Any) -> None:
        kind: ListKind | None = None
        if self._listener is not None and isinstance(message, types.LoggingMessageNotification):
            self._spawn(self._listener.upstream_log(self.name, message.params))
        elif self._listener is not None and isinstance(message, types.ResourceUpdatedNotification):
            self._spawn(self._listener.resource_updated(self.name, str(message.params.uri)))
        elif isinstance(message, types.ToolListChangedNotification):
            kind = "tools"
        elif isinstance(message, types.PromptListChangedNotification):
            kind = "prompts"
        elif isinstance(message, types.ResourceListChangedNotification):
            kind = "resources"
        elif isinstance(message, Exception):
            logger.debug("upstream %s transport error: %s", self.name, message)
        if kind is not None:
            self._spawn(self._refresh(kind, notify=True))

    def _callbacks(self) -> dict[str, Any]:
        """Sampling and elicitation, passed to the listener (the gateway) that decides and routes them; an
        upstream is told the gateway can do both, as a pane's CLI may."""
        listener = self._listener
        if listener is None:
            return {}

        async def sample(context: Any, params: types.CreateMessageRequestParams) -> Any:
            return await listener.create_message(self.name, params)

        async def elicit(context: Any, params: types.ElicitRequestParams) -> Any:
            return await listener.elicit(self.name, params)

        return {"sampling_callback": sample, "elicitation_callback": elicit}

    def _spawn(self, work: Awaitable[None]) -> None:
        """Handle a message of the upstream's in a task of its own: the SDK's reading waits for nobody."""
        task = asyncio.ensure_future(work)
        self._refreshing.add(task)
        task.add_done_callback(self._refreshing.discard)

    async def _refresh(self, kind: ListKind, *, notify: bool) -> None:
        session, caps = self._session, self.capabilities
        if session is None or caps is None:
            return
        from mcp.shared.exceptions import MCPError  # lazy: it loads mcp_types' models (sdk_imports.py)

        try:
            if kind == "tools" and caps.tools is not None:
                self.tools = await _all_pages(session.list_tools, "tools")
                self._tool_index = {tool.name: tool for tool in self.tools}
            elif kind == "prompts" and caps.prompts is not None:
                self.prompts = await _all_pages(session.list_prompts, "prompts")
            elif kind == "resources" and caps.resources is not None:
                self.resources = await _all_pages(session.list_resources, "resources")
                self.resource_templates = await _all_pages(session.list_resource_templates, "resource_templates")
            else:
                return
        except MCPError as exc:
            if notify:
                logger.warning("upstream %s: refreshing %s failed: %s", self.name, kind, exc)
                return
            raise
        self.generation += 1
        if notify:
            await self._on_change(self.name, kind)


async def _all_pages(method: Callable[..., Awaitable[Any]], field: str) -> list[Any]:
    items: list[Any] = []
    cursor: str | None = None
    for _ in range(1000):
        result = await method(params=types.PaginatedRequestParams(cursor=cursor) if cursor else None)
        items.extend(getattr(result, field))
        cursor = result.next_cursor
        if not cursor:
            break
    return items


def _signature(tools: list[types.Tool]) -> str:
    return "\n".join(sorted(tool.model_dump_json(exclude_none=True) for tool in tools))


def _describe(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_describe(inner) for inner in exc.exceptions)
    if isinstance(exc, TimeoutError):
        return f"no answer within {CONNECT_TIMEOUT:g} s"
    if isinstance(exc, FileNotFoundError):
        return f"command not found: {exc.filename or exc}"
    text = str(exc)
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


class UpstreamPool:
    """All upstreams, started together and supervised independently; servers can be added, reconfigured
    and removed while the pool runs (a servers-file reload)."""

    def __init__(
        self,
        servers: dict[str, ServerConfig],
        *,
        log_dir: Path,
        on_change: ChangeCallback,
        listener: UpstreamListener | None = None,
    ) -> None:
        self._log_dir, self._on_change, self._listener = log_dir, on_change, listener
        self.upstreams: dict[str, Upstream] = {}
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._running = False
        for name, config in servers.items():
            self.add(name, config)

    def get(self, name: str) -> Upstream | None:
        return self.upstreams.get(name)

    @property
    def names(self) -> list[str]:
        return list(self.upstreams)

    def infos(self) -> list[UpstreamInfo]:
        return [upstream.info() for upstream in self.upstreams.values()]

    def add(self, name: str, config: ServerConfig) -> Upstream:
        if name in self.upstreams:
            raise ValueError(f"upstream {name!r} already exists")
        upstream = Upstream(name, config, log_dir=self._log_dir, on_change=self._on_change, listener=self._listener)
        self.upstreams[name] = upstream
        if self._running:
            self._start(upstream)
        return upstream

    async def remove(self, name: str) -> None:
        """Stop an upstream and forget it; its calls in flight end with an error."""
        upstream = self.upstreams.pop(name, None)
        task = self._tasks.pop(name, None)
        if upstream is not None:
            upstream.state = "stopped"
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    def _start(self, upstream: Upstream) -> None:
        self._tasks[upstream.name] = asyncio.create_task(upstream.supervise(), name=f"upstream:{upstream.name}")

    @contextlib.asynccontextmanager
    async def run(self) -> AsyncIterator[UpstreamPool]:
        self._running = True
        for upstream in self.upstreams.values():
            self._start(upstream)
        try:
            yield self
        finally:
            self._running = False
            tasks = list(self._tasks.values())
            self._tasks.clear()
            for upstream in self.upstreams.values():
                upstream.state = "stopped"
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
