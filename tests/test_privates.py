"""The helpers in ``support/privates.py`` still find the private state they read (installed Textual, MCP SDK)."""

from __future__ import annotations

import asyncio
from importlib.metadata import version
from typing import Any

import mcp_types as types
import pytest
from mcp import Client
from mcp.server import Server, ServerRequestContext
from support.privates import (
    key_for_character,
    live_styles_caches,
    notification_messages,
    rendered_strips,
    requests_awaiting_answer,
    slow_screen_updates,
)
from support.waiting import wait_until
from textual.app import App, ComposeResult
from textual.widgets import Static

TEXTUAL = f"textual {version('textual')}"


class Probe(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("drawn by the compositor")


async def test_notification_messages_are_the_apps_notifications_in_order() -> None:
    app = Probe()
    async with app.run_test() as pilot:
        app.notify("first")
        app.notify("second", severity="warning")
        await pilot.pause()
        assert notification_messages(app) == ["first", "second"], TEXTUAL


async def test_rendered_strips_are_the_screens_rows_as_drawn() -> None:
    app = Probe()
    async with app.run_test(size=(40, 5)) as pilot:
        await pilot.pause()
        strips = rendered_strips(app.screen)
        assert len(strips) == 5, TEXTUAL
        assert strips[0].text.startswith("drawn by the compositor"), (TEXTUAL, [strip.text for strip in strips])


def test_key_for_character_names_punctuation_as_textual_reports_it() -> None:
    assert key_for_character("!") == "exclamation_mark", TEXTUAL
    assert key_for_character(" ") == "space", TEXTUAL


async def test_requests_awaiting_answer_counts_a_call_in_flight() -> None:
    release = asyncio.Event()

    async def call_tool(ctx: ServerRequestContext[Any, Any], params: Any) -> types.CallToolResult:
        await release.wait()
        return types.CallToolResult(content=[types.TextContent(text="done")])

    async def list_tools(ctx: ServerRequestContext[Any, Any], params: Any) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="wait", input_schema={"type": "object"})])

    async with Client(Server("probe", on_call_tool=call_tool, on_list_tools=list_tools), mode="legacy") as client:
        assert requests_awaiting_answer(client.session) == 0
        call = asyncio.create_task(client.call_tool("wait", {}))
        await wait_until(
            lambda: requests_awaiting_answer(client.session) == 1, message=f"mcp {version('mcp')}: in flight"
        )
        release.set()
        await call
        assert requests_awaiting_answer(client.session) == 0


async def test_live_styles_caches_counts_the_widgets_alive() -> None:
    app = Probe()
    async with app.run_test() as pilot:
        await pilot.pause()
        alive = live_styles_caches()
        await app.mount(Static("one more"))
        await pilot.pause()
        assert live_styles_caches() == alive + 1, TEXTUAL


def test_slow_screen_updates_sets_the_period_screens_read(monkeypatch: pytest.MonkeyPatch) -> None:
    import textual.screen

    slow_screen_updates(monkeypatch, 30.0)
    assert textual.screen.UPDATE_PERIOD == 30.0, TEXTUAL
