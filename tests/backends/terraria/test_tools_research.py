"""The 17 read-only tools, through the official MCP client, against the simulator: each reports what
the simulated server holds, and none of them changes it."""

from __future__ import annotations

import copy

from backends.terraria.helpers import data, fail
from mcp import Client

from polter.backends.terraria.simulator import World
from polter.backends.terraria.simulator.world import ItemStack


def snapshot(world: World) -> dict[str, object]:
    state = {k: v for k, v in vars(world).items() if k not in ("rng", "clock", "rate_buckets", "_bucket_drained_at")}
    return copy.deepcopy(state)


async def test_research_tools_change_nothing(client: Client, world: World) -> None:
    before = snapshot(world)
    for tool, arguments in [
        ("server_status", {}), ("server_info", {}), ("server_motd", {}), ("world_info", {}), ("player_list", {}),
        ("player_info", {"player": "Alice"}), ("user_list", {}), ("user_info", {"user": "alice"}),
        ("ban_list", {}), ("ban_info", {"ticket": 1}), ("group_list", {}), ("group_info", {"group": "admin"}),
        ("region_list", {}), ("region_info", {"region": "spawn"}), ("warp_list", {}),
        ("item_lookup", {"name_or_id": "Zenith"}),
    ]:
        await data(client, tool, **arguments)
    assert snapshot(world) == before


async def test_server_status_info_and_motd(client: Client, world: World) -> None:
    status = await data(client, "server_status", include_rules=True)
    assert status["name"] == world.config.name and status["tshockversion"] == "5.2.0.0"
    assert status["playercount"] == 3 and [p["nickname"] for p in status["players"]] == ["Alice", "Bob", "Bobby"]
    assert status["rules"]["AutoSave"] is True
    info = await data(client, "server_info")
    assert info["proc_count"] == "2" and info["tshock"] == "5.2.0.0 Intensity"  # colour tags stripped
    motd = await data(client, "server_motd")
    assert motd["motd"][0] == "Welcome to Polter Test Server!" and motd["rules"] == world.config.rules


async def test_world_info_converts_time_and_reports_hardmode(client: Client, world: World) -> None:
    world.time, world.daytime, world.hardmode = 16200.0, False, True
    info = await data(client, "world_info")
    assert info["time"] == "00:00" and info["daytime"] is False
    assert info["name"] == "Polterheim" and info["size"] == "8400x2400" and info["mode"] == "expert"
    assert info["seed"] == world.world_seed and info["hardmode"] is True


async def test_player_list_and_info(client: Client, world: World) -> None:
    admins = await data(client, "player_list", group="admin")
    assert admins["count"] == 1 and admins["players"][0]["username"] == "alice"
    world.player("Alice").buffs[5] = 30  # type: ignore[union-attr]
    world.player("Alice").inventory[10] = ItemStack(4956, 1, 81)  # type: ignore[union-attr]
    alice = await data(client, "player_info", player="ali")
    assert alice["nickname"] == "Alice" and alice["ip"] == world.player("Alice").ip  # type: ignore[union-attr]
    assert {"item": "Zenith", "id": 4956, "stack": 1, "prefix": 81} in alice["inventory"]
    assert {"item": "Torch", "id": 8, "stack": 99, "prefix": 0} in alice["inventory"]
    assert alice["buffs"] == [5]
    assert "matches 2 players" in await fail(client, "player_info", player="Bo")
    assert "was not found" in await fail(client, "player_info", player="Zed")


async def test_user_list_and_info(client: Client, world: World) -> None:
    users = await data(client, "user_list")
    assert users["count"] == len(world.accounts) and sorted(users["online"]) == ["alice", "bob"]
    assert {"name": "nobody", "id": 5, "group": "guest", "online": False} in users["users"]
    alice = await data(client, "user_info", user="alice")
    assert alice["group"] == "admin" and alice["id"] == "3"
    assert alice["registered"] == "10/01/2026 10:00:00 +00:00" and alice["last_login"].startswith("10/01/2026")
    by_id = await data(client, "user_info", user="4", by="id")
    assert by_id["name"] == "bob"
    assert "doesn't exist" in await fail(client, "user_info", user="ghost")


async def test_bans(client: Client, world: World) -> None:
    bans = await data(client, "ban_list")
    assert [b["ticket"] for b in bans["bans"]] == [1, 2]
    assert bans["bans"][0]["end"] == "never (permanent)" and bans["bans"][0]["active"] is True
    assert bans["bans"][1]["end"].startswith("2026-11-02T12:00:00")
    active = await data(client, "ban_list", active_only=True)
    assert [b["identifier"] for b in active["bans"]] == ["name:Griefer"]
    one = await data(client, "ban_info", ticket=2)
    assert one["identifier"] == "ip:10.0.0.66" and one["reason"] == "Spam bot"
    assert "no ban with ticket number 99" in await fail(client, "ban_info", ticket=99)


async def test_groups(client: Client, world: World) -> None:
    groups = await data(client, "group_list")
    assert {"name": "admin", "parent": "newadmin", "chatcolor": "255,000,000"} in groups["groups"]
    admin = await data(client, "group_info", group="admin")
    assert "tshock.kill" in admin["permissions"] and "tshock.admin.kick" in admin["totalpermissions"]
    assert "doesn't exist" in await fail(client, "group_info", group="nope")


async def test_regions_and_warps(client: Client, world: World) -> None:
    assert (await data(client, "region_list"))["regions"] == ["spawn", "alice-house", "arena"]
    arena = await data(client, "region_info", region="arena")
    assert arena == {"name": "arena", "x": 4600, "y": 400, "width": 200, "height": 80, "z": 0, "owner": "admin",
                     "protected": False, "users": [], "groups": ["vip"]}
    assert (await data(client, "region_info", region="alice-house"))["users"] == ["alice"]
    assert "TShock did not do it" in await fail(client, "region_info", region="nowhere")
    assert (await data(client, "warp_list"))["warps"] == ["spawn", "dungeon", "jungle"]


async def test_region_list_pages(client: Client, world: World) -> None:
    from polter.backends.terraria.simulator.world import Region

    world.regions = [Region(f"region-number-{n:02d}", n, n, 5, 5, "admin") for n in range(40)]
    first = await data(client, "region_list")
    assert first["pages"] == 3 and first["regions"][0] == "region-number-00"
    third = await data(client, "region_list", page=3)
    collected = first["regions"] + (await data(client, "region_list", page=2))["regions"] + third["regions"]
    assert collected == [r.name for r in world.regions]
    world.regions = []
    assert (await data(client, "region_list"))["regions"] == []


async def test_item_lookup_offline_in_english_internal_and_chinese(client: Client) -> None:
    by_name = await data(client, "item_lookup", name_or_id="terra blade")
    assert by_name["items"] == [{"id": 757, "name": "Terra Blade", "internal_name": "TerraBlade", "name_zh": "泰拉刃"}]
    assert (await data(client, "item_lookup", name_or_id="天顶剑"))["items"][0]["id"] == 4956
    assert (await data(client, "item_lookup", name_or_id="断钢剑"))["items"][0]["name"] == "Excalibur"
    assert (await data(client, "item_lookup", name_or_id="5043"))["items"][0]["name"] == "Torch God's Favor"
    assert (await data(client, "item_lookup", name_or_id="CloudinaBottle"))["items"][0]["id"] == 53
    several = await data(client, "item_lookup", name_or_id="pickaxe", limit=5)
    assert several["matches"] > 5 and len(several["items"]) == 5
    assert (await data(client, "item_lookup", name_or_id="no such thing"))["matches"] == 0
    unreachable = await data(client, "item_lookup", name_or_id="Zenith", stats=True)
    assert unreachable["items"][0]["id"] == 4956 and "unreachable" in unreachable["stats_unavailable"]
