"""The Terraria (TShock) admin MCP server: 46 tools over TShock's REST API, plus optional game events.

An ordinary MCP server built on the official SDK's :class:`MCPServer`; it knows nothing of Polter's
roles or gateway. Every failure the model should read (TShock saying no, a bad argument, an
unreachable wiki) comes back as an ``is_error`` result with a clear sentence, never as a crash, and
no result or log line ever carries the REST token or password.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import logging
import os
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver.exceptions import ToolError, UnexpectedToolError
from mcp.types import CallToolResult, Icon, TextContent, ToolAnnotations
from pydantic import ValidationError

from polter.backends.terraria.client import TShockClient, TShockSettings
from polter.backends.terraria.events import ENV_EVENTS_PORT, ENV_EVENTS_SECRET, EventIntake, EventLog
from polter.backends.terraria.items import ItemTable, item_table
from polter.backends.terraria.tools import register_all
from polter.backends.terraria.wiki import WikiClient
from polter.errors import BackendError, ConfigError

__all__ = ["Backend", "build_server", "main"]

log = logging.getLogger("polter.terraria")

INSTRUCTIONS = """\
Administer a Terraria server through TShock's REST API. Read-only tools (status, world, players,
accounts, bans, groups, regions, warps, wiki, items) change nothing; use them first. Acting tools
change the live world for every player. world_hardmode is effectively irreversible (it spreads the
Hallow and the evil biome); only call it when a human explicitly asked for hardmode. Replies are
TShock's own words with colour tags removed; an error result means TShock (or the wiki) said no."""


@dataclass
class Backend:
    """Everything the tools use. Tests build one against the simulator."""

    tshock: TShockClient
    wiki: WikiClient
    items: ItemTable = field(default_factory=item_table)
    events: EventLog | None = None
    events_port: int | None = None
    events_secret: str | None = None
    events_url: str | None = None
    """Where the intake listens once the server runs (``http://127.0.0.1:PORT/events``)."""

    @classmethod
    def from_env(cls, env: Mapping[str, str]) -> Backend:
        events_port: int | None = None
        raw_port = env.get(ENV_EVENTS_PORT, "").strip()
        if raw_port:
            if not raw_port.isdigit() or int(raw_port) > 65535:
                raise ConfigError(
                    f"must be a port number (0 picks a free one), not {raw_port!r}", field=ENV_EVENTS_PORT
                )
            events_port = int(raw_port)
        return cls(
            tshock=TShockClient(TShockSettings.from_env(env)),
            wiki=WikiClient.from_env(env),
            events=EventLog() if events_port is not None else None,
            events_port=events_port,
            events_secret=env.get(ENV_EVENTS_SECRET) or None,
        )

    async def aclose(self) -> None:
        await self.tshock.aclose()
        await self.wiki.aclose()


class TerrariaServer(MCPServer[Any]):
    """:class:`MCPServer` with two guarantees: backend failures reach the model as readable tool
    errors (the SDK would hide them as crashes), and no output ever contains a credential."""

    def __init__(self, backend: Backend, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.backend = backend

    def add_tool(
        self,
        fn: Callable[..., Any],
        name: str | None = None,
        title: str | None = None,
        description: str | None = None,
        annotations: ToolAnnotations | None = None,
        icons: list[Icon] | None = None,
        meta: dict[str, Any] | None = None,
        structured_output: bool | None = None,
    ) -> None:
        """As :meth:`MCPServer.add_tool`, with the docstring's indentation removed from the description."""
        description = description or inspect.cleandoc(fn.__doc__ or "")
        super().add_tool(fn, name, title, description, annotations, icons, meta, structured_output)

    async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
        redact = self.backend.tshock.redact
        try:
            result = await super().call_tool(name, arguments, context)
        except UnexpectedToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, BackendError | ValueError):
                raise ToolError(redact(f"Error executing tool {name}: {cause}")) from cause
            raise
        except ToolError as exc:
            cause = exc.__cause__
            if isinstance(cause, ValidationError):
                raise ToolError(
                    f"Error executing tool {name}: invalid arguments: {describe_validation(cause)}"
                ) from cause
            raise ToolError(redact(str(exc))) from cause
        if isinstance(result, CallToolResult):
            result.content = [
                TextContent(type="text", text=redact(c.text)) if isinstance(c, TextContent) else c
                for c in result.content
            ]
            if result.structured_content is not None:
                result.structured_content = json.loads(redact(json.dumps(result.structured_content)))
        return result


def describe_validation(error: ValidationError) -> str:
    """``speed: Input should be less than or equal to 100 (got 500)`` for each bad field."""
    parts = []
    for problem in error.errors():
        where = ".".join(str(p) for p in problem["loc"]) or "arguments"
        got = f" (got {problem['input']!r})" if problem["type"] != "missing" else ""
        parts.append(f"{where}: {problem['msg']}{got}")
    return "; ".join(parts)


def build_server(backend: Backend) -> TerrariaServer:
    @contextlib.asynccontextmanager
    async def lifespan(server: MCPServer[Any]) -> AsyncIterator[dict[str, Any]]:
        async with contextlib.AsyncExitStack() as stack:
            if backend.events is not None:
                intake = EventIntake(backend.events, port=backend.events_port or 0, secret=backend.events_secret)
                await stack.enter_async_context(intake)
                backend.events_url = intake.url
                log.warning("event intake listening on %s", intake.url)
            yield {}

    server = TerrariaServer(
        backend, name="terraria", version="0.1.0", instructions=INSTRUCTIONS, lifespan=lifespan, log_level="WARNING"
    )
    register_all(server, backend)
    return server


def main(env: Mapping[str, str] | None = None) -> int:
    """``polter terraria serve``: configuration from the environment, MCP on stdio."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="terraria: %(message)s")
    for noisy in ("httpx", "httpcore"):  # they log request URLs, and TShock's token rides in the query
        logging.getLogger(noisy).setLevel(logging.WARNING)
    backend = Backend.from_env(os.environ if env is None else env)
    server = build_server(backend)
    try:
        server.run("stdio")
    finally:
        anyio.run(backend.aclose)
    return 0
