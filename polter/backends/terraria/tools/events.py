"""Recent game events from the optional intake: a read-only tool and an MCP resource.

Registered only when the intake is on (``TERRARIA_EVENTS_PORT``), so the catalogue stays 46 tools
otherwise.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import Field

from polter.backends.terraria.events import EventKind
from polter.backends.terraria.tools._common import READ_ONLY

if TYPE_CHECKING:
    from polter.backends.terraria.server import Backend, TerrariaServer


def register(server: TerrariaServer, backend: Backend) -> None:
    events = backend.events
    if events is None:
        return

    @server.tool(annotations=READ_ONLY)
    async def recent_events(
        limit: Annotated[int, Field(ge=1, le=500)] = 20,
        kinds: Annotated[list[EventKind] | None, Field(description="only these kinds")] = None,
    ) -> dict[str, Any]:
        """The latest game events a TShock plugin reported (chat, joins, leaves, deaths, boss kills …),
        oldest first."""
        found = events.recent(limit, list(kinds) if kinds else None)
        return {
            "count": len(found),
            "received_total": events.received,
            "events": [event.model_dump(mode="json") for event in found],
        }

    @server.resource(
        "terraria://events/recent",
        name="recent-events",
        mime_type="application/json",
        description="The last 50 game events reported by the TShock plugin, oldest first.",
    )
    def recent_events_resource() -> str:
        return json.dumps(events.as_json(50), ensure_ascii=False, indent=2)
