"""An upstream endpoint's handlers for the protocol's utilities: ``logging/setLevel``, ``completion/complete``
and ``resources/subscribe``/``unsubscribe`` (the routing of what the upstream sends back is
:mod:`polter.gateway.routing`), and the capabilities the endpoint advertises: what its upstream serves.

- ``logging/setLevel`` is the session's own wish (no role decides it: it only narrows what the session hears);
- ``completion/complete`` completes an argument of a prompt or resource template of a server the role lets
  the pane see; for a server the role denies it is refused as a call is (a JSON-RPC error with Polter's rule
  and reason), and it never asks the human (it runs nothing; the prompt or read it helps to write will ask);
- ``resources/subscribe`` is decided as reading the server is (a deny refuses, an ask asks).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from polter.gateway.core import Gateway
from polter.gateway.models import POLICY_DENIED
from polter.gateway.outcomes import Authorization
from polter.gateway.panes import RegisteredPane
from polter.gateway.upstreams import Upstream

__all__ = ["POLICY_DENIED", "refuse", "trimmed_capabilities", "utility_handlers"]


def refuse(kind: str, name: str, server: str, auth: Authorization) -> MCPError:
    """The error for a prompt, resource or completion the role refuses: it says Polter refused, and why."""
    return MCPError(
        POLICY_DENIED,
        f"Polter refused {kind} {name} of {server} (forbidden, not broken). Rule: {auth.rule}. {auth.reason}",
        data={"decision": "deny", "rule": auth.rule, "reason": auth.reason},
    )


def trimmed_capabilities(upstream: Upstream) -> Callable[[types.ServerCapabilities], types.ServerCapabilities]:
    """What an endpoint advertises of the utilities: what its upstream does (a CLI then never asks the gateway
    for a level, a completion or a subscription the upstream would refuse)."""

    def trim(capabilities: types.ServerCapabilities) -> types.ServerCapabilities:
        if upstream.capabilities is None:  # not known yet (still starting): advertise all, as listings fail open
            return capabilities
        update: dict[str, Any] = {}
        if not upstream.supports("logging"):
            update["logging"] = None
        if not upstream.supports("completions"):
            update["completions"] = None
        if capabilities.resources is not None and not upstream.supports("subscribe"):
            update["resources"] = capabilities.resources.model_copy(update={"subscribe": None})
        return capabilities.model_copy(update=update) if update else capabilities

    return trim


def utility_handlers(
    gateway: Gateway,
    name: str,
    pane: Callable[[], RegisteredPane],
    forward: Callable[[ServerRequestContext[Any, Any], Any, type[Any]], Any],
) -> dict[str, Any]:
    """The handlers, as keyword arguments of the endpoint's server. ``pane`` is the calling pane; ``forward``
    sends a request the role allowed on to the upstream, as a call (timeout, cancellation, errors)."""

    async def set_logging_level(
        ctx: ServerRequestContext[Any, Any], params: types.SetLevelRequestParams
    ) -> types.EmptyResult:
        await gateway.router.set_level(pane(), name, ctx.session, params.level)
        return types.EmptyResult()

    async def complete(
        ctx: ServerRequestContext[Any, Any], params: types.CompleteRequestParams
    ) -> types.CompleteResult:
        caller, started = pane(), time.perf_counter()
        subject = params.ref.name if isinstance(params.ref, types.PromptReference) else params.ref.uri
        verdict = gateway.policy.decide_server(caller, name)
        allowed = verdict.decision != "deny"
        auth = Authorization(allowed, "allow" if allowed else "deny", verdict.rule, verdict.reason)
        gateway.auditor.soon(caller, "completion", name, subject, auth, started)
        if not allowed:
            raise refuse("completion of", subject, name, auth)
        result: types.CompleteResult = await forward(ctx, types.CompleteRequest(params=params), types.CompleteResult)
        return result

    async def subscribe(ctx: ServerRequestContext[Any, Any], params: types.SubscribeRequestParams) -> types.EmptyResult:
        uri = str(params.uri)
        await _authorize_read(gateway, pane(), name, uri, "subscription")
        await gateway.router.subscribe(pane(), name, ctx.session, uri)
        return types.EmptyResult()

    async def unsubscribe(
        ctx: ServerRequestContext[Any, Any], params: types.UnsubscribeRequestParams
    ) -> types.EmptyResult:
        await gateway.router.unsubscribe(pane(), name, ctx.session, str(params.uri))
        return types.EmptyResult()

    return {
        "on_set_logging_level": set_logging_level,
        "on_completion": complete,
        "on_subscribe_resource": subscribe,
        "on_unsubscribe_resource": unsubscribe,
    }


async def _authorize_read(gateway: Gateway, pane: RegisteredPane, server: str, uri: str, kind: str) -> None:
    """Reading a server's resource (or subscribing to it) is decided at the server level, as ``resources/read``."""
    started = time.perf_counter()
    verdict = gateway.policy.decide_server(pane, server)
    auth = await gateway.execution.authorize(pane, verdict, kind="resource", server=server, name=uri, arguments=None)
    await gateway.auditor.record(pane, "resource", server, uri, auth, started, None)
    if not auth.allowed:
        raise refuse(kind, uri, server, auth)
