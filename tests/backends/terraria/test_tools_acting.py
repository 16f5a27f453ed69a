"""The 29 acting tools, through the official MCP client, against the simulator: each changes the
simulated server the way the tool says, and TShock's refusals come back as errors."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from backends.terraria.helpers import call, fail, text_of
from mcp import Client

from polter.backends.terraria.client import TShockClient, TShockSettings
from polter.backends.terraria.server import Backend, build_server
from polter.backends.terraria.simulator import ServerConfig, SimulatorServer, World, rest
from polter.backends.terraria.simulator.envelope import Endpoint, ok
from polter.backends.terraria.text import ticks_to_datetime
from polter.backends.terraria.wiki import WikiClient


async def test_server_broadcast_save_reload_and_stop(client: Client, world: World) -> None:
    await call(client, "server_broadcast", message="Server restarts in 5 minutes")
    assert world.broadcasts[-1] == "Server restarts in 5 minutes"
    assert "Server restarts in 5 minutes" in world.player("Bob").messages  # type: ignore[union-attr]
    await call(client, "server_save")
    assert world.saves == 1
    await call(client, "server_reload")
    assert world.reloads == 1
    stopped = await call(client, "server_stop", message="maintenance", save=False)
    assert "shutting down" in text_of(stopped) and "without saving" in text_of(stopped)
    assert not world.running and world.players == [] and world.saves == 1


async def test_server_raw_command(client: Client, world: World) -> None:
    who = text_of(await call(client, "server_raw_command", command="/who"))
    assert who == "Online Players (3/8)\nAlice, Bob, Bobby"  # colour tags stripped
    quiet = text_of(await call(client, "server_raw_command", command="time 1:30"))  # a missing / is added
    assert "printed nothing" in quiet and world.clock_text() == "1:30"
    assert "does not know this command" in await fail(client, "server_raw_command", command="/nosuchcommand")


async def test_world_time_set(client: Client, world: World) -> None:
    assert text_of(await call(client, "world_time_set", time="midnight")) == "The time is now 00:00 (night)."
    assert (world.time, world.daytime) == (16200.0, False)
    assert text_of(await call(client, "world_time_set", time="7:45")) == "The time is now 07:45 (day)."
    assert "invalid arguments: time" in await fail(client, "world_time_set", time="25:00")


async def test_world_rain_reads_the_weather_first(client: Client, world: World) -> None:
    assert text_of(await call(client, "world_rain")) == "Rain is now falling."
    assert world.raining and world.broadcasts[-1] == "polter-sim caused it to rain."
    assert "already falling" in text_of(await call(client, "world_rain", enabled=True))
    assert world.raining
    assert "cannot be activated during normal rain" in await fail(client, "world_rain", slime=True)
    await call(client, "world_rain", enabled=False)
    assert not world.raining
    assert text_of(await call(client, "world_rain", slime=True)) == "Slime rain is now falling."
    assert world.slime_rain


async def test_world_wind_and_bloodmoon(client: Client, world: World) -> None:
    await call(client, "world_wind", speed=-30)
    assert world.wind == -0.5 and world.broadcasts[-1] == "polter-sim changed the wind speed to -30."
    assert text_of(await call(client, "world_bloodmoon", enabled=True)) == "The blood moon is now up."
    assert world.bloodmoon
    await call(client, "world_bloodmoon", enabled=False)
    assert not world.bloodmoon


async def test_world_event(client: Client, world: World) -> None:
    assert text_of(await call(client, "world_event", event="meteor")) == "Meteor has been spawned"
    assert world.meteors == 1
    assert text_of(await call(client, "world_event", event="eclipse")) == "Started an eclipse."
    assert world.eclipse
    await call(client, "world_event", event="fullmoon")
    assert world.full_moon
    await call(client, "world_event", event="sandstorm")
    assert world.sandstorm
    assert text_of(await call(client, "world_event", event="lanternsnight")) == "Lanterns are now up."
    assert world.lantern_night


async def test_world_invasion_starts_and_stops(client: Client, world: World) -> None:
    assert "No invasion is running" in text_of(await call(client, "world_invasion"))
    await call(client, "world_invasion", type="pirates")
    assert world.invasion_type == "pirates" and world.invasion_size > 0
    assert "already running" in await fail(client, "world_invasion", type="goblins")
    assert world.invasion_type == "pirates"
    await call(client, "world_invasion")
    assert world.invasion_type is None and world.invasion_size == 0
    await call(client, "world_invasion", type="pumpkinmoon", wave=3)
    assert world.invasion_type == "pumpkinmoon"


async def test_world_hardmode_takes_the_desired_state(client: Client, world: World) -> None:
    assert "already off" in text_of(await call(client, "world_hardmode", enabled=False))
    assert not world.hardmode  # the toggle was not pressed
    assert text_of(await call(client, "world_hardmode", enabled=True)) == "Hardmode is now on."
    assert world.hardmode
    assert "already on" in text_of(await call(client, "world_hardmode", enabled=True))
    assert world.hardmode
    await call(client, "world_hardmode", enabled=False)
    assert not world.hardmode


async def test_world_hardmode_refuses_when_the_state_cannot_be_read() -> None:
    world = World(seed=7, config=ServerConfig(companion_plugin=False))  # vanilla TShock: no hardmode read
    async with SimulatorServer(world) as vanilla:
        backend = Backend(TShockClient(TShockSettings(url=vanilla.url, token=vanilla.token)), WikiClient())
        async with Client(build_server(backend), cache=None) as plain:
            error = await fail(plain, "world_hardmode", enabled=True)
            assert "does not report it" in error and "Nothing was changed" in error
            info = (await plain.call_tool("world_info", {})).structured_content
            assert info is not None and info["hardmode"] is None
            assert "toggled" in text_of(await call(plain, "world_rain"))  # weather unknown: says it toggled
        await backend.aclose()
    assert not world.hardmode and world.raining


async def test_a_plugin_that_reports_only_hardmode(monkeypatch: pytest.MonkeyPatch) -> None:
    """The contract requires only ``hardmode``: without a weather field the rain toggles and says so."""
    monkeypatch.setattr(rest, "PLUGIN_ENDPOINTS", [Endpoint("/polter/v1/world", lambda c: ok(hardmode=c.world.hardmode))])
    world = World(seed=7)
    async with SimulatorServer(world) as sim:
        backend = Backend(TShockClient(TShockSettings(url=sim.url, token=sim.token)), WikiClient())
        async with Client(build_server(backend), cache=None) as minimal:
            assert "toggled" in text_of(await call(minimal, "world_rain", enabled=False))  # was dry: now raining
            assert world.raining
            assert text_of(await call(minimal, "world_hardmode", enabled=True)) == "Hardmode is now on."
            assert "already on" in text_of(await call(minimal, "world_hardmode", enabled=True))
        await backend.aclose()
    assert world.hardmode


async def test_world_butcher(client: Client, world: World) -> None:
    assert text_of(await call(client, "world_butcher")) == "4 NPCs have been killed."
    assert sorted(n.name for n in world.npcs) == ["Bunny", "Guide", "Merchant", "Nurse", "Target Dummy"]
    await call(client, "world_butcher", include_friendly=True)
    assert sorted(n.name for n in world.npcs) == ["Guide", "Merchant", "Nurse"]
    assert "not a valid NPC" in await fail(client, "world_butcher", npc="Zombie")


async def test_world_butcher_one_type(client: Client, world: World) -> None:
    assert text_of(await call(client, "world_butcher", npc="Zombie")) == "Butchered 2 NPCs."
    assert all(n.name != "Zombie" for n in world.npcs) and any(n.name == "Blue Slime" for n in world.npcs)


async def test_give_item(client: Client, world: World) -> None:
    alice = world.player("Alice")
    assert alice is not None
    assert text_of(await call(client, "give_item", player="Alice", item="天顶剑")) == "Gave Alice 1 Zenith."
    assert alice.count(4956) == 1
    await call(client, "give_item", player="ali", item="Dirt Block", amount=250, prefix="Legendary")
    assert alice.count(2) == 250
    await call(client, "give_item", player="Alice", item="8", amount=1)
    assert alice.count(8) == 100
    assert "Invalid item type" in await fail(client, "give_item", player="Alice", item="definitely not an item")
    assert "Invalid player" in await fail(client, "give_item", player="Zed", item="Torch")


async def test_player_kick(client: Client, world: World) -> None:
    assert text_of(await call(client, "player_kick", player="Bobby", reason="afk")) == "Player Bobby was kicked"
    assert world.player("Bobby") is None and world.log[-1] == "Bobby was kicked: afk"
    assert "matches" not in await fail(client, "player_kick", player="Bobby")


async def test_player_ban_by_account_resolves_online_players_and_kicks(client: Client, world: World) -> None:
    reply = text_of(await call(client, "player_ban", target="Bob", reason="griefing", duration="1d12h"))
    assert reply.startswith("Ban added. Ticket number: 3") and "acc:bob" in reply
    ban = world.bans[-1]
    assert (ban.identifier, ban.reason, ban.banning_user) == ("acc:bob", "griefing", "polter-sim")
    end = ticks_to_datetime(ban.end_ticks)
    assert end is not None and abs(end - (datetime.now(UTC) + timedelta(hours=36))) < timedelta(minutes=2)
    assert world.player("Bob") is None  # kicked
    assert "current ban for this identifier already exists" in await fail(client, "player_ban", target="bob")


async def test_player_ban_by_ip_name_and_uuid(client: Client, world: World) -> None:
    alice_ip = world.player("Alice").ip  # type: ignore[union-attr]
    await call(client, "player_ban", target="Alice", kind="ip")
    assert world.bans[-1].identifier == f"ip:{alice_ip}" and world.player("Alice") is None
    await call(client, "player_ban", target="Griefer2", kind="name")
    assert world.bans[-1].identifier == "name:Griefer2"
    await call(client, "player_ban", target="0123ABCD", kind="uuid", duration="30m")
    assert world.bans[-1].identifier == "uuid:0123ABCD"
    assert "not logged in" in await fail(client, "player_ban", target="Bobby")
    await call(client, "player_ban", target="bobb", kind="name")  # an online player's prefix: the full name
    assert world.bans[-1].identifier == "name:Bobby" and world.player("Bobby") is None
    assert "doesn't exist" in await fail(client, "player_ban", target="ghost")
    assert "not like 7d" in await fail(client, "player_ban", target="x", kind="name", duration="soon")


async def test_player_unban(client: Client, world: World) -> None:
    assert text_of(await call(client, "player_unban", ticket=1)) == "Ban removed."
    ended = ticks_to_datetime(world.bans[0].end_ticks)
    assert ended is not None and ended <= world.now()  # expired, kept on record
    await call(client, "player_unban", ticket=2, full_delete=True)
    assert [b.ticket for b in world.bans] == [1]
    assert "Failed to remove ban" in await fail(client, "player_unban", ticket=42)


async def test_player_mute(client: Client, world: World) -> None:
    assert text_of(await call(client, "player_mute", player="Bob")) == "Player Bob has been muted"
    assert world.player("Bob").muted  # type: ignore[union-attr]
    await call(client, "player_mute", player="Bob", muted=False)
    assert not world.player("Bob").muted  # type: ignore[union-attr]


async def test_player_kill_and_heal(client: Client, world: World) -> None:
    alice = world.player("Alice")
    assert alice is not None and alice.hp == 250
    assert text_of(await call(client, "player_heal", player="Alice", amount=100)) == "Healed Alice for 100 HP."
    assert alice.hp == 350
    await call(client, "player_heal", player="Alice")
    assert alice.hp == alice.max_hp
    assert text_of(await call(client, "player_kill", player="Alice", from_name="Lightning")) == "Player Alice was killed"
    assert alice.dead and alice.messages[-1] == "Lightning just killed you!"
    assert "can't heal a dead player" in await fail(client, "player_heal", player="Alice")


async def test_player_godmode_takes_a_desired_state(client: Client, world: World) -> None:
    bob = world.player("Bob")
    assert bob is not None
    assert text_of(await call(client, "player_godmode", player="Bob")) == "Bob is now in god mode."
    assert bob.godmode
    assert text_of(await call(client, "player_godmode", player="Bob", enabled=True)) == "Bob is now in god mode."
    assert bob.godmode
    await call(client, "player_godmode", player="Bob", enabled=False)
    assert not bob.godmode


async def test_player_buff(client: Client, world: World) -> None:
    reply = text_of(await call(client, "player_buff", player="Bob", buff="ironskin", seconds=120))
    assert reply == "You have buffed Bob with Ironskin (Increase defense by 8) for 120 seconds!"
    assert world.player("Bob").buffs == {5: 120}  # type: ignore[union-attr]
    assert "Unable to find any buff" in await fail(client, "player_buff", player="Bob", buff="flying pigs")


async def test_player_teleport(client: Client, world: World) -> None:
    assert text_of(await call(client, "player_teleport", player="Bob", warp="dungeon")) == "You warped Bob to dungeon."
    bob = world.player("Bob")
    assert bob is not None and (bob.tile_x, bob.tile_y) == (1200, 500)
    assert "was not found" in await fail(client, "player_teleport", player="Bob", warp="moon")


async def test_npc_spawn_is_refused_by_vanilla_tshock(client: Client, world: World) -> None:
    error = await fail(client, "npc_spawn", npc="eye", boss=True)
    assert "You must use this command in-game." in error and "never over REST" in error
    assert world.spawned == []


async def test_npc_spawn_with_the_demo_flag(client: Client, world: World) -> None:
    world.config.allow_ingame_only_commands = True
    await call(client, "npc_spawn", npc="zombie", amount=3)
    await call(client, "npc_spawn", npc="king", boss=True)
    assert [n.name for n in world.spawned] == ["Zombie", "Zombie", "Zombie", "King Slime"]


async def test_region_protect_allow_and_delete(client: Client, world: World) -> None:
    arena = next(r for r in world.regions if r.name == "arena")
    assert text_of(await call(client, "region_protect", region="arena", protected=True)) == \
        "Marked region arena as protected."
    assert arena.protected
    await call(client, "region_allow", region="arena", user="bob")
    await call(client, "region_allow", region="arena", group="admin")
    assert arena.users == ["bob"] and arena.groups == ["vip", "admin"]
    await call(client, "region_allow", region="arena", group="vip", allow=False)
    await call(client, "region_allow", region="arena", user="bob", allow=False)
    assert arena.users == [] and arena.groups == ["admin"]
    assert "exactly one of user or group" in await fail(client, "region_allow", region="arena")
    assert "Player ghost not found" in await fail(client, "region_allow", region="arena", user="ghost")
    assert text_of(await call(client, "region_delete", region="arena")) == 'Deleted region "arena".'
    assert [r.name for r in world.regions] == ["spawn", "alice-house"]
    assert "Could not find the region" in await fail(client, "region_delete", region="arena")


async def test_group_permissions(client: Client, world: World) -> None:
    reply = text_of(await call(client, "group_permissions", group="vip", add=["tshock.heal", "tshock.godmode"],
                               remove=["tshock.reservedslot"]))
    assert reply == "Group vip now has: tshock.admin.noban, tshock.heal, tshock.godmode."
    assert world.groups["vip"].permissions == ["tshock.admin.noban", "tshock.heal", "tshock.godmode"]
    assert "doesn't exist" in await fail(client, "group_permissions", group="builders", add=["tshock.world.modify"])
    await call(client, "group_permissions", group="builders", add=["tshock.world.modify"], create_if_missing=True)
    assert world.groups["builders"].permissions == ["tshock.world.modify"]
    assert "invalid arguments" in await fail(client, "group_permissions", group="vip", add=["bad perm; rm"])


async def test_user_set_group_and_password(client: Client, world: World) -> None:
    reply = text_of(await call(client, "user_set_group", user="bob", group="vip", password="n3w-secret"))
    assert reply == "bob: Group updated successfully; Password updated successfully."
    assert world.accounts["bob"].group == "vip" and world.player("Bob").group == "vip"  # type: ignore[union-attr]
    assert world.accounts["bob"].password_hash == World.hash_password("n3w-secret")
    assert "n3w-secret" not in reply
    assert "does not exist" in await fail(client, "user_set_group", user="bob", group="wizards")
