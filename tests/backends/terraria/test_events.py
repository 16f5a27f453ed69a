"""Event intake: a plugin POSTs game events to 127.0.0.1; the model reads them as a tool and a resource."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import httpx
import pytest
from backends.terraria.helpers import call, data, hosted
from mcp import Client
from mcp.types import TextResourceContents

from polter.backends.terraria.client import TShockClient, TShockSettings
from polter.backends.terraria.events import EventLog
from polter.backends.terraria.server import Backend, build_server
from polter.backends.terraria.simulator import SimulatorServer, World
from polter.backends.terraria.wiki import WikiClient
from polter.errors import ConfigError

SECRET = "plugin-shared-secret"


@pytest.fixture
async def events_backend() -> AsyncIterator[Backend]:
    backend = Backend(TShockClient(TShockSettings(url="http://127.0.0.1:9", token="events-test-token")),
                      WikiClient(), events=EventLog(capacity=3), events_port=0, events_secret=SECRET)
    yield backend
    await backend.aclose()


@pytest.fixture
async def events_client(events_backend: Backend) -> AsyncIterator[Client]:
    async with hosted(Client(build_server(events_backend), cache=None)) as client:
        yield client


async def post(url: str, payload: object, *, secret: str | None = SECRET, **headers: str) -> httpx.Response:
    auth = {"Authorization": f"Bearer {secret}"} if secret else {}
    async with httpx.AsyncClient() as http:
        return await http.post(url, content=json.dumps(payload), headers={"Content-Type": "application/json",
                                                                         **auth, **headers})


async def test_posted_events_show_up_in_the_tool_and_the_resource(events_client: Client,
                                                                   events_backend: Backend) -> None:
    url = events_backend.events_url
    assert url is not None and url.startswith("http://127.0.0.1:")
    reply = await post(url, [{"kind": "join", "player": "Alice"},
                             {"kind": "chat", "player": "Alice", "message": "can someone make it rain?"}])
    assert reply.status_code == 202 and reply.json() == {"accepted": 2}
    await post(url, {"kind": "boss_kill", "player": "Bob", "details": {"boss": "King Slime", "npc_id": 50}})

    recent = await data(events_client, "recent_events")
    assert [e["kind"] for e in recent["events"]] == ["join", "chat", "boss_kill"]
    assert recent["events"][2]["details"] == {"boss": "King Slime", "npc_id": 50}
    chats = await data(events_client, "recent_events", kinds=["chat"])
    assert [e["message"] for e in chats["events"]] == ["can someone make it rain?"]

    resource = await events_client.read_resource("terraria://events/recent")
    content = resource.contents[0]
    assert isinstance(content, TextResourceContents) and content.mime_type == "application/json"
    assert [e["kind"] for e in json.loads(content.text)] == ["join", "chat", "boss_kill"]

    await post(url, {"kind": "death", "player": "Bob", "message": "Bob was slain by a Zombie"})
    capped = await data(events_client, "recent_events", limit=10)
    assert [e["kind"] for e in capped["events"]] == ["chat", "boss_kill", "death"] and capped["received_total"] == 4


async def test_intake_refuses_bad_requests(events_client: Client, events_backend: Backend) -> None:
    url = events_backend.events_url
    assert url is not None
    assert (await post(url, {"kind": "chat"}, secret=None)).status_code == 401
    assert (await post(url, {"kind": "chat"}, secret="wrong")).status_code == 401
    async with httpx.AsyncClient() as http:
        form = await http.post(url, data={"kind": "chat"}, headers={"Authorization": f"Bearer {SECRET}"})
    assert form.status_code == 415
    invalid = await post(url, {"kind": "dance", "player": "Alice"})
    assert invalid.status_code == 422 and "kind" in invalid.json()["error"]
    assert (await post(url, {"kind": "chat", "extra": 1})).status_code == 422
    assert (await post(url, {"kind": "chat"}, Host="attacker.example:80")).status_code == 421
    assert (await data(events_client, "recent_events"))["count"] == 0


async def test_without_the_intake_there_is_no_events_tool(client: Client) -> None:
    names = {tool.name for tool in (await client.list_tools()).tools}
    assert "recent_events" not in names and len(names) == 46


def test_events_port_is_validated() -> None:
    env = {"TSHOCK_URL": "http://127.0.0.1:7878", "TSHOCK_TOKEN": "abcd", "TERRARIA_EVENTS_PORT": "http"}
    with pytest.raises(ConfigError, match="^TERRARIA_EVENTS_PORT: must be a port number"):
        Backend.from_env(env)


async def test_the_simulator_posts_events_like_the_companion_plugin(sim: SimulatorServer, world: World) -> None:
    backend = Backend(TShockClient(TShockSettings(url=sim.url, token=sim.token)), WikiClient(),
                      events=EventLog(), events_port=0, events_secret=SECRET)
    async with Client(build_server(backend), cache=None) as client:
        world.config.events_url, world.config.events_secret = backend.events_url, SECRET
        await call(client, "world_hardmode", enabled=True)
        await call(client, "player_kill", player="Bob")
        await call(client, "player_kick", player="Alice", reason="afk")
        recent = await data(client, "recent_events")
        assert [(e["kind"], e["player"]) for e in recent["events"]] == [
            ("world", None), ("death", "Bob"), ("leave", "Alice")]
        assert recent["events"][0]["details"] == {"hardmode": True}
        assert recent["events"][1]["message"] == "Bob was slain by Server Admin."
    await backend.aclose()
