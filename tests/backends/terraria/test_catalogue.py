"""The tool surface matches the catalogue: 46 names, 17 read-only, the disruptive ones destructive."""

from __future__ import annotations

from mcp import Client

READ_ONLY = {
    "server_status", "server_info", "server_motd", "world_info", "player_list", "player_info", "user_list",
    "user_info", "ban_list", "ban_info", "group_list", "group_info", "region_list", "region_info", "warp_list",
    "wiki_search", "item_lookup",
}
DESTRUCTIVE = {
    "world_hardmode", "server_stop", "world_butcher", "player_kick", "player_ban", "player_kill", "region_delete",
    "server_raw_command", "group_permissions",
}
ACTING = {
    "server_broadcast", "server_save", "server_reload", "server_stop", "server_raw_command", "world_time_set",
    "world_rain", "world_wind", "world_bloodmoon", "world_event", "world_invasion", "world_hardmode",
    "world_butcher", "give_item", "player_kick", "player_ban", "player_unban", "player_mute", "player_kill",
    "player_heal", "player_godmode", "player_buff", "player_teleport", "npc_spawn", "region_protect",
    "region_allow", "region_delete", "group_permissions", "user_set_group",
}


async def test_forty_six_tools_with_the_catalogue_names(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert len(READ_ONLY) == 17 and len(ACTING) == 29
    assert set(tools) == READ_ONLY | ACTING


async def test_annotations_mark_read_only_and_destructive_tools(client: Client) -> None:
    for tool in (await client.list_tools()).tools:
        annotations = tool.annotations
        assert annotations is not None, tool.name
        assert annotations.read_only_hint is (tool.name in READ_ONLY), tool.name
        assert annotations.destructive_hint is (tool.name in DESTRUCTIVE), tool.name
        assert tool.description and len(tool.description) > 20, tool.name
        assert tool.input_schema["type"] == "object"


async def test_inputs_are_typed_and_documented(client: Client) -> None:
    tools = {tool.name: tool for tool in (await client.list_tools()).tools}
    hardmode = tools["world_hardmode"].input_schema
    assert hardmode["required"] == ["enabled"] and hardmode["properties"]["enabled"]["type"] == "boolean"
    invasion = tools["world_invasion"].input_schema["properties"]["type"]
    assert "goblins" in str(invasion)
    password = tools["user_set_group"].input_schema["properties"]["password"]["anyOf"][0]
    assert password["writeOnly"] is True and password["format"] == "password"
    assert "\n        " not in tools["server_stop"].description  # docstring indentation removed
    assert tools["server_status"].output_schema is not None  # read-only tools return structured data
