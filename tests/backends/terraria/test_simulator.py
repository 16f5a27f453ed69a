"""The simulator behaves like TShock 5.2's REST API where a client can tell the difference."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import httpx

from polter.backends.terraria.simulator import ServerConfig, SimulatorServer, World


async def rawcmd(rest: httpx.AsyncClient, token: str, cmd: str) -> list[str]:
    reply = await rest.get("/v3/server/rawcmd", params={"cmd": cmd, "token": token})
    assert reply.status_code == 200
    return reply.json()["response"]


async def test_envelope_has_string_status_equal_to_http_status_and_pretty_json(rest: httpx.AsyncClient) -> None:
    reply = await rest.get("/v2/server/status")
    assert reply.status_code == 200
    assert reply.headers["content-type"] == "application/json; charset=utf-8"
    assert reply.headers["server"] == "TShockAPI/5.2.0.0"
    body = reply.json()
    assert body["status"] == "200" and isinstance(body["port"], int)
    assert reply.text.startswith('{\n  "status": "200",')
    assert body["uptime"].count(":") == 2 and "." in body["uptime"]

    missing = await rest.get("/v2/server/nothing")
    assert missing.status_code == 404 and missing.json() == {
        "status": "404",
        "error": "Specified API endpoint doesn't exist. Refer to the documentation for a list of valid endpoints.",
    }


async def test_token_rules_401_403_and_permissions(rest: httpx.AsyncClient, sim: SimulatorServer,
                                                   world: World) -> None:
    no_token = await rest.get("/world/meteor")
    assert no_token.status_code == 401
    assert no_token.json()["error"] == "Not authorized. The specified API endpoint requires a token."
    bad = await rest.get("/world/meteor", params={"token": "F" * 64})
    assert bad.status_code == 403 and "provided token was not valid" in bad.json()["error"]

    login = await rest.get("/v2/token/create", params={"username": "restbot", "password": world.passwords["restbot"]})
    token = login.json()["token"]
    assert len(token) == 64 and token == token.upper()
    denied = await rest.get("/world/meteor", params={"token": token})
    assert denied.status_code == 403
    assert denied.json()["error"] == 'Not authorized. User "restbot" has no access to use the specified API endpoint.'
    assert (await rest.get("/v2/users/list", params={"token": token})).status_code == 200  # restbot may view users

    del world.groups["restbot"]
    gone = await rest.get("/v2/users/list", params={"token": token})
    assert gone.status_code == 403 and "group changes" in gone.json()["error"]
    assert token not in world.tokens

    assert (await rest.post("/world/meteor", data={"token": sim.token})).json()["response"] == "Meteor has been spawned"
    assert world.meteors == 1


async def test_login_rate_limit_lets_about_three_logins_a_minute(rest: httpx.AsyncClient, world: World) -> None:
    params = {"username": "admin", "password": world.passwords["admin"]}
    codes = [(await rest.get("/v2/token/create", params=params)).status_code for _ in range(5)]
    assert codes == [200, 200, 200, 403, 403]
    wrong = await rest.get("/v2/token/create", params={"username": "admin", "password": "nope"})
    assert wrong.json()["error"] == ("Username or password may be incorrect or this account may not have "
                                     "sufficient privileges.")


async def test_login_without_a_password_is_a_500_like_tshocks(rest: httpx.AsyncClient) -> None:
    no_password = await rest.get("/v2/token/create", params={"username": "admin"})
    assert no_password.status_code == 500 and no_password.json()["error"] == "Internal server error."


async def test_rate_bucket_drains_over_time() -> None:
    now = [1000.0]
    world = World(seed=1, config=ServerConfig(rest_bucket_interval_seconds=60), clock=lambda: now[0])
    async with SimulatorServer(world) as sim, httpx.AsyncClient(base_url=sim.url) as rest:
        params = {"username": "admin", "password": world.passwords["admin"]}
        assert [(await rest.get("/v2/token/create", params=params)).status_code for _ in range(4)][-1] == 403
        now[0] += 60 * 4
        assert (await rest.get("/v2/token/create", params=params)).status_code == 200


async def test_rawcmd_strips_first_character_and_hides_broadcasts(rest: httpx.AsyncClient, sim: SimulatorServer,
                                                                 world: World) -> None:
    assert await rawcmd(rest, sim.token, "time noon") == [
        "Invalid command entered. Type /help for a list of valid commands."]
    assert await rawcmd(rest, sim.token, "/time noon") == []
    assert world.broadcasts[-1] == "polter-sim set the time to 12:00."
    assert (world.time, world.daytime) == (27000.0, True)
    assert await rawcmd(rest, sim.token, "/time") == ["The current time is 12:00."]
    assert await rawcmd(rest, sim.token, "/butcher") == []
    assert await rawcmd(rest, sim.token, ".butcher") == ["You butchered 0 NPCs."]
    assert await rawcmd(rest, sim.token, "/version") == ["TShock: [c/AAAAFF:5.2.0.0] [c/FFAAAA:Intensity]."]
    assert await rawcmd(rest, sim.token, "/ban add acc:bob") == ["Command failed, check logs for more details."]
    missing = await rest.get("/v3/server/rawcmd", params={"token": sim.token})
    assert missing.status_code == 400 and missing.json()["error"] == "Missing or empty cmd parameter"


async def test_ingame_only_commands_refuse_unless_the_demo_flag_is_set(rest: httpx.AsyncClient,
                                                                      sim: SimulatorServer) -> None:
    for command in ("/spawnboss eye", "/spawnmob zombie 3", "/tp Alice Bob", "/item zenith"):
        assert await rawcmd(rest, sim.token, command) == ["You must use this command in-game."]
    world = World(seed=1, config=ServerConfig(allow_ingame_only_commands=True))
    async with SimulatorServer(world) as demo, httpx.AsyncClient(base_url=demo.url) as client:
        assert await rawcmd(client, demo.token, "/spawnboss eye") == []
        assert [npc.name for npc in world.spawned] == ["Eye of Cthulhu"]


async def test_quirks_bloodmoon_v3_butcher_and_no_player_ban(rest: httpx.AsyncClient, sim: SimulatorServer,
                                                            world: World) -> None:
    token = {"token": sim.token}
    v3 = await rest.get("/v3/world/bloodmoon", params={**token, "state": "true"})
    assert v3.json()["response"] == "Bloodmoon state: Disabled" and not world.bloodmoon
    v1 = await rest.get("/world/bloodmoon/true", params=token)
    assert v1.json() == {"status": "200", "response": "Blood Moon has been set to True",
                         "upgrade": "/v3/world/bloodmoon"}
    assert world.bloodmoon
    assert (await rest.get("/world/bloodmoon/True", params=token)).status_code == 200
    assert (await rest.get("/World/bloodmoon/true", params=token)).status_code == 404  # templated: case-sensitive
    butcher = await rest.get("/v2/world/butcher", params=token)
    assert butcher.status_code == 400 and butcher.json()["error"] == "Missing or invalid killfriendly parameter"
    assert (await rest.get("/players/ban", params=token)).status_code == 404
    assert (await rest.get("/v2/players/ban", params=token)).status_code == 404
    assert (await rest.get("/V2/WORLD/SAVE/", params=token)).json()["response"] == "World saved"
    read = await rest.get("/players/read", params={**token, "player": "Alice"})
    assert read.json()["upgrade"] == "v4/players/read" and "inventory" in read.json()


async def test_player_filters_only_work_on_string_fields(rest: httpx.AsyncClient, sim: SimulatorServer) -> None:
    listed = await rest.get("/v2/players/list", params={"group": "admin", "token": sim.token})
    assert [p["nickname"] for p in listed.json()["players"]] == ["Alice"]
    by_team = await rest.get("/v2/players/list", params={"team": "0", "token": sim.token})
    assert by_team.json()["players"] == []


def test_seeded_worlds_are_identical_and_seeds_differ() -> None:
    first, second, other = World(seed=5), World(seed=5), World(seed=6)
    assert first.application_token == second.application_token != other.application_token
    assert first.passwords == second.passwords
    assert [p.ip for p in first.players] == [p.ip for p in second.players]


def test_sim_command_prints_two_pasteable_lines() -> None:
    process = subprocess.Popen([sys.executable, "-m", "polter", "terraria", "sim", "--seed", "3"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        url_line = process.stdout.readline().strip()  # type: ignore[union-attr]
        token_line = process.stdout.readline().strip()  # type: ignore[union-attr]
        assert url_line.startswith("TSHOCK_URL=http://127.0.0.1:")
        assert token_line == f"TSHOCK_TOKEN={World(seed=3).application_token}"
        url = url_line.split("=", 1)[1]
        token = token_line.split("=", 1)[1]
        deadline = time.monotonic() + 10
        reply = httpx.get(f"{url}/tokentest", params={"token": token}, timeout=deadline - time.monotonic())
        assert json.loads(reply.text)["associateduser"] == "polter-sim"
    finally:
        process.terminate()
        process.wait(timeout=10)
    notes = process.stderr.read()  # type: ignore[union-attr]
    assert "companion plugin's /polter/v1/world (stock TShock has no such route; --vanilla leaves it out)" in notes


async def test_only_the_companion_plugin_adds_a_route_stock_tshock_lacks(rest: httpx.AsyncClient,
                                                                         sim: SimulatorServer) -> None:
    assert (await rest.get("/polter/v1/world", params={"token": sim.token})).json()["hardmode"] is False
    world = World(seed=1, config=ServerConfig(companion_plugin=False))
    async with SimulatorServer(world) as vanilla, httpx.AsyncClient(base_url=vanilla.url) as stock:
        reply = await stock.get("/polter/v1/world", params={"token": vanilla.token})
        assert reply.status_code == 404 and reply.json()["error"].startswith("Specified API endpoint doesn't exist")
        for missing in ("/v2/world/read", "/v2/server/rawcmd", "/v2/players/ban", "/players/ban", "/server/reload"):
            assert (await stock.get(missing, params={"token": vanilla.token})).status_code == 404, missing


async def test_status_routes_need_a_token_only_when_configured() -> None:
    world = World(seed=1, config=ServerConfig(token_endpoint_authentication=True))
    async with SimulatorServer(world) as sim, httpx.AsyncClient(base_url=sim.url) as rest:
        assert (await rest.get("/v2/server/status")).status_code == 401
        assert (await rest.get("/v3/server/motd", params={"token": sim.token})).json()["motd"][1] == "Be kind."


async def test_jsonp_plus_as_space_and_form_bodies(rest: httpx.AsyncClient, sim: SimulatorServer,
                                                   world: World) -> None:
    wrapped = await rest.get("/tokentest", params={"token": sim.token, "jsonp": "cb"})
    assert wrapped.text.startswith("cb({") and wrapped.text.endswith("});")
    assert (await rest.get(f"/v3/server/rawcmd?token={sim.token}&cmd=/time+noon")).json()["response"] == []
    assert world.clock_text() == "12:00"
    posted = await rest.post("/v3/server/rawcmd", data={"token": sim.token, "cmd": "/time"})
    assert posted.json()["response"] == ["The current time is 12:00."]


def test_sim_command_names_a_busy_port() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "polter", "terraria", "sim", "--port", str(port)],
                                capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr == f"polter: --port: cannot listen on 127.0.0.1:{port}: Address already in use\n"
