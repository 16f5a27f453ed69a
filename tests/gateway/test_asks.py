"""Asks: the call waits for the controller's answer; everything but an explicit allow is a deny."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support.gateway import Harness, controller, start_gateway
from support.waiting import wait_until

from polter.gateway.audit import read_rows

pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_allow_once_lets_one_call_through_and_the_next_asks_again(harness: Harness) -> None:
    pane = await harness.pane("asker", title="A")
    async with controller(harness) as control, harness.client("fixture", pane.token) as client:
        call = asyncio.create_task(client.call_tool("write_note", {"text": "one"}))
        await wait_until(lambda: control.asks(), message="ask event")
        ask = control.asks()[0]
        assert (ask.pane, ask.pane_title, ask.role, ask.server, ask.name) == (pane.pane.id, "A", "asker", "fixture",
                                                                             "write_note")
        assert ask.arguments == {"text": "one"} and "asks" in ask.reason
        assert [a.id for a in await harness.admin.asks()] == [ask.id]
        await harness.admin.answer(ask.id, "allow_once")
        assert (await call).content[0].text == "noted: one"
        second = asyncio.create_task(client.call_tool("write_note", {"text": "two"}))
        await wait_until(lambda: len(control.asks()) == 2, message="second ask")
        await harness.admin.answer(control.asks()[1].id, "deny")
        refused = await second
        assert refused.is_error and "the human denied it" in refused.content[0].text
    rows = read_rows(harness.gateway.audit.path, pane=pane.pane.id)
    assert [row.decision for row in rows if row.layer == "call"] == ["allow_once", "deny"]
    answers = [row for row in rows if row.layer == "ask"]
    assert [(row.name, row.decision) for row in answers] == [("write_note", "allow_once"), ("write_note", "deny")]
    assert all("answered by controller" in row.reason and row.rule for row in answers)


async def test_allow_for_this_pane_stops_asking_that_pane_only(harness: Harness) -> None:
    first, second = await harness.pane("asker"), await harness.pane("asker")
    async with controller(harness) as control, harness.client("fixture", first.token) as client, \
            harness.client("fixture", second.token) as other:
        call = asyncio.create_task(client.call_tool("write_note", {"text": "a"}))
        await wait_until(lambda: control.asks(), message="ask")
        await harness.admin.answer(control.asks()[0].id, "allow_pane")
        assert not (await call).is_error
        assert (await client.call_tool("write_note", {"text": "b"})).content[0].text == "noted: b"
        assert len(control.asks()) == 1, "no new ask for the same pane"
        assert (await harness.admin.pane(first.pane.id)).grants == ["fixture/write_note"]
        pending = asyncio.create_task(other.call_tool("write_note", {"text": "c"}))
        await wait_until(lambda: len(control.asks()) == 2, message="the other pane is still asked")
        await harness.admin.set_role(first.pane.id, "asker-renamed")
        await harness.admin.answer(control.asks()[1].id, "deny")
        assert (await pending).is_error
    assert (await harness.admin.pane(first.pane.id)).grants == [], "a role switch clears the pane's grants"


async def test_no_controller_listening_denies_at_once(harness: Harness) -> None:
    pane = await harness.pane("asker")
    await wait_until(lambda: harness.gateway.events.controllers == 0, message="earlier controllers gone")
    async with harness.client("fixture", pane.token) as client:
        result = await client.call_tool("delete_all", {})
    assert result.is_error and "no controller is listening" in result.content[0].text
    await wait_until(lambda: any(row.layer == "ask" for row in read_rows(harness.gateway.audit.path, pane=pane.pane.id)),
                     message="the unanswerable ask is audited")
    [row] = [row for row in read_rows(harness.gateway.audit.path, pane=pane.pane.id) if row.layer == "ask"]
    assert (row.decision, row.name) == ("deny", "delete_all") and "no-controller" in row.reason


async def test_an_unanswered_ask_is_denied_after_the_timeout(tmp_path: Path) -> None:
    async with start_gateway(tmp_path, ask_timeout=0.5) as harness:
        pane = await harness.pane("asker")
        async with controller(harness) as control, harness.client("fixture", pane.token) as client:
            result = await client.call_tool("write_note", {"text": "late"})
            assert result.is_error and "nobody answered within 0.5 s" in result.content[0].text
            assert [ask.answered_by for ask in control.resolved()] == ["timeout"]
            assert await harness.admin.asks() == []


async def test_the_last_controller_leaving_denies_pending_asks(harness: Harness) -> None:
    pane = await harness.pane("asker")
    await wait_until(lambda: harness.gateway.events.controllers == 0, message="earlier controllers gone")
    async with harness.client("fixture", pane.token) as client:
        async with controller(harness) as control:
            call = asyncio.create_task(client.call_tool("write_note", {"text": "x"}))
            await wait_until(lambda: control.asks(), message="ask")
        result = await call
    assert result.is_error and "the last controller stopped listening" in result.content[0].text


async def test_removing_the_pane_denies_its_pending_ask(harness: Harness) -> None:
    pane = await harness.pane("asker")
    async with controller(harness) as control, harness.client("fixture", pane.token) as client:
        call = asyncio.create_task(client.call_tool("write_note", {"text": "x"}))
        await wait_until(lambda: control.asks(), message="ask")
        await harness.admin.remove(pane.pane.id)
        result = await call
    assert result.is_error and "the pane was removed" in result.content[0].text


async def test_an_escalation_the_role_makes_ask_waits_for_the_human(harness: Harness) -> None:
    pane = await harness.pane("phased-careful")
    async with controller(harness) as control, harness.client("polter", pane.token) as floor:
        escalation = asyncio.create_task(floor.call_tool("escalate", {"reason": "time to write"}))
        await wait_until(lambda: control.asks(), message="the escalation asks")
        ask = control.asks()[0]
        assert (ask.server, ask.name, ask.arguments) == ("polter", "escalate", {"reason": "time to write"})
        assert (await harness.admin.pane(pane.pane.id)).phase == "research", "nothing changes before the answer"
        await harness.admin.answer(ask.id, "deny")
        assert (await escalation).is_error
        assert (await harness.admin.pane(pane.pane.id)).phase == "research"
        escalation = asyncio.create_task(floor.call_tool("escalate", {"reason": "the human agreed"}))
        await wait_until(lambda: len(control.asks()) == 2, message="asked again")
        await harness.admin.answer(control.asks()[1].id, "allow_once")
        assert "action phase" in (await escalation).content[0].text
        assert (await harness.admin.pane(pane.pane.id)).phase == "action"


async def test_an_approval_covers_the_calls_exact_arguments_only(harness: Harness) -> None:
    """An ask decided by an argument rule, allowed for the pane, is bound to a digest of the arguments it
    showed the human: other arguments ask again, the same ones (in any key order) do not."""
    pane = await harness.pane("argument-asker")
    async with controller(harness) as control, harness.client("fixture", pane.token) as client:
        call = asyncio.create_task(client.call_tool("write_note", {"text": "plan A"}))
        await wait_until(lambda: control.asks(), message="the first ask")
        ask = control.asks()[0]
        assert ask.arguments == {"text": "plan A"} and "write_note(text=plan*)" in (ask.rule or "")
        await harness.admin.answer(ask.id, "allow_pane")
        assert (await call).content[0].text == "noted: plan A"
        assert (await client.call_tool("write_note", {"text": "plan A"})).content[0].text == "noted: plan A"
        assert len(control.asks()) == 1, "the same arguments do not ask again"
        assert (await client.call_tool("write_note", {"text": "a shopping list"})).content[0].text == (
            "noted: a shopping list"
        ), "arguments the rule does not match are decided by the role as always"
        other = asyncio.create_task(client.call_tool("write_note", {"text": "plan B"}))
        await wait_until(lambda: len(control.asks()) == 2, message="other arguments ask again")
        assert control.asks()[1].arguments == {"text": "plan B"}
        await harness.admin.answer(control.asks()[1].id, "deny")
        refused = await other
        assert refused.is_error and "the human denied it" in refused.content[0].text
        assert (await client.call_tool("write_note", {"text": "plan A"})).content[0].text == "noted: plan A"
        assert len(control.asks()) == 2, "a denial of other arguments leaves the approval of these"
        assert (await harness.admin.pane(pane.pane.id)).grants == [], "no grant of the whole tool"
    rows = read_rows(harness.gateway.audit.path, pane=pane.pane.id)
    calls = [(row.decision, row.rule) for row in rows if row.layer == "call"]
    assert [decision for decision, _ in calls] == ["allow_pane", "allow", "allow", "deny", "allow"]
    assert calls[1][1] == calls[4][1] != calls[2][1], "the repeated calls were allowed by the grant"
