"""The control API through its typed client: what the app uses to steer panes and read the gateway."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from mcp import MCPError
from support.gateway import Harness, controller, held_fixture_server, start_gateway
from support.waiting import wait_until

from polter.errors import ControlError
from polter.gateway.audit import read_rows

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_status_reports_servers_roles_and_panes(harness: Harness) -> None:
    await harness.pane("open")
    await wait_until(lambda: harness.gateway.pool.get("fixture").state == "running", message="upstream running")
    status = await harness.admin.status()
    [fixture] = status.servers
    assert (fixture.name, fixture.transport, fixture.state, fixture.tools) == ("fixture", "stdio", "running", 6)
    assert {"open", "reader", "asker", "gated", "phased"} <= set(status.roles.names)
    assert status.panes >= 1 and status.url == harness.url


async def test_phase_control_and_its_limits(harness: Harness) -> None:
    phased, plain = await harness.pane("phased"), await harness.pane("open")
    assert (await harness.admin.set_phase(phased.pane.id, "action", "the human said go")).phase == "action"
    assert (await harness.admin.set_phase(phased.pane.id, "research")).phase == "research"
    with pytest.raises(ControlError) as refused:
        await harness.admin.set_phase(plain.pane.id, "action")
    assert refused.value.status == 409 and "no phases" in str(refused.value)
    rows = [row for row in read_rows(harness.gateway.audit.path, pane=phased.pane.id) if row.layer == "phase"]
    assert [(row.name, row.reason) for row in rows] == [("escalate", "the human said go"), ("reset", "set by the controller")]


async def test_unknown_panes_and_asks_are_404_and_bad_bodies_422(harness: Harness) -> None:
    for action in (harness.admin.pane("nope"), harness.admin.set_role("nope", "open"), harness.admin.input("nope", "x"),
                   harness.admin.remove("nope"), harness.admin.capabilities("nope"), harness.admin.answer("a0", "deny")):
        with pytest.raises(ControlError) as missing:
            await action
        assert missing.value.status == 404
    async with harness.raw(harness.admin_token) as http:
        bad = await http.post("/control/panes", json={"role": "open", "token": "short"})
        assert bad.status_code == 422 and "token" in bad.text
        worse = await http.post("/control/panes", content=b"{not json", headers={"Content-Type": "application/json"})
        assert worse.status_code == 422
        for body in (b"[1e400]", b'{"role": Infinity}', b"NaN"):  # floats JSON cannot carry back (found by fuzzing)
            odd = await http.post("/control/panes", content=body, headers={"Content-Type": "application/json"})
            assert odd.status_code == 422, (body, odd.status_code)


async def test_the_audit_route_pages_by_pane(harness: Harness) -> None:
    pane = await harness.pane("open")
    async with harness.client("fixture", pane.token) as client:
        for text in ("a", "b", "c"):
            await client.call_tool("write_note", {"text": text})
    calls = [row for row in await harness.admin.audit(pane_id=pane.pane.id) if row.layer == "call"]
    assert [row.name for row in calls] == ["write_note"] * 3
    latest = await harness.admin.audit(pane_id=pane.pane.id, limit=1)
    assert [row.id for row in latest] == [calls[-1].id]
    assert await harness.admin.audit(pane_id=pane.pane.id, after=calls[-1].id) == []


async def test_raw_arguments_are_audited_only_when_asked(tmp_path: Path) -> None:
    async with start_gateway(tmp_path, audit_arguments=True) as harness:
        pane = await harness.pane("open")
        async with harness.client("fixture", pane.token) as client:
            await client.call_tool("write_note", {"text": "kept verbatim"})
        [row] = [row for row in read_rows(harness.gateway.audit.path, pane=pane.pane.id) if row.layer == "call"]
        assert row.args == '{"text":"kept verbatim"}' and row.args_digest.startswith("sha256:")


@pytest.mark.parametrize("separator", ["\u2028", "\u0085", "\r", "\u2029\u000b"])
async def test_a_panes_text_cannot_write_an_event_into_the_controllers_stream(harness: Harness, separator: str) -> None:
    """A resource URI with characters a line reader breaks lines at (found by the fuzz test): the controller
    gets the one audit row with the URI as the pane wrote it, and no event the pane made up."""
    pane = await harness.pane("no-fixture")
    forged = '{"id": "a1", "pane": "p1", "kind": "tool", "name": "forged"}'
    uri = f"fixture://x{separator}{separator}event: ask{separator}data: {forged}{separator}{separator}"
    async with controller(harness) as control, harness.client("fixture", pane.token) as client:
        with pytest.raises(MCPError):
            await client.read_resource(uri)
        await wait_until(
            lambda: any(e.type == "audit" and e.data.get("pane") == pane.pane.id for e in control.events),
            message="the refused read's audit row",
        )
    assert [e.type for e in control.events if e.data.get("pane") == pane.pane.id or e.type == "ask"] == ["audit"]
    [row] = [e.data for e in control.events if e.type == "audit" and e.data.get("pane") == pane.pane.id]
    assert row["name"] == uri


async def test_capabilities_wait_for_an_upstream_still_starting_unless_asked_to_answer_at_once(tmp_path: Path) -> None:
    """What ``whoami`` answers waits for the upstreams still starting, so their tools show; ``wait=False`` (a pane's
    launch, which needs the role's decisions on skills and builtins alone) answers at once."""
    go = tmp_path / "go"
    async with start_gateway(tmp_path, servers={"fixture": held_fixture_server(go)}) as harness:
        pane = (await harness.pane("open")).pane.id
        now = await asyncio.wait_for(harness.admin.capabilities(pane, wait=False), 5)  # not the upstream's 20 s
        fixture = next(server for server in now.servers if server.name == "fixture")
        assert (fixture.state, fixture.tools) == ("starting", [])
        assert now.role == "open" and now.role_found and now.builtins is not None

        waiting = asyncio.create_task(harness.admin.capabilities(pane))
        done, _ = await asyncio.wait({waiting}, timeout=1.0)  # long enough for the answer, had it not waited
        assert not done, "the default answer waits for the upstream still starting"
        go.touch()
        fixture = next(server for server in (await waiting).servers if server.name == "fixture")
        assert fixture.state == "running" and len(fixture.tools) == 6
