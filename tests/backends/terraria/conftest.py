"""Fixtures for the Terraria backend: a simulator served on 127.0.0.1 (port 0) per test."""

from __future__ import annotations

from collections.abc import AsyncIterator

import httpx
import pytest

from polter.backends.terraria.simulator import ServerConfig, SimulatorServer, World


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


def vanilla_config(**overrides: object) -> ServerConfig:
    return ServerConfig(companion_plugin=False, **overrides)  # type: ignore[arg-type]
