"""Fixtures for the Terraria backend: a simulator served on 127.0.0.1 (port 0) per test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest
from backends.terraria.helpers import closed_port, hosted
from mcp import Client

from polter.backends.terraria.client import TShockClient, TShockSettings
from polter.backends.terraria.server import Backend, build_server
from polter.backends.terraria.simulator import SimulatorServer, World
from polter.backends.terraria.wiki import WikiClient


@pytest.fixture
def world() -> World:
    return World(seed=7)


@pytest.fixture
async def sim(world: World) -> AsyncIterator[SimulatorServer]:
    async with SimulatorServer(world) as server:
        yield server


@pytest.fixture
async def rest(sim: SimulatorServer) -> AsyncIterator[httpx.AsyncClient]:
    """A raw HTTP client on the simulator, for checking its REST surface."""
    async with httpx.AsyncClient(base_url=sim.url) as client:
        yield client


@pytest.fixture
async def backend(sim: SimulatorServer) -> AsyncIterator[Backend]:
    """The MCP server's backend on the simulator's application token; the wiki points at a closed port."""
    settings = TShockSettings(url=sim.url, token=sim.token)
    made = Backend(tshock=TShockClient(settings), wiki=WikiClient(f"http://127.0.0.1:{closed_port()}", min_interval=0))
    yield made
    await made.aclose()


@pytest.fixture
async def client(backend: Backend) -> AsyncIterator[Client]:
    """The official MCP client, connected in-process to the Terraria server.

    The client lives in its own task: anyio cancel scopes must be left in the task that entered
    them, and pytest-asyncio tears fixtures down in another task than it set them up in.
    """
    async with hosted(Client(build_server(backend), cache=None)) as connected:
        yield connected
