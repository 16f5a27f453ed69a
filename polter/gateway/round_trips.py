"""A server's question during a 2026-07-28 client's tool call, put to that client as the protocol asks.

A 2026-07-28 request carries no requests of the server's. When the upstream asks the human something
(``elicitation/create``) during such a call, and the calling client declared that it can answer
(``elicitation``, in the question's mode), the gateway ends the client's request with an
``InputRequiredResult`` holding the question and an opaque ``requestState``, and keeps the upstream's call
running. The client retries the call with its answer (``inputResponses``) and that ``requestState``; the
gateway passes the answer up and goes on waiting for the call's result (or the next question).

A ``requestState`` is the pane's own: another pane, another tool or other arguments cannot resume it. A client
that does not come back within the upstream's timeout has abandoned the call: it is cancelled upstream.
"""

from __future__ import annotations

import asyncio
import itertools
import secrets
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import mcp_types as types

from polter.gateway.audit import digest_arguments
from polter.gateway.calls import CallInFlight
from polter.gateway.panes import RegisteredPane

__all__ = ["Question", "RoundTrips"]

_keys = itertools.count(1)


@dataclass(eq=False)
class Question:
    """One question of the upstream's for the calling client, and the future its answer settles."""

    request: types.ElicitRequest
    key: str = field(default_factory=lambda: f"polter-{next(_keys)}")
    answer: asyncio.Future[types.ElicitResult] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )


@dataclass(eq=False)
class _Flight:
    """A call that outlives its client's requests: the task that makes it, and the questions it asks."""

    task: asyncio.Task[types.CallToolResult]
    questions: asyncio.Queue[Question]


@dataclass(eq=False)
class _Parked:
    pane: RegisteredPane
    tool: str
    digest: str
    flight: _Flight
    question: Question
    expiry: asyncio.TimerHandle


class RoundTrips:
    """The 2026-07-28 tool calls whose upstream asked something, parked until their client answers."""

    def __init__(self) -> None:
        self._parked: dict[str, _Parked] = {}

    async def call_tool(
        self,
        pane: RegisteredPane,
        params: types.CallToolRequestParams,
        start: Callable[[Callable[[CallInFlight], None]], Awaitable[types.CallToolResult]],
        timeout: float,
    ) -> types.CallToolResult | types.InputRequiredResult:
        """The call's result, or the upstream's question. ``start(asking)`` makes the call; it hands
        ``asking`` the call in flight, to be given the queue its questions go to."""
        if params.request_state is not None:
            flight = self._resume(pane, params)
        else:
            questions: asyncio.Queue[Question] = asyncio.Queue()

            def asking(call: CallInFlight) -> None:
                call.questions = questions

            flight = _Flight(asyncio.ensure_future(start(asking)), questions)
        return await self._wait(pane, params, flight, timeout)

    def _resume(self, pane: RegisteredPane, params: types.CallToolRequestParams) -> _Flight:
        parked = self._parked.get(params.request_state or "")
        if (
            parked is None
            or parked.pane is not pane
            or parked.tool != params.name
            or parked.digest != digest_arguments(params.arguments)
        ):
            from mcp.shared.exceptions import MCPError  # lazy: it loads mcp_types' models (sdk_imports.py)

            raise MCPError(
                types.INVALID_PARAMS,
                "no call of this pane waits for input with that requestState (answered, expired, or not this call)",
            )
        del self._parked[params.request_state or ""]
        parked.expiry.cancel()
        answer = (params.input_responses or {}).get(parked.question.key)
        if not parked.question.answer.done():
            if isinstance(answer, types.ElicitResult):
                parked.question.answer.set_result(answer)
            else:  # no answer to the question asked: as the human dismissing it
                parked.question.answer.set_result(types.ElicitResult(action="cancel"))
        return parked.flight

    async def _wait(
        self, pane: RegisteredPane, params: types.CallToolRequestParams, flight: _Flight, timeout: float
    ) -> types.CallToolResult | types.InputRequiredResult:
        asked = asyncio.ensure_future(flight.questions.get())
        try:
            await asyncio.wait({flight.task, asked}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:  # the client hung up: the call ends
            asked.cancel()
            flight.task.cancel()
            raise
        if flight.task.done():
            asked.cancel()
            return flight.task.result()
        question = asked.result()
        state = secrets.token_urlsafe(24)
        expiry = asyncio.get_running_loop().call_later(timeout, self._expire, state)
        digest = digest_arguments(params.arguments)
        self._parked[state] = _Parked(pane, params.name, digest, flight, question, expiry)
        return types.InputRequiredResult(input_requests={question.key: question.request}, request_state=state)

    def _expire(self, state: str) -> None:
        """The client never came back with an answer: the call is abandoned, and cancelled upstream."""
        parked = self._parked.pop(state, None)
        if parked is not None:
            parked.flight.task.cancel()

    def __len__(self) -> int:
        return len(self._parked)
