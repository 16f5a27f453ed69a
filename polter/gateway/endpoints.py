"""The MCP endpoints: one low-level ``Server`` per managed upstream (``/mcp/<server>``), plus Polter's
floor server (``/mcp/polter``). Tools keep their upstream names, so a CLI shows exactly what it would
show without Polter (``mcp__time__get_current_time``).

Handlers are thin: they find the calling pane (set by the ASGI auth layer on the HTTP request, and put
into the :data:`current_pane` ContextVar by :class:`PaneMiddleware` for the handler's task) and call the
:class:`~polter.gateway.core.Gateway`. Both protocol eras are served by the same servers: 2025-era
clients with sessions and a GET stream, 2026-07-28 clients with ``subscriptions/listen``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
import weakref
from collections.abc import AsyncIterator, Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecuritySettings
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from polter import __version__
from polter.errors import UpstreamError
from polter.gateway.calls import CallAbandoned, CallInFlight
from polter.gateway.channels import GetStreams
from polter.gateway.core import Gateway
from polter.gateway.features import POLICY_DENIED, refuse, trimmed_capabilities, utility_handlers
from polter.gateway.floor import call_floor_tool, floor_tools
from polter.gateway.models import McpClient
from polter.gateway.panes import PANE_SCOPE_KEY, RegisteredPane, current_pane
from polter.gateway.routing import LEVELS
from polter.gateway.sdk import CallNext, GatewayServer, HandlerResult, use_middleware
from polter.roles.engine import FLOOR_SERVER

__all__ = ["POLICY_DENIED", "Endpoint", "build_endpoint"]

logger = logging.getLogger(__name__)


class PaneMiddleware:
    """Puts the request's pane into :data:`current_pane` and remembers 2025-era sessions per pane.

    On upstream endpoints it also keeps each pane's last ``tools/list`` answer in wire form: the SDK
    dumps, re-validates and re-dumps every tool of every listing, which for 1,000 tools costs far more
    than the policy does. The answer is reused while the pane's role, phase and the upstream's
    listing are unchanged (and per protocol version, whose envelopes differ).
    """

    def __init__(self, gateway: Gateway, endpoint: str, *, cache_listings: bool = False) -> None:
        self.gateway, self.endpoint = gateway, endpoint
        self._listings: weakref.WeakKeyDictionary[RegisteredPane, tuple[tuple[Any, ...], dict[str, Any]]] | None = (
            weakref.WeakKeyDictionary() if cache_listings else None
        )

    async def __call__(self, ctx: ServerRequestContext[Any, Any], call_next: CallNext) -> HandlerResult:
        request = ctx.request
        pane: RegisteredPane | None = request.scope.get(PANE_SCOPE_KEY) if request is not None else None
        if pane is None or pane not in self.gateway.panes:
            raise MCPError(types.INVALID_REQUEST, "this pane is not registered with the gateway (any more)")
        modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
        if not modern:
            self.gateway.channels.remember_session(pane.id, self.endpoint, ctx.session)
        if ctx.params is not None and (ctx.method == "initialize" or (modern and ctx.method in _DECLARING)):
            pane.saw_client(_client_of(self.endpoint, ctx.params))
        token = current_pane.set(pane)
        try:
            if ctx.method == "tools/list" and ctx.request_id is not None and self._listings is not None:
                return await self._list_tools(pane, ctx, call_next)
            return await call_next(ctx)
        finally:
            current_pane.reset(token)

    async def _list_tools(
        self, pane: RegisteredPane, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        assert self._listings is not None
        cached = self._listings.get(pane)
        if cached is not None and cached[0] == self._key(pane, ctx):
            started = time.perf_counter()
            self.gateway.execution.audit_listing(pane, self.endpoint, len(cached[1]["tools"]), started)
            return cached[1]
        result = await call_next(ctx)
        if isinstance(result, dict) and isinstance(result.get("tools"), list):
            self._listings[pane] = (self._key(pane, ctx), result)
        return result

    def _key(self, pane: RegisteredPane, ctx: ServerRequestContext[Any, Any]) -> tuple[Any, ...]:
        upstream = self.gateway.pool.get(self.endpoint)
        generation = upstream.generation if upstream is not None and upstream.state == "running" else None
        return (self.gateway.policy.role(pane), pane.role, pane.phase, generation, ctx.protocol_version)


_DECLARING = frozenset({"server/discover", "tools/call"})
"""2026-era requests whose envelope (``_meta``) says what the client is (a 2025-era client: its ``initialize``)."""
_META = "io.modelcontextprotocol/"


def _client_of(endpoint: str, params: Any) -> McpClient:
    """A client as it declared itself (what a pane's CLI can do: elicitation...), from an ``initialize`` or a
    2026-era request's ``_meta``. The pane's own words, kept short; the SDK checks the request itself."""

    def text(value: Any) -> str:
        return value[:80] if isinstance(value, str) else ""

    meta = params.get("_meta")
    meta = meta if isinstance(meta, dict) else {}
    info = params.get("clientInfo", meta.get(f"{_META}clientInfo"))
    info = info if isinstance(info, dict) else {}
    declared = params.get("capabilities", meta.get(f"{_META}clientCapabilities"))
    names: list[str] = []
    for key, value in sorted(declared.items() if isinstance(declared, dict) else ()):
        names.append(text(key))
        if key == "elicitation" and isinstance(value, dict):
            names.extend(f"elicitation.{text(mode)}" for mode in sorted(value))
    protocol = params.get("protocolVersion", meta.get(f"{_META}protocolVersion"))
    return McpClient(
        endpoint=endpoint,
        name=text(info.get("name")),
        version=text(info.get("version")),
        protocol=text(protocol),
        capabilities=names[:16],
    )


def _pane() -> RegisteredPane:
    pane = current_pane.get()
    if pane is None:  # the middleware guarantees one; refuse rather than act for nobody
        raise MCPError(types.INVALID_REQUEST, "no pane identity on this request")
    return pane


class Endpoint:
    """One ``/mcp/<name>`` endpoint: its server and the session managers that serve it over HTTP.

    Answers are plain JSON (no SSE stream per request: a third less CPU per call); 2025-era sessions get
    ``list_changed`` and progress on their GET stream, and cancel with ``notifications/cancelled``. A
    2026-era ``subscriptions/listen`` or ``tools/call`` goes to a second manager, which still answers in
    JSON unless there is something to stream first (the listen's events, a call's progress), and which
    cancels a call whose client hangs up (how 2026-era clients cancel).
    """

    def __init__(
        self, name: str, server: Server[Any], security: TransportSecuritySettings, streams: GetStreams | None = None
    ) -> None:
        self.name = name
        self.server = server
        self.get_streams = streams
        self.manager = StreamableHTTPSessionManager(app=server, security_settings=security, json_response=True)
        self.streams = StreamableHTTPSessionManager(app=server, security_settings=security, stateless=True)

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        for key, value in scope["headers"]:
            if key == b"mcp-method":  # sent by 2026-era clients only
                if value in _STREAMING_METHODS:
                    await self.streams.handle_request(scope, receive, send)
                    return
                break
        if scope["method"] == "GET" and self.get_streams is not None:  # a 2025-era session's GET stream
            with self.get_streams.open(scope):
                await self.manager.handle_request(scope, receive, send)
            return
        await self.manager.handle_request(scope, receive, send)


_STREAMING_METHODS = frozenset({b"subscriptions/listen", b"tools/call"})
"""2026-era requests served by the manager that can stream: a listen's answer is a stream, and a tool call
may send progress, and is cancelled when its client hangs up (the plain-JSON path notices neither)."""


def _upstream_server(gateway: Gateway, name: str) -> Server[Any]:
    upstream = gateway.pool.get(name)
    assert upstream is not None

    async def list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=await gateway.execution.list_tools(_pane(), name))

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult | types.InputRequiredResult:
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            async with _calling(gateway, ctx, name) as call:
                return await gateway.execution.call_tool(
                    call.pane, name, params.name, params.arguments, progress=_progress_relay(ctx), call=call
                )

        async def start(asking: Callable[[CallInFlight], None]) -> types.CallToolResult:
            async with _calling(gateway, ctx, name) as call:
                asking(call)
                return await gateway.execution.call_tool(
                    call.pane, name, params.name, params.arguments, progress=_progress_relay(ctx), call=call
                )

        return await gateway.round_trips.call_tool(_pane(), params, start, upstream.config.timeout)

    async def list_prompts(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListPromptsResult:
        await upstream.wait_running()
        return types.ListPromptsResult(prompts=upstream.prompts if gateway.policy.server_visible(_pane(), name) else [])

    async def list_resources(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListResourcesResult:
        await upstream.wait_running()
        visible = gateway.policy.server_visible(_pane(), name)
        return types.ListResourcesResult(resources=upstream.resources if visible else [])

    async def list_templates(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListResourceTemplatesResult:
        await upstream.wait_running()
        visible = gateway.policy.server_visible(_pane(), name)
        return types.ListResourceTemplatesResult(resource_templates=upstream.resource_templates if visible else [])

    async def get_prompt(
        ctx: ServerRequestContext[Any, Any], params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        await _authorize(gateway, "prompt", name, params.name, params.arguments)
        return await _forward(gateway, ctx, name, types.GetPromptRequest(params=params), types.GetPromptResult)

    async def read_resource(
        ctx: ServerRequestContext[Any, Any], params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        await _authorize(gateway, "resource", name, str(params.uri), None)
        return await _forward(gateway, ctx, name, types.ReadResourceRequest(params=params), types.ReadResourceResult)

    async def listen(ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams) -> Any:
        pane = _pane()
        uris = (params.notifications.resource_subscriptions if params.notifications else None) or []
        async with gateway.router.listening(pane, name, uris, gateway.channels.publisher(pane.id, name)):
            return await gateway.channels.listen(pane.id, name, ctx, params)

    async def forward(ctx: ServerRequestContext[Any, Any], request: Any, result_type: type[Any]) -> Any:
        return await _forward(gateway, ctx, name, request, result_type)

    server = GatewayServer(
        name,
        instructions=lambda: upstream.instructions,  # the upstream's own, new after each restart
        trim=trimmed_capabilities(upstream),
        **utility_handlers(gateway, name, _pane, forward),
        version=__version__,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
        on_list_resources=list_resources,
        on_list_resource_templates=list_templates,
        on_read_resource=read_resource,
        on_subscriptions_listen=listen,
    )
    use_middleware(server, PaneMiddleware(gateway, name, cache_listings=True))
    return server


def _progress_relay(ctx: ServerRequestContext[Any, Any]) -> ProgressFnT | None:
    """Where the upstream's progress for this call goes, if the caller asked for progress.

    A 2026-era request's progress rides its own response stream. A 2025-era session's requests are
    answered in plain JSON, so its progress goes, with the caller's token, on the session's GET stream
    (the client matches it to the call by the token)."""
    token = (ctx.meta or {}).get("progress_token")
    if token is None or isinstance(token, bool) or not isinstance(token, str | int):
        return None
    session = ctx.session
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:  # on the request's own stream, while it is open

        async def report(progress: float, total: float | None, message: str | None) -> None:
            try:
                await session.report_progress(progress, total, message)
            except Exception:  # the request ended (its call waits for the client's answer to a question)
                logger.debug("progress for an ended request dropped", exc_info=True)

        return report

    async def relay(progress: float, total: float | None, message: str | None) -> None:
        try:
            await session.send_progress_notification(token, progress, total, message)
        except Exception:  # a client gone away must not fail the call
            logger.debug("progress for a closed session dropped", exc_info=True)

    return relay


async def _authorize(gateway: Gateway, kind: Any, server: str, name: str, arguments: dict[str, Any] | None) -> None:
    """Prompts and resources follow the server-level decision; a refusal is a JSON-RPC error."""
    pane = _pane()
    started = time.perf_counter()
    verdict = gateway.policy.decide_server(pane, server)
    auth = await gateway.execution.authorize(pane, verdict, kind=kind, server=server, name=name, arguments=arguments)
    await gateway.auditor.record(pane, kind, server, name, auth, started, arguments)
    if not auth.allowed:
        raise refuse(kind, name, server, auth)


async def _forward(
    gateway: Gateway, ctx: ServerRequestContext[Any, Any], server: str, request: Any, result_type: type[Any]
) -> Any:
    """A request the role allowed, sent on to the upstream; its failure is an error that says so."""
    upstream = gateway.pool.get(server)
    assert upstream is not None
    try:
        async with _calling(gateway, ctx, server) as call:
            return await upstream.request(request, result_type, _progress_relay(ctx), call)
    except (UpstreamError, CallAbandoned) as exc:
        raise MCPError(types.INTERNAL_ERROR, f"{exc} (broken, not forbidden)") from exc


@contextlib.asynccontextmanager
async def _calling(gateway: Gateway, ctx: ServerRequestContext[Any, Any], server: str) -> AsyncIterator[CallInFlight]:
    """A pane's request to ``server`` while the upstream serves it: registered (so that what the upstream sends
    meanwhile finds its session, and removing the pane ends it), and abandoned when a 2025-era client hangs up.
    Such a client is answered in plain JSON, so nothing else would notice; a 2026-era call's stream notices by
    itself (the SDK cancels the handler)."""
    modern = ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
    level = (ctx.meta or {}).get(types.LOG_LEVEL_META_KEY) if modern else None
    session_id = ctx.request.headers.get("mcp-session-id") if ctx.request is not None and not modern else None
    call = CallInFlight(
        _pane(), server, ctx.session, modern=modern, log_level=level if level in LEVELS else None, session_id=session_id
    )
    watcher = asyncio.ensure_future(_hang_up(ctx.request.receive, call)) if not modern and ctx.request else None
    try:
        with gateway.calls.running(call):
            yield call
    finally:
        if watcher is not None:
            watcher.cancel()


async def _hang_up(receive: Any, call: CallInFlight) -> None:
    """Abandon ``call`` when its HTTP request's client disconnects (its body was read: the next message the
    server gets for it is the disconnect)."""
    while (await receive())["type"] != "http.disconnect":
        pass
    call.abandon("the client hung up")


def _floor_server(gateway: Gateway) -> Server[Any]:
    async def list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[spec.tool for spec in floor_tools(gateway, _pane())])

    async def call_tool(
        ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        return await call_floor_tool(gateway, _pane(), params.name, params.arguments)

    async def listen(ctx: ServerRequestContext[Any, Any], params: types.SubscriptionsListenRequestParams) -> Any:
        return await gateway.channels.listen(_pane().id, FLOOR_SERVER, ctx, params)

    server = GatewayServer(
        FLOOR_SERVER,
        version=__version__,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_subscriptions_listen=listen,
        instructions="Polter's own tools. whoami tells you your role and, for every server, tool and skill, "
        "whether you may use it and why.",
    )
    use_middleware(server, PaneMiddleware(gateway, FLOOR_SERVER))
    return server


def build_endpoint(gateway: Gateway, name: str, security: TransportSecuritySettings) -> Endpoint:
    """The endpoint ``/mcp/<name>``: Polter's floor server, or the pool's upstream ``name``."""
    server = _floor_server(gateway) if name == FLOOR_SERVER else _upstream_server(gateway, name)
    return Endpoint(name, server, security, gateway.channels.get_streams)
