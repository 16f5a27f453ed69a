"""``polter terraria serve`` over stdio, as the gateway runs it: the official client, a real subprocess,
a login with username and password, and nothing secret on stderr."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from backends.terraria.helpers import call, closed_port, text_of
from mcp import Client, StdioServerParameters
from mcp.client.stdio import stdio_client

from polter.backends.terraria.simulator import SimulatorServer, World


async def test_stdio_server_lists_46_tools_and_acts_on_the_world(sim: SimulatorServer, world: World,
                                                                 tmp_path: Path) -> None:
    password = world.passwords["admin"]
    params = StdioServerParameters(command=sys.executable, args=["-m", "polter", "terraria", "serve"], env={
        "TSHOCK_URL": sim.url, "TSHOCK_USERNAME": "admin", "TSHOCK_PASSWORD": password,
        "TERRARIA_WIKI_URL": f"http://127.0.0.1:{closed_port()}", "POLTER_STATE_DIR": str(tmp_path / "state"),
    })
    stderr_path = tmp_path / "stderr.txt"
    with stderr_path.open("w") as stderr:
        async with Client(stdio_client(params, errlog=stderr), cache=None) as client:
            tools = (await client.list_tools()).tools
            assert len(tools) == 46
            assert text_of(await call(client, "world_rain")) == "Rain is now falling."
            assert world.raining
            assert text_of(await call(client, "world_hardmode", enabled=True)) == "Hardmode is now on."
            assert world.hardmode
            failed = await client.call_tool("player_info", {"player": "Nobody-here"})
            assert failed.is_error and "was not found" in text_of(failed)
            token = next(t for t, data in world.tokens.items() if data.username == "admin")
    logged = stderr_path.read_text()
    assert password not in logged and token not in logged
    cached = list((tmp_path / "state" / "terraria").iterdir())  # the login's token, kept for the next run
    assert len(cached) == 1 and cached[0].read_text() == token and cached[0].stat().st_mode & 0o777 == 0o600


async def test_serve_without_configuration_says_what_is_missing(tmp_path: Path) -> None:
    result = subprocess.run([sys.executable, "-m", "polter", "terraria", "serve"], capture_output=True, text=True,
                            env={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}, stdin=subprocess.DEVNULL, timeout=60)
    assert result.returncode == 2
    assert result.stderr.strip() == ("polter: TSHOCK_URL: is not set; point it at TShock's REST API, e.g. "
                                     "http://127.0.0.1:7878")
