"""Gateway test harness: a real gateway (uvicorn on 127.0.0.1:0, in this process) over real upstream
processes, driven with the official MCP SDK client and the typed control client."""

from __future__ import annotations

import asyncio
import contextlib
import sys
import textwrap
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from polter.adapters.plugins import find_adapter
from polter.gateway.app import create_gateway
from polter.gateway.client import GatewayClient
from polter.gateway.config import GatewayConfig
from polter.gateway.core import Gateway
from polter.gateway.models import AskInfo, ElicitationInfo, GatewayEvent, PaneCreated
from polter.gateway.serve import running
from polter.servers import ServerConfig, StdioServer
from support.waiting import wait_until

FIXTURE_SERVER = Path(__file__).with_name("fixture_server.py")
FEATURES_SERVER = Path(__file__).with_name("features_server.py")

ROLES = {
    "open": """
        description = "Everything allowed"
        [servers]
        default = "allow"
        [tools]
        default = "allow"
        [skills]
        default = "allow"
    """,
    "reader": """
        description = "Read-only tools only"
        [servers]
        default = "allow"
        [tools]
        default = "deny"
        allow = ["@read-only"]
        [skills]
        default = "allow"
        deny = ["*write*"]
        ask = ["deploy"]
    """,
    "asker": """
        description = "Writing asks the human"
        [servers]
        default = "allow"
        [tools]
        default = "allow"
        ask = ["fixture/write_note", "fixture/delete_all"]
        [skills]
        default = "allow"
    """,
    "argument-asker": """
        description = "Notes about a plan ask the human, by their text"
        [servers]
        default = "allow"
        [tools]
        default = "allow"
        ask = ["fixture/write_note(text=plan*)"]
        [skills]
        default = "allow"
    """,
    "gated": """
        description = "Deleting needs the human to have said so"
        [servers]
        default = "allow"
        [tools]
        default = "allow"
        [skills]
        default = "allow"
        [gates]
        "fixture/delete_all" = ["wipe", "清空"]
    """,
    "phased": """
        description = "Research first, then act"
        [servers]
        default = "allow"
        [tools]
        default = "allow"
        [skills]
        default = "allow"
        [phases]
        research = ["@read-only"]
    """,
    "phased-careful": """
        description = "Research first; the agent asks the human before it acts"
        extends = "phased"
        [phases]
        escalate = "ask"
    """,
    "no-fixture": """
        description = "The fixture server is off limits"
        [servers]
        default = "allow"
        deny = ["fixture"]
        [tools]
        default = "allow"
        [skills]
        default = "allow"
    """,
}


def role(description: str, **kinds: dict[str, Any]) -> str:
    """A role file's text: servers, tools and skills allowed by default, ``kinds`` adding to a kind,
    e.g. ``role("Converting asks", tools={"ask": ["time/convert_time"]})``."""
    import tomli_w

    tables = {kind: {"default": "allow", **kinds.get(kind, {})} for kind in ("servers", "tools", "skills")}
    tables.update({kind: table for kind, table in kinds.items() if kind not in tables})  # [sampling], ...
    return tomli_w.dumps({"description": description, **tables})


def fixture_server(**env: str) -> StdioServer:
    return StdioServer(command=sys.executable, args=[str(FIXTURE_SERVER)], env=env)


def held_fixture_server(go: Path) -> StdioServer:
    """The fixture server, started only once the file ``go`` exists: until then, an upstream still starting."""
    wait = 'while [ ! -e "$0" ]; do sleep 0.05; done; exec "$1" "$2"'
    return StdioServer(command="/bin/sh", args=["-c", wait, str(go), sys.executable, str(FIXTURE_SERVER)])


def features_server(**options: Any) -> StdioServer:
    """The server of the protocol's other features (``support/features_server.py``); ``options`` are the
    entry's other fields (``timeout=1``)."""
    return StdioServer(command=sys.executable, args=[str(FEATURES_SERVER)], **options)


def time_server() -> StdioServer:
    return StdioServer(command=sys.executable, args=["-m", "mcp_server_time", "--local-timezone", "UTC"])


def write_roles(directory: Path, roles: dict[str, str] = ROLES) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for name, text in roles.items():
        (directory / f"{name}.toml").write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return directory


@dataclass
class Harness:
    app: Any
    gateway: Gateway
    url: str
    admin_token: str
    admin: GatewayClient
    roles_dir: Path
    state_dir: Path

    async def pane(self, role: str, title: str | None = None) -> PaneCreated:
        return await self.admin.register(role, title=title)

    @contextlib.asynccontextmanager
    async def client(
        self,
        server: str,
        token: str,
        *,
        mode: str = "legacy",
        on_message: Callable[[Any], Any] | None = None,
        **callbacks: Any,
    ) -> AsyncIterator[Client]:
        """The official SDK client on ``/mcp/<server>`` with a pane's token; ``callbacks`` are the client's own
        (``elicitation_callback=``, ``sampling_callback=``: it then declares those capabilities)."""
        http = httpx2.AsyncClient(headers={"Authorization": f"Bearer {token}"}, timeout=httpx2.Timeout(30, read=None))

        async def handler(message: Any) -> None:
            if on_message is not None:
                on_message(message)

        async with (
            http,
            Client(
                streamable_http_client(f"{self.url}/mcp/{server}", http_client=http),
                mode=mode,  # type: ignore[arg-type]
                message_handler=handler,
                **callbacks,
            ) as client,
        ):
            yield client

    def raw(self, token: str | None = None, **headers: str) -> httpx.AsyncClient:
        """A plain HTTP client on the gateway, with a bearer token when given."""
        if token is not None:
            headers["Authorization"] = f"Bearer {token}"
        return httpx.AsyncClient(base_url=self.url, headers=headers, timeout=30)


@contextlib.asynccontextmanager
async def start_gateway(
    tmp_path: Path, *, servers: dict[str, ServerConfig] | None = None, roles: dict[str, str] = ROLES, **options: Any
) -> AsyncIterator[Harness]:
    roles_dir = write_roles(tmp_path / "roles", roles)
    state_dir = options.pop("state_dir", tmp_path / "gateway-state")
    config = GatewayConfig(
        state_dir=state_dir,
        servers=servers if servers is not None else {"fixture": fixture_server()},
        roles_dirs=[roles_dir],
        **options,
    )
    app = create_gateway(config, adapters=find_adapter)  # as `polter gateway` does
    async with running(app, pane_socket=config.pane_socket) as served:
        async with GatewayClient(served.url, app.state.admin_token) as admin:
            yield Harness(app, app.state.gateway, served.url, app.state.admin_token, admin, roles_dir, state_dir)


class Controller:
    """Follows /control/events like the app does, collecting asks."""

    def __init__(self, harness: Harness) -> None:
        self.harness = harness
        self.events: list[GatewayEvent] = []

    def elicitations(self) -> list[ElicitationInfo]:
        return [ElicitationInfo.model_validate(e.data) for e in self.events if e.type == "elicitation"]

    def asks(self) -> list[AskInfo]:
        return [AskInfo.model_validate(e.data) for e in self.events if e.type == "ask"]

    def resolved(self) -> list[AskInfo]:
        return [AskInfo.model_validate(e.data) for e in self.events if e.type == "ask_resolved"]


@contextlib.asynccontextmanager
async def controller(harness: Harness) -> AsyncIterator[Controller]:
    watcher = Controller(harness)
    before = harness.gateway.events.controllers  # a shared gateway may still count an earlier test's

    async def follow() -> None:
        async for event in harness.admin.events():
            watcher.events.append(event)

    task = asyncio.create_task(follow())
    await wait_until(lambda: harness.gateway.events.controllers == before + 1, message="controller connected")
    try:
        yield watcher
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
