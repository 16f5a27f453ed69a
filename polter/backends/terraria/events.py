"""Event intake: game events a TShock plugin POSTs to 127.0.0.1 (chat, joins, deaths, boss kills …).

Enabled by ``TERRARIA_EVENTS_PORT`` (``0`` picks a free port and logs it). A plugin sends
``POST /events`` with ``Content-Type: application/json`` and one event or a list of them; with
``TERRARIA_EVENTS_SECRET`` set it must also send ``Authorization: Bearer <secret>``. Requiring JSON
keeps browsers out (a cross-site form cannot send it without a CORS preflight, which is refused),
and a ``Host`` other than the loopback address is refused (DNS rebinding).
The MCP server shows the recent events as the ``recent_events`` tool and the
``terraria://events/recent`` resource.
"""

from __future__ import annotations

import hmac
from collections import deque
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from polter.backends.terraria.localhttp import LocalHttpServer

__all__ = ["ENV_EVENTS_PORT", "ENV_EVENTS_SECRET", "EventIntake", "EventLog", "GameEvent"]

ENV_EVENTS_PORT = "TERRARIA_EVENTS_PORT"
ENV_EVENTS_SECRET = "TERRARIA_EVENTS_SECRET"

EventKind = Literal[
    "chat", "join", "leave", "death", "boss_spawn", "boss_kill", "invasion", "world", "command", "server", "other"
]


class GameEvent(BaseModel):
    """One thing that happened in the game, as the plugin reports it."""

    model_config = ConfigDict(extra="forbid")

    kind: EventKind
    player: str | None = Field(default=None, max_length=64)
    message: str | None = Field(default=None, max_length=2000)
    details: dict[str, str | int | float | bool | None] = Field(default_factory=dict)
    time: datetime = Field(default_factory=lambda: datetime.now(UTC))


_EVENTS = TypeAdapter(GameEvent | list[GameEvent])
LOOPBACK_HOSTS = {"127.0.0.1", "localhost", "[::1]"}


class EventLog:
    """The last ``capacity`` events, oldest first."""

    def __init__(self, capacity: int = 500) -> None:
        self._events: deque[GameEvent] = deque(maxlen=capacity)
        self.received = 0

    def add(self, event: GameEvent) -> None:
        self._events.append(event)
        self.received += 1

    def recent(self, limit: int = 20, kinds: list[str] | None = None) -> list[GameEvent]:
        events = [e for e in self._events if not kinds or e.kind in kinds]
        return events[-limit:] if limit > 0 else []

    def as_json(self, limit: int = 50) -> list[dict[str, Any]]:
        return [event.model_dump(mode="json") for event in self.recent(limit)]


def create_intake_app(log: EventLog, secret: str | None = None) -> Starlette:
    async def receive(request: Request) -> JSONResponse:
        if request.headers.get("host", "").rsplit(":", 1)[0] not in LOOPBACK_HOSTS:
            return JSONResponse({"error": "unexpected Host header"}, status_code=421)  # DNS rebinding
        if secret is not None:
            given = request.headers.get("authorization", "")
            if not hmac.compare_digest(given.encode(), f"Bearer {secret}".encode()):
                return JSONResponse({"error": "missing or wrong bearer token"}, status_code=401)
        if request.headers.get("content-type", "").split(";")[0].strip() != "application/json":
            return JSONResponse({"error": "send the events as application/json"}, status_code=415)
        body = await request.body()
        if len(body) > 256 * 1024:
            return JSONResponse({"error": "at most 256 KiB of events per request"}, status_code=413)
        try:
            parsed = _EVENTS.validate_json(body)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'body'}: {e['msg']}" for e in exc.errors()[:5]
            )
            return JSONResponse({"error": f"invalid event: {problems}"}, status_code=422)
        events = parsed if isinstance(parsed, list) else [parsed]
        for event in events:
            log.add(event)
        return JSONResponse({"accepted": len(events)}, status_code=202)

    async def health(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True, "received": log.received})

    return Starlette(routes=[Route("/events", receive, methods=["POST"]), Route("/health", health, methods=["GET"])])


class EventIntake(LocalHttpServer):
    """The listener, run inside the MCP server's event loop for as long as the server lives."""

    def __init__(self, log: EventLog, *, port: int = 0, secret: str | None = None) -> None:
        super().__init__(create_intake_app(log, secret), port=port)
        self.log = log

    @property
    def url(self) -> str:
        return f"{self.base_url}/events"

    async def __aenter__(self) -> EventIntake:
        await self.start()
        return self
