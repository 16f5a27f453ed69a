"""An upstream's requests of the pane: ``sampling/createMessage`` (the pane's model) and ``elicitation/create``
(the pane's human), each decided by the role and each an audit row.

Such a request belongs to the pane whose call is in flight on that upstream (the MCP wire names no call; see
:meth:`~polter.gateway.calls.CallsInFlight.attributed`); with several panes' calls in flight, or none, it
belongs to nobody Polter could ask, and the upstream gets an error at once. Then the pane's role decides
(``[sampling]``: ask by default, ``[elicitation]``: allow by default; a server the role denies may do neither),
an ``ask`` asks the human first, and the request goes:

- to the pane's CLI, when the session that made the call declared the capability (``sampling``,
  ``elicitation`` with the request's mode) and holds a stream to carry it (a 2025-era session's GET stream);
  a 2026-07-28 tool call has none, so its client's elicitation goes in a round trip
  (:mod:`polter.gateway.round_trips`);
- otherwise, an elicitation to Polter's own window, as a form over the pane (:class:`Elicitations`); a
  sampling request gets an error that says no client of the pane can sample (Polter has no model of its own).

A form outside the spec is refused with the reason and shown to nobody; a call that has gone (its pane
removed, its client hung up) gets an error at once; nothing waits longer than the upstream's own timeout.
"""

from __future__ import annotations

import asyncio
import secrets
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any, Literal

import mcp_types as types

from polter.gateway.calls import CallInFlight
from polter.gateway.events import EventHub
from polter.gateway.forms import FormError, check_answer, parse_form
from polter.gateway.models import POLICY_DENIED, ElicitationInfo, ElicitationReply
from polter.gateway.outcomes import Authorization
from polter.gateway.round_trips import Question

if TYPE_CHECKING:
    from polter.gateway.core import Gateway

__all__ = ["Elicitations", "ServerRequests", "UnknownElicitation"]

Kind = Literal["sampling", "elicitation"]


class UnknownElicitation(KeyError):
    """No pending elicitation has this id (answered, expired, or never asked)."""


class Elicitations:
    """Elicitations shown in Polter's window: published on ``/control/events``, answered by a controller. No
    controller listening is a cancel at once, as is the last controller leaving, the pane being removed or
    the timeout."""

    def __init__(self, events: EventHub, *, timeout: float) -> None:
        self.timeout = timeout
        self._events = events
        self._pending: dict[str, tuple[ElicitationInfo, asyncio.Future[tuple[ElicitationReply, str]]]] = {}
        events.on_last_controller_left(lambda: self.cancel_all("the last controller stopped listening"))

    def pending(self, pane: str | None = None) -> list[ElicitationInfo]:
        return [info for info, _ in self._pending.values() if pane is None or info.pane == pane]

    async def ask(
        self,
        *,
        pane: str,
        pane_title: str | None,
        role: str,
        server: str,
        message: str,
        schema: dict[str, Any],
        url: str | None,
        timeout: float,
    ) -> tuple[ElicitationReply | None, str]:
        """The human's reply and who gave it, or (None, why) when nobody could or did answer."""
        if self._events.controllers == 0:
            return None, "no controller is listening (Polter's window is not attached)"
        now = datetime.now(UTC)
        wait = min(timeout, self.timeout)
        info = ElicitationInfo(
            id=f"e{secrets.token_hex(4)}",
            pane=pane,
            pane_title=pane_title,
            role=role,
            server=server,
            message=message,
            requested_schema=schema,
            url=url,
            created_at=now,
            expires_at=now + timedelta(seconds=wait),
        )
        future: asyncio.Future[tuple[ElicitationReply, str]] = asyncio.get_running_loop().create_future()
        self._pending[info.id] = (info, future)
        self._events.publish("elicitation", info)
        reply: ElicitationReply | None = None
        try:
            reply, by = await asyncio.wait_for(asyncio.shield(future), wait)
        except TimeoutError:
            by = f"nobody answered within {wait:g} s"
        finally:
            self._pending.pop(info.id, None)
            action = reply.action if reply is not None else "cancel"
            self._events.publish("elicitation_resolved", info.model_copy(update={"action": action, "answered_by": by}))
        return reply, by

    def answer(self, elicitation_id: str, reply: ElicitationReply, *, by: str = "controller") -> ElicitationInfo:
        """Answer a pending elicitation; an accepted form must fill it in (:class:`FormError` otherwise)."""
        pending = self._pending.get(elicitation_id)
        if pending is None or pending[1].done():
            raise UnknownElicitation(elicitation_id)
        info, future = pending
        if reply.action == "accept" and info.url is None:
            check_answer(parse_form(info.requested_schema), dict(reply.content or {}))
        future.set_result((reply, by))
        return info

    def cancel_pane(self, pane: str, why: str) -> None:
        for info, future in list(self._pending.values()):
            if info.pane == pane and not future.done():
                future.set_result((ElicitationReply(action="cancel"), why))

    def cancel_all(self, why: str) -> None:
        for _info, future in list(self._pending.values()):
            if not future.done():
                future.set_result((ElicitationReply(action="cancel"), why))


class ServerRequests:
    """Decides and routes one upstream's sampling and elicitation requests (the gateway's part of
    :class:`~polter.gateway.upstreams.UpstreamListener`)."""

    def __init__(self, gateway: Gateway, get_streams: Callable[[str], bool]) -> None:
        self.gateway = gateway
        self._has_stream = get_streams

    async def create_message(
        self, server: str, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        started = time.perf_counter()
        call, refusal = await self._admit(server, "sampling", {"messages": len(params.messages)}, started)
        if refusal is not None:
            return refusal
        assert call is not None and call.session is not None
        if not self._cli_can(call, "sampling"):
            return await self._audited(
                call,
                "sampling",
                started,
                types.ErrorData(
                    code=types.INVALID_REQUEST,
                    message="Polter cannot pass this sampling request on: the CLI of the pane whose call asked for it "
                    "did not declare sampling (or holds no stream to carry it), and Polter has no model of its own",
                ),
                "no client of the pane can sample",
            )
        request = types.CreateMessageRequest(params=params)
        result_type: Any = types.CreateMessageResultWithTools if params.tools else types.CreateMessageResult
        outcome = await self._to_cli(call, request, result_type)
        return await self._audited(call, "sampling", started, outcome, "passed to the pane's CLI")

    async def elicit(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult | types.ErrorData:
        started = time.perf_counter()
        url = params.url if isinstance(params, types.ElicitRequestURLParams) else None
        schema: dict[str, Any] = {} if url is not None else dict(params.requested_schema)  # type: ignore[union-attr]
        call, refusal = await self._admit(server, "elicitation", {"message": params.message}, started)
        if refusal is not None:
            return refusal
        assert call is not None and call.session is not None
        if url is None:
            try:
                parse_form(schema)
            except FormError as exc:  # refused with the reason, shown to nobody
                error = types.ErrorData(code=types.INVALID_PARAMS, message=f"Polter refused the elicitation: {exc}")
                return await self._audited(call, "elicitation", started, error, str(exc), decision="deny")
        mode = "url" if url is not None else "form"
        if self._cli_can(call, "elicitation", mode):
            outcome = await self._to_cli(call, types.ElicitRequest(params=params), types.ElicitResult)
            return await self._audited(call, "elicitation", started, outcome, "passed to the pane's CLI")
        if call.questions is not None and _declares_elicitation(call.session.client_capabilities, mode):
            outcome = await self._in_a_round_trip(call, types.ElicitRequest(params=params))
            how = "passed to the pane's CLI (a 2026-07-28 round trip)"
            return await self._audited(call, "elicitation", started, outcome, how)
        upstream = self.gateway.pool.get(server)
        reply, by = await self.gateway.elicitations.ask(
            pane=call.pane.id,
            pane_title=call.pane.title,
            role=call.pane.role,
            server=server,
            message=params.message,
            schema=schema,
            url=url,
            timeout=upstream.config.timeout if upstream is not None else self.gateway.config.ask_timeout,
        )
        if reply is None:
            error = types.ErrorData(code=types.INVALID_REQUEST, message=f"Polter could not ask the human: {by}")
            return await self._audited(call, "elicitation", started, error, f"shown in Polter's window: {by}")
        content: dict[str, str | int | float | bool | list[str] | None] | None = (
            {**(reply.content or {})} if reply.action == "accept" else None
        )
        result = types.ElicitResult(action=reply.action, content=content)
        return await self._audited(call, "elicitation", started, result, f"answered in Polter's window ({by})")

    # -- steps -----------------------------------------------------------------------------------------

    async def _admit(
        self, server: str, kind: Kind, summary: dict[str, Any], started: float
    ) -> tuple[CallInFlight | None, types.ErrorData | None]:
        """The call the request belongs to, once the role allowed it (asking the human if it says so)."""

        call = self.gateway.calls.attributed(server)
        if call is None:
            return None, types.ErrorData(
                code=types.INVALID_REQUEST,
                message=f"Polter cannot tell which pane's call this {kind} request belongs to (no call, or several "
                "panes' calls, are in flight on this server), so nobody is asked",
            )
        if call.abandoned is not None or call.session is None or call.pane not in self.gateway.panes:
            why = call.abandoned or "the pane was removed"
            error = types.ErrorData(
                code=types.INVALID_REQUEST, message=f"the session that made the call has gone: {why}"
            )
            return None, await self._audited(call, kind, started, error, why, decision="error")
        verdict = self.gateway.policy.decide_upstream(call.pane, server, kind)
        auth: Authorization = await self.gateway.execution.authorize(
            call.pane, verdict, kind=kind, server=server, name=kind, arguments=summary, grant_key=(server, f"@{kind}")
        )
        if not auth.allowed:
            error = types.ErrorData(
                code=POLICY_DENIED,
                message=f"Polter refused {kind} by {server} (forbidden, not broken). Rule: {auth.rule}. {auth.reason}",
                data={"decision": "deny", "rule": auth.rule, "reason": auth.reason},
            )
            return None, await self._audited(call, kind, started, error, auth.reason, decision="deny", rule=auth.rule)
        if call.abandoned is not None:  # gone while the human was asked
            error = types.ErrorData(code=types.INVALID_REQUEST, message="the session that made the call has gone")
            return None, await self._audited(call, kind, started, error, call.abandoned, decision="error")
        return call, None

    async def _in_a_round_trip(self, call: CallInFlight, request: types.ElicitRequest) -> Any:
        """Put the question to a 2026-era calling client (its call ends with it; its retry brings the answer)."""
        assert call.questions is not None
        question = Question(request)
        call.questions.put_nowait(question)
        upstream = self.gateway.pool.get(call.server)
        timeout = upstream.config.timeout if upstream is not None else 60.0
        try:
            return await asyncio.wait_for(asyncio.shield(question.answer), timeout)
        except TimeoutError:
            return types.ErrorData(
                code=types.INVALID_REQUEST, message=f"the pane's CLI did not answer in {timeout:g} s"
            )

    def _cli_can(self, call: CallInFlight, kind: Kind, mode: str = "form") -> bool:
        """Whether the calling session declared ``kind`` (in this mode) and has a stream to carry it now."""
        if call.modern or call.session is None or call.session_id is None or not self._has_stream(call.session_id):
            return False
        capabilities = call.session.client_capabilities
        if kind == "sampling":
            return capabilities is not None and capabilities.sampling is not None
        return _declares_elicitation(capabilities, mode)

    async def _to_cli(self, call: CallInFlight, request: Any, result_type: Any) -> Any:
        """Send the request to the calling session; its error, or none in time, is the upstream's answer."""
        assert call.session is not None
        upstream = self.gateway.pool.get(call.server)
        timeout = upstream.config.timeout if upstream is not None else 60.0
        try:
            return await asyncio.wait_for(call.session.send_request(request, result_type), timeout)
        except TimeoutError:
            return types.ErrorData(
                code=types.INVALID_REQUEST, message=f"the pane's CLI did not answer in {timeout:g} s"
            )
        except Exception as exc:  # its error (or its stream closing) is the answer
            message = getattr(getattr(exc, "error", None), "message", None) or f"{type(exc).__name__}: {exc}"
            return types.ErrorData(
                code=types.INVALID_REQUEST, message=f"the pane's CLI answered with an error: {message}"
            )

    async def _audited(
        self,
        call: CallInFlight,
        kind: Kind,
        started: float,
        outcome: Any,
        how: str,
        *,
        decision: str | None = None,
        rule: str | None = None,
    ) -> Any:
        if isinstance(outcome, types.ErrorData):
            said, allowed = f"{how}; the upstream is told: {outcome.message}", False
        elif isinstance(outcome, types.ElicitResult):
            said, allowed = f"{how}: {outcome.action}", True
        else:
            said, allowed = f"{how}: answered", True
        auth = Authorization(allowed, decision or ("allow" if allowed else "error"), rule, said)
        await self.gateway.auditor.record(call.pane, kind, call.server, kind, auth, started, None)
        return outcome


def _declares_elicitation(capabilities: types.ClientCapabilities | None, mode: str) -> bool:
    elicitation = capabilities.elicitation if capabilities is not None else None
    if elicitation is None:
        return False
    if mode == "url":
        return elicitation.url is not None
    return elicitation.form is not None or elicitation.url is None  # {} means form (the spec's default)


def _error(message: str) -> types.ErrorData:
    return types.ErrorData(code=types.INVALID_REQUEST, message=message)
