"""Logging, completion and resource subscriptions through the gateway, under the role, against a real upstream
(``support/features_server.py``): each pane its own log level (the upstream gets the lowest), a line to the
session whose call caused it or else to every session that asked for its level, completion refused as a call
is where the role denies the server, subscriptions routed to their subscribers and dropped by a role switch."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
import pytest_asyncio
from mcp import MCPError
from support.gateway import ROLES, Harness, features_server, fixture_server, role, start_gateway
from support.waiting import wait_until

from polter.gateway.audit import read_rows
from polter.gateway.features import POLICY_DENIED

pytestmark = pytest.mark.asyncio(loop_scope="module")

TEST_ROLES = {**ROLES, "no-features": role("The features server is off limits", servers={"deny": ["features"]})}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def harness(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    servers = {"features": features_server(), "fixture": fixture_server()}
    async with start_gateway(tmp_path_factory.mktemp("utilities"), servers=servers, roles=TEST_ROLES) as started:
        yield started


async def _state(client: Any) -> dict[str, Any]:
    return json.loads((await client.call_tool("running", {})).content[0].text)


def _logs(messages: list[Any]) -> list[str]:
    return [m.params.data for m in messages if isinstance(m, types.LoggingMessageNotification)]


async def test_each_session_hears_the_log_lines_it_asked_for(harness: Harness) -> None:
    quiet, loud, barred = await harness.pane("open"), await harness.pane("open"), await harness.pane("no-features")
    heard: dict[str, list[Any]] = {"quiet": [], "loud": [], "barred": []}
    async with (
        harness.client("features", quiet.token, on_message=heard["quiet"].append) as one,
        harness.client("features", loud.token, on_message=heard["loud"].append) as two,
        harness.client("features", barred.token, on_message=heard["barred"].append) as three,
    ):
        await one.set_logging_level("warning")
        await two.set_logging_level("debug")
        await three.set_logging_level("debug")
        assert (await _state(one))["level"] == "debug"  # the lowest any session wants
        # A line caused by a call goes to that call's session, at its level.
        await one.call_tool("log", {"lines": 1})
        await wait_until(
            lambda: _logs(heard["quiet"]) == ["warning line 0", "error line 0"],
            message=lambda: f"the caller's lines: {_logs(heard['quiet'])}",
        )
        # With two panes' calls in flight a line names neither: it goes to every session at its level.
        sleeping = asyncio.create_task(one.call_tool("slow", {"seconds": 2}))
        await wait_until(lambda: harness.gateway.calls.of_server("features"), message="a call in flight")
        await two.call_tool("log", {"lines": 1})
        await sleeping
        await wait_until(lambda: len(_logs(heard["loud"])) == 5, message=lambda: f"{_logs(heard['loud'])}")
        await wait_until(lambda: len(_logs(heard["quiet"])) == 4, message=lambda: f"{_logs(heard['quiet'])}")
        assert _logs(heard["quiet"])[2:] == ["warning line 0", "error line 0"]
    assert _logs(heard["barred"]) == []  # its role denies the server: it hears nothing of it


async def test_completion_is_passed_on_where_the_role_lets_the_pane_see_the_server(harness: Harness) -> None:
    allowed, barred = await harness.pane("open"), await harness.pane("no-features")
    prompt = types.PromptReference(name="pick")
    async with harness.client("features", allowed.token) as client:
        result = await client.complete(prompt, {"name": "colour", "value": "r"})
        assert result.completion.values == ["red"]
        template = types.ResourceTemplateReference(uri="features://items/{id}")
        assert (await client.complete(template, {"name": "id", "value": ""})).completion.values == [
            "red",
            "green",
            "blue",
        ]
    async with harness.client("features", barred.token) as client:
        with pytest.raises(MCPError) as refused:
            await client.complete(prompt, {"name": "colour", "value": "r"})
    assert refused.value.error.code == POLICY_DENIED and 'servers.deny["features"]' in refused.value.error.message
    await wait_until(
        lambda: any(
            row.layer == "completion" and row.decision == "deny"
            for row in read_rows(harness.gateway.audit.path, pane=barred.pane.id)
        ),
        message="the refused completion's audit row",
    )


async def test_a_subscription_reaches_its_subscriber_and_a_role_switch_drops_it(harness: Harness) -> None:
    subscriber, other = await harness.pane("open"), await harness.pane("open")
    heard: dict[str, list[Any]] = {"subscriber": [], "other": []}

    def updates(who: str) -> list[str]:
        return [str(m.params.uri) for m in heard[who] if isinstance(m, types.ResourceUpdatedNotification)]

    async with (
        harness.client("features", subscriber.token, on_message=heard["subscriber"].append) as one,
        harness.client("features", other.token, on_message=heard["other"].append) as two,
    ):
        await one.subscribe_resource("features://watched")
        await two.subscribe_resource("features://items/1")
        await two.unsubscribe_resource("features://items/1")
        assert (await _state(one))["subscribed"] == ["features://watched"]  # items/1: nobody wants it now
        await two.call_tool("touch", {"uri": "features://watched"})
        await wait_until(lambda: updates("subscriber") == ["features://watched"], message="the subscriber's update")
        assert updates("other") == []
        # The pane's new role may not read the server: its subscription ends, at the upstream too.
        await harness.admin.set_role(subscriber.pane.id, "no-features")
        deadline = asyncio.get_running_loop().time() + 15
        while (await _state(two))["subscribed"]:
            assert asyncio.get_running_loop().time() < deadline, "the upstream was never unsubscribed"
        await two.call_tool("touch", {"uri": "features://watched"})
        await two.subscribe_resource("features://watched")
        await two.call_tool("touch", {"uri": "features://watched"})
        await wait_until(lambda: updates("other") == ["features://watched"], message="the other pane's update")
        assert updates("subscriber") == ["features://watched"]  # nothing more after the switch


async def test_an_endpoint_advertises_the_utilities_its_upstream_serves(harness: Harness) -> None:
    pane = await harness.pane("open")
    for name in ("features", "fixture"):  # (while an upstream starts its endpoint advertises everything)
        assert await harness.gateway.pool.get(name).wait_running()  # type: ignore[union-attr]
    async with harness.client("features", pane.token) as features, harness.client("fixture", pane.token) as fixture:
        full, plain = features.server_capabilities, fixture.server_capabilities
    assert full is not None and full.logging is not None and full.completions is not None
    assert full.resources is not None and full.resources.subscribe
    assert plain is not None and plain.completions is None and not (plain.resources and plain.resources.subscribe)


async def test_a_subscription_the_role_refuses_is_refused_with_polters_reason(tmp_path: Path) -> None:
    roles = {"asks-features": role("Features asks", servers={"deny": ["features"]})}
    async with start_gateway(tmp_path, servers={"features": features_server()}, roles=roles) as harness:
        pane = await harness.pane("asks-features")
        async with harness.client("features", pane.token) as client:
            with pytest.raises(MCPError) as refused:
                await client.subscribe_resource("features://watched")
            assert refused.value.error.code == POLICY_DENIED
            assert (
                await harness.gateway.pool.get("features").request(  # type: ignore[union-attr]
                    types.CallToolRequest(params=types.CallToolRequestParams(name="running", arguments={})),
                    types.CallToolResult,
                )
            ).content[0].text.count("features://watched") == 0


async def test_a_2026_listen_streams_resource_subscriptions_are_the_upstreams_while_it_is_open(
    harness: Harness,
) -> None:
    pane, toucher = await harness.pane("open"), await harness.pane("open")
    async with (
        harness.client("features", pane.token, mode="2026-07-28") as client,
        harness.client("features", toucher.token) as other,
    ):
        async with client.listen(resource_subscriptions=["features://items/7"]) as subscription:
            assert "features://items/7" in (await _state(other))["subscribed"]
            await other.call_tool("touch", {"uri": "features://items/7"})
            event = await asyncio.wait_for(subscription.__anext__(), 15)
            assert getattr(event, "uri", None) == "features://items/7"
        deadline = asyncio.get_running_loop().time() + 15
        while "features://items/7" in (await _state(other))["subscribed"]:
            assert asyncio.get_running_loop().time() < deadline, "the upstream was never unsubscribed"


async def test_a_restarted_upstream_is_sent_the_sessions_level_and_subscriptions_again(tmp_path: Path) -> None:
    """The upstream forgets everything when it dies: its new process gets the lowest level the sessions want and
    every URI they subscribe to, and updates reach the subscriber as before."""
    async with start_gateway(tmp_path, servers={"features": features_server()}, roles=TEST_ROLES) as harness:
        quiet, loud = await harness.pane("open"), await harness.pane("open")
        heard: list[Any] = []
        async with (
            harness.client("features", quiet.token, on_message=heard.append) as one,
            harness.client("features", loud.token) as two,
        ):
            await one.set_logging_level("warning")
            await two.set_logging_level("info")
            await one.subscribe_resource("features://watched")
            await two.subscribe_resource("features://items/3")
            before = await _state(one)
            assert (before["level"], before["subscribed"]) == ("info", ["features://items/3", "features://watched"])
            upstream = harness.gateway.pool.get("features")
            assert upstream is not None
            os.kill(before["pid"], signal.SIGKILL)
            await wait_until(lambda: upstream.restarts == 1 and upstream.state == "running", timeout=30,
                             message="the upstream restarted")
            deadline = asyncio.get_running_loop().time() + 15
            while True:
                after = await _state(one)
                if after["subscribed"] == before["subscribed"] and after["level"] == "info":
                    break
                assert asyncio.get_running_loop().time() < deadline, f"the new upstream was not told again: {after}"
            assert after["pid"] != before["pid"]
            await two.call_tool("touch", {"uri": "features://watched"})
            await wait_until(
                lambda: [str(m.params.uri) for m in heard if isinstance(m, types.ResourceUpdatedNotification)]
                == ["features://watched"],
                message="the subscriber's update from the new upstream",
            )
