"""``POST /hook/<adapter>/state``: a CLI's own hook says what its agent does (a turn began, a permission dialog
opened, the turn ended); the gateway passes it on to the session host as a ``state`` event.

The pane is the one whose token came with the request (the same authentication as the veto hook), so a pane
can only speak for itself. The pane's adapter translates the CLI's payload
(:meth:`~polter.adapters.Adapter.state_report`). The answer never depends on the payload: HTTP 200 with an
empty JSON object, which no CLI reads as a decision (Claude Code's PermissionRequest hook then shows its own
dialog, a Stop hook lets the turn end), or with ``reply=command`` the ``hook_client`` reply for "exit 0, print
nothing". So a state report can never allow or refuse anything, and a payload that cannot be read is dropped
(logged), not an error for the CLI.
"""

from __future__ import annotations

import json
import logging
from typing import TYPE_CHECKING

from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from polter.gateway.models import PaneStateReport
from polter.gateway.panes import PANE_SCOPE_KEY

if TYPE_CHECKING:
    from polter.gateway.core import Gateway

__all__ = ["state_route"]

logger = logging.getLogger(__name__)

MAX_BODY = 256 * 1024
"""A state payload is small (Claude Code's Stop carries the last message); longer bodies are not read."""


def _taken(form: str) -> Response:
    """The one answer to every report: nothing decided, nothing to print."""
    if form == "command":
        return Response(b"0\n0\n", media_type="application/octet-stream")
    return Response(b"{}", media_type="application/json")


async def take_report(gateway: Gateway, request: Request) -> Response:
    pane = request.scope[PANE_SCOPE_KEY]
    name = request.path_params["adapter"]
    form = request.query_params.get("reply", "http")
    try:
        body = await request.body()
        if len(body) > MAX_BODY:
            raise ValueError(f"{len(body)} bytes, more than a state report holds")
        payload = json.loads(body)
        if not isinstance(payload, dict):
            raise ValueError("not a JSON object")
        adapter = await gateway.hook_adapters.get(name)
        report = adapter.state_report(payload)
    except Exception as exc:  # noqa: BLE001 - a report that cannot be read is dropped; the CLI is not bothered
        logger.warning("state report of pane %s (%s) dropped: %s", pane.id, name, exc)
        return _taken(form)
    if report is not None:
        gateway.events.publish("state", PaneStateReport(pane=pane.id, adapter=name, report=report))
    return _taken(form)


def state_route(gateway: Gateway) -> Route:
    async def endpoint(request: Request) -> Response:
        return await take_report(gateway, request)

    return Route("/hook/{adapter}/state", endpoint, methods=["POST"])
