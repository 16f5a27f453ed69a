"""The control API (``/control/*``, admin token only) and the hook veto (``/hook/<adapter>``, pane token).

Control routes, all JSON in and out (models in :mod:`polter.gateway.models`)::

    GET    /control/status                  GatewayStatus
    GET    /control/panes                   [PaneInfo]
    POST   /control/panes                   PaneRegistration -> PaneCreated (201)
    GET    /control/panes/{id}              PaneInfo
    DELETE /control/panes/{id}              PaneInfo
    PUT    /control/panes/{id}/role         RoleChange -> PaneInfo
    POST   /control/panes/{id}/input        InputLine -> PaneInfo
    PUT    /control/panes/{id}/phase        PhaseChange -> PaneInfo
    PUT    /control/panes/{id}/skills       SkillInventory -> PaneInfo
    GET    /control/panes/{id}/capabilities?wait=  Capabilities (what the pane's whoami answers; ``wait=0``:
                                            at once, not after the upstreams still starting)
    GET    /control/asks                    [AskInfo]
    POST   /control/asks/{id}               AskReply -> AskInfo
    GET    /control/elicitations            [ElicitationInfo] (questions of servers shown in Polter's window)
    POST   /control/elicitations/{id}       ElicitationReply -> ElicitationInfo (422: the form is not filled in)
    POST   /control/team/{id}               TeamReply (the session host's answer to a ``team`` event) -> {}
    GET    /control/roles                   RolesStatus
    POST   /control/roles/reload            RolesStatus
    POST   /control/servers/reload          ServersReload (re-read the servers file; 409 without one)
    GET    /control/audit?pane=&after=&limit=  [AuditRow]
    GET    /control/events                  text/event-stream of GatewayEvent (a listener is a controller)
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from polter.gateway.asks import UnknownAsk
from polter.gateway.audit import read_rows
from polter.gateway.core import Gateway
from polter.gateway.floor import capabilities
from polter.gateway.forms import FormError
from polter.gateway.models import (
    AskReply,
    ElicitationReply,
    GatewayEvent,
    InputLine,
    PaneRegistration,
    PhaseChange,
    RoleChange,
    ServersReload,
    SkillInventory,
    TeamReply,
)
from polter.gateway.outcomes import PaneNotFound, PhaseError
from polter.gateway.panes import PANE_SCOPE_KEY, PaneConflict
from polter.gateway.server_requests import UnknownElicitation
from polter.gateway.team_desk import UnknownTeamRequest
from polter.protocol import HookRequest

__all__ = ["control_routes", "hook_route"]

ModelT = TypeVar("ModelT", bound=BaseModel)
KEEPALIVE_SECONDS = 15.0


def _json(value: Any, status: int = 200) -> Response:
    if isinstance(value, BaseModel):
        body = value.model_dump_json()
    else:
        body = json.dumps([item.model_dump(mode="json") if isinstance(item, BaseModel) else item for item in value])
    return Response(body, status_code=status, media_type="application/json")


def _error(status: int, message: str, **extra: Any) -> Response:
    return JSONResponse({"error": message, **extra}, status_code=status)


async def _body(request: Request, model: type[ModelT]) -> ModelT:
    raw = await request.body()
    return model.model_validate_json(raw or b"{}")


def _handler(
    function: Callable[[Gateway, Request], Awaitable[Response]], gateway: Gateway
) -> Callable[[Request], Awaitable[Response]]:
    """Map the gateway's errors to HTTP statuses, in one place."""

    async def endpoint(request: Request) -> Response:
        try:
            return await function(gateway, request)
        except ValidationError as exc:
            # (without the input: it is the caller's own, and a float out of JSON's range could not be answered)
            details = json.loads(exc.json(include_url=False, include_input=False))
            return _error(422, "invalid request body", details=details)
        except PaneNotFound as exc:
            return _error(404, f"no pane {exc.args[0]!r}")
        except UnknownAsk as exc:
            return _error(404, f"no pending ask {exc.args[0]!r} (answered, expired or unknown)")
        except UnknownElicitation as exc:
            return _error(404, f"no pending elicitation {exc.args[0]!r} (answered, expired or unknown)")
        except UnknownTeamRequest as exc:
            return _error(404, f"no team call {exc.args[0]!r} in progress (answered, timed out or unknown)")
        except FormError as exc:
            return _error(422, str(exc))
        except PaneConflict as exc:
            return _error(409, str(exc))
        except PhaseError as exc:
            return _error(409, str(exc))

    return endpoint


async def _status(gateway: Gateway, request: Request) -> Response:
    return _json(gateway.status())


async def _list_panes(gateway: Gateway, request: Request) -> Response:
    return _json([gateway.pane_control.info(pane) for pane in gateway.panes])


async def _register(gateway: Gateway, request: Request) -> Response:
    return _json(gateway.pane_control.register(await _body(request, PaneRegistration)), 201)


async def _get_pane(gateway: Gateway, request: Request) -> Response:
    return _json(gateway.pane_control.info(gateway.pane_control.pane(request.path_params["pane"])))


async def _remove_pane(gateway: Gateway, request: Request) -> Response:
    return _json(gateway.pane_control.remove(request.path_params["pane"]))


async def _set_role(gateway: Gateway, request: Request) -> Response:
    change = await _body(request, RoleChange)
    return _json(gateway.pane_control.set_role(request.path_params["pane"], change.role))


async def _input(gateway: Gateway, request: Request) -> Response:
    line = await _body(request, InputLine)
    return _json(gateway.pane_control.record_input(request.path_params["pane"], line.text))


async def _phase(gateway: Gateway, request: Request) -> Response:
    change = await _body(request, PhaseChange)
    return _json(await gateway.pane_control.set_phase(request.path_params["pane"], change.phase, change.reason))


async def _skills(gateway: Gateway, request: Request) -> Response:
    inventory = await _body(request, SkillInventory)
    return _json(gateway.pane_control.set_skills(request.path_params["pane"], inventory.skills))


async def _capabilities(gateway: Gateway, request: Request) -> Response:
    wait = request.query_params.get("wait", "1") != "0"
    return _json(await capabilities(gateway, gateway.pane_control.pane(request.path_params["pane"]), wait=wait))


async def _asks(gateway: Gateway, request: Request) -> Response:
    return _json(gateway.asks.pending(request.query_params.get("pane")))


async def _answer(gateway: Gateway, request: Request) -> Response:
    reply = await _body(request, AskReply)
    return _json(gateway.asks.answer(request.path_params["ask"], reply.answer))


async def _elicitations(gateway: Gateway, request: Request) -> Response:
    return _json(gateway.elicitations.pending(request.query_params.get("pane")))


async def _answer_elicitation(gateway: Gateway, request: Request) -> Response:
    reply = await _body(request, ElicitationReply)
    return _json(gateway.elicitations.answer(request.path_params["elicitation"], reply))


async def _answer_team(gateway: Gateway, request: Request) -> Response:
    gateway.team.answer(request.path_params["request"], await _body(request, TeamReply))
    return JSONResponse({})


async def _roles(gateway: Gateway, request: Request) -> Response:
    return _json(gateway.roles_status())


async def _reload_roles(gateway: Gateway, request: Request) -> Response:
    return _json(gateway.reload_roles())


async def _audit(gateway: Gateway, request: Request) -> Response:
    query = request.query_params
    try:
        after = int(query.get("after", "0"))
        limit = int(query["limit"]) if "limit" in query else None
    except ValueError:
        return _error(400, "after and limit must be integers")
    rows = await asyncio.to_thread(
        read_rows,
        gateway.audit.path,
        pane=query.get("pane"),
        after_id=after,
        limit=limit,
        newest=after == 0 and limit is not None,
    )
    return _json(rows)


async def _events(gateway: Gateway, request: Request) -> Response:
    async def stream() -> AsyncIterator[bytes]:
        async with gateway.events.listen() as queue:
            yield _sse(GatewayEvent(type="hello", data=gateway.status().model_dump(mode="json")))
            while True:
                try:
                    event = await asyncio.wait_for(queue.get(), KEEPALIVE_SECONDS)
                except TimeoutError:
                    yield b": keepalive\n\n"
                    continue
                batch = [event]  # and all else queued: one write per burst, or a busy gateway falls behind and drops us
                while batch[-1] is not None and not queue.empty():
                    batch.append(queue.get_nowait())
                if batch[0] is not None:
                    yield b"".join(_sse(event) for event in batch if event is not None)
                if batch[-1] is None:
                    return

    return StreamingResponse(
        stream(), media_type="text/event-stream", headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"}
    )


def _sse(event: GatewayEvent) -> bytes:
    """One event. Its JSON is ASCII: a pane's text (a resource's URI, a tool's arguments) may hold characters that
    line readers take for line breaks (U+2028, U+0085, CR), which would end the data line and let the pane write
    an event line of its own (``event: ask``) into every controller's stream."""
    return f"event: {event.type}\ndata: {json.dumps(event.data)}\n\n".encode()


def control_routes(
    gateway: Gateway, reload_servers: Callable[[], Awaitable[ServersReload]] | None = None
) -> list[Route]:
    async def _reload_servers(gateway: Gateway, request: Request) -> Response:
        if reload_servers is None:
            return _error(409, "this gateway cannot reload its servers")
        try:
            return _json(await reload_servers())
        except LookupError as exc:
            return _error(409, str(exc))

    def route(path: str, function: Callable[[Gateway, Request], Awaitable[Response]], method: str) -> Route:
        return Route(f"/control{path}", _handler(function, gateway), methods=[method])

    return [
        route("/status", _status, "GET"),
        route("/panes", _list_panes, "GET"),
        route("/panes", _register, "POST"),
        route("/panes/{pane}", _get_pane, "GET"),
        route("/panes/{pane}", _remove_pane, "DELETE"),
        route("/panes/{pane}/role", _set_role, "PUT"),
        route("/panes/{pane}/input", _input, "POST"),
        route("/panes/{pane}/phase", _phase, "PUT"),
        route("/panes/{pane}/skills", _skills, "PUT"),
        route("/panes/{pane}/capabilities", _capabilities, "GET"),
        route("/asks", _asks, "GET"),
        route("/asks/{ask}", _answer, "POST"),
        route("/elicitations", _elicitations, "GET"),
        route("/elicitations/{elicitation}", _answer_elicitation, "POST"),
        route("/team/{request}", _answer_team, "POST"),
        route("/roles", _roles, "GET"),
        route("/roles/reload", _reload_roles, "POST"),
        route("/servers/reload", _reload_servers, "POST"),
        route("/audit", _audit, "GET"),
        Route("/control/events", _handler(_events, gateway), methods=["GET"]),
    ]


def hook_route(gateway: Gateway) -> Route:
    async def hook(gateway: Gateway, request: Request) -> Response:
        pane = request.scope[PANE_SCOPE_KEY]
        answer = await gateway.execution.hook(pane, request.path_params["adapter"], await _body(request, HookRequest))
        return _json(answer)

    return Route("/hook/{adapter}", _handler(hook, gateway), methods=["POST"])
