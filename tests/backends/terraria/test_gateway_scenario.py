"""The story the Terraria server exists to prevent, end to end: a real gateway with the bundled
Terraria roles, the MCP server as its ``terraria`` stdio upstream, and the simulator behind it.

A pane with role ``terraria-admin`` whose human typed "make it rain" can call ``world_rain``, but
its ``world_hardmode`` is refused by the keyword gate with a reason; once the human types "turn on
hardmode" the call goes to the human as an ask. ``terraria-researcher`` sees only the 17 read-only
tools and can change nothing.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from backends.terraria.helpers import READ_ONLY, closed_port, text_of
from support.gateway import controller, start_gateway
from support.waiting import wait_until

from polter.backends.terraria.simulator import SimulatorServer, World
from polter.servers import StdioServer
from polter.paths import bundled_dir

pytestmark = pytest.mark.e2e


def terraria_roles() -> dict[str, str]:
    return {path.stem: path.read_text(encoding="utf-8") for path in bundled_dir("roles").glob("terraria-*.toml")}


async def test_rain_is_allowed_hardmode_is_gated_then_asked_and_the_researcher_only_looks(tmp_path: Path) -> None:
    world = World(seed=11)
    async with SimulatorServer(world) as sim:
        upstream = StdioServer(command=sys.executable, args=["-m", "polter", "terraria", "serve"], env={
            "TSHOCK_URL": sim.url, "TSHOCK_TOKEN": sim.token, "TERRARIA_WIKI_URL": f"http://127.0.0.1:{closed_port()}"})
        async with start_gateway(tmp_path, servers={"terraria": upstream}, roles=terraria_roles()) as harness, \
                controller(harness) as control:
            admin = await harness.pane("terraria-admin", title="admin")
            await harness.admin.input(admin.pane.id, "make it rain")
            async with harness.client("terraria", admin.token) as client:
                assert len((await client.list_tools()).tools) == 46

                rain = await client.call_tool("world_rain", {})
                assert not rain.is_error, text_of(rain)
                assert world.raining

                refused = await client.call_tool("world_hardmode", {"enabled": True})
                assert refused.is_error
                assert 'gates["terraria/world_hardmode"]' in text_of(refused), text_of(refused)
                assert "only when the human has asked for it" in text_of(refused)  # the reason, for the model
                assert not world.hardmode and control.asks() == []  # refused by code, never asked, never reached TShock

                await harness.admin.input(admin.pane.id, "turn on hardmode")
                declined = asyncio.create_task(client.call_tool("world_hardmode", {"enabled": True}))
                await wait_until(control.asks, message="the hardmode call to be asked")
                asks = control.asks()
                assert (asks[0].role, asks[0].server, asks[0].name) == ("terraria-admin", "terraria", "world_hardmode")
                assert asks[0].arguments == {"enabled": True}
                await harness.admin.answer(asks[0].id, "deny")
                assert (await declined).is_error and not world.hardmode

                approved = asyncio.create_task(client.call_tool("world_hardmode", {"enabled": True}))
                await wait_until(lambda: len(control.asks()) == 2, message="the second hardmode call to be asked")
                await harness.admin.answer(control.asks()[1].id, "allow_once")
                assert text_of(await approved) == "Hardmode is now on."
                assert world.hardmode

            researcher = await harness.pane("terraria-researcher", title="researcher")
            async with harness.client("terraria", researcher.token) as client:
                assert {tool.name for tool in (await client.list_tools()).tools} == READ_ONLY
                status = await client.call_tool("server_status", {})
                assert not status.is_error and "Polter Test Server" in text_of(status)
                denied = await client.call_tool("world_rain", {"enabled": False})
                assert denied.is_error and world.raining
