"""The tool surface matches the catalogue: 46 names, 17 read-only, the disruptive ones destructive."""

from __future__ import annotations

from backends.terraria.helpers import ACTING, DESTRUCTIVE, READ_ONLY
from mcp import Client


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
