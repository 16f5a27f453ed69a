"""An upstream's sampling and elicitation requests, through the gateway, against a real SDK server
(``support/features_server.py``): to the pane's CLI when its client declared the capability, else an
elicitation to Polter's window (a controller answers it) and a sampling request refused with a clear error;
the role decides (elicitation allowed, sampling asked by default); a form outside the spec is refused and
shown to nobody; each is an audit row."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest
import pytest_asyncio
from support.gateway import ROLES, Harness, controller, features_server, role, start_gateway
from support.waiting import wait_until

from polter.gateway.audit import read_rows
from polter.gateway.models import ElicitationReply

pytestmark = pytest.mark.asyncio(loop_scope="module")

FORM = {
    "type": "object",
    "properties": {"name": {"type": "string", "default": "Ann"}, "age": {"type": "integer", "minimum": 0}},
    "required": ["name"],
}
TEST_ROLES = {
    **ROLES,
    "samples": role("Sampling allowed", sampling={"default": "allow"}),
    "no-questions": role("Servers may not ask", elicitation={"default": "deny"}),
}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def harness(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    servers = {"features": features_server(timeout=20)}
    async with start_gateway(tmp_path_factory.mktemp("requests"), servers=servers, roles=TEST_ROLES) as started:
        yield started


def _rows(harness: Harness, pane: str, layer: str) -> list[Any]:
    return [row for row in read_rows(harness.gateway.audit.path, pane=pane) if row.layer == layer]


async def _elicit(client: Any, schema: dict[str, Any] = FORM) -> str:
    result = await client.call_tool("elicit", {"message": "Who are you?", "schema": schema})
    return result.content[0].text


async def test_an_elicitation_goes_to_the_pane_cli_that_declared_it(harness: Harness) -> None:
    pane = await harness.pane("open")
    asked: list[types.ElicitRequestParams] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="accept", content={"name": "Bea", "age": 7})

    async with harness.client("features", pane.token, elicitation_callback=answer) as client:
        await wait_until(lambda: len(harness.gateway.channels.get_streams._open) > 0, message="the GET stream")
        said = json.loads(await _elicit(client))
    assert said == {"action": "accept", "content": {"age": 7, "name": "Bea"}}
    assert [params.message for params in asked] == ["Who are you?"]
    [client] = (await harness.admin.pane(pane.pane.id)).clients  # what the pane's CLI declared, for the human
    assert client.endpoint == "features" and client.name == "mcp"
    assert "elicitation" in client.capabilities and "sampling" not in client.capabilities
    await wait_until(lambda: _rows(harness, pane.pane.id, "elicitation"), message="the elicitation's audit row")
    [row] = _rows(harness, pane.pane.id, "elicitation")
    assert row.decision == "allow" and "passed to the pane's CLI: accept" in row.reason


async def test_a_2026_client_that_declared_elicitation_answers_in_a_round_trip(harness: Harness) -> None:
    """A 2026-07-28 call carries no server requests: the gateway ends it with the upstream's question
    (``InputRequiredResult``), and the client's retry with its answer resumes the upstream's call, which
    gets that answer. The window is not asked; a requestState is the pane's own and used once."""
    pane, other = await harness.pane("open"), await harness.pane("open")
    asked: list[str] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Eve", "age": 3})

    async with controller(harness) as window:
        async with harness.client("features", pane.token, mode="2026-07-28", elicitation_callback=answer) as client:
            said = json.loads(await _elicit(client))
        assert said == {"action": "accept", "content": {"age": 3, "name": "Eve"}}
        assert asked == ["Who are you?"] and window.elicitations() == []
    await wait_until(lambda: _rows(harness, pane.pane.id, "elicitation"), message="the elicitation's audit row")
    [row] = _rows(harness, pane.pane.id, "elicitation")
    assert row.decision == "allow" and "a 2026-07-28 round trip): accept" in row.reason
    assert len(harness.gateway.round_trips) == 0
    # Someone else's requestState (or a made-up one) resumes nothing.
    async with harness.raw(other.token) as http:
        forged = await http.post("/mcp/features", headers={
            "Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2026-07-28",
            "Mcp-Method": "tools/call", "Mcp-Name": "elicit"}, json={
            "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                "name": "elicit", "arguments": {}, "requestState": "made-up", "inputResponses": {},
                "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                          "io.modelcontextprotocol/clientInfo": {"name": "x", "version": "1"},
                          "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}}})
    assert "no call of this pane waits for input" in forged.text, forged.text


async def test_without_a_capable_cli_an_elicitation_is_a_form_in_polters_window(harness: Harness) -> None:
    pane = await harness.pane("open", title="left")
    async with harness.client("features", pane.token) as client:
        async with controller(harness) as window:
            call = asyncio.create_task(_elicit(client))
            await wait_until(lambda: window.elicitations(), message="the form in the window")
            [form] = window.elicitations()
            assert (form.pane, form.pane_title, form.server, form.message) == (
                pane.pane.id,
                "left",
                "features",
                "Who are you?",
            )
            assert form.requested_schema == FORM
            with pytest.raises(Exception, match="name is required"):  # a form not filled in is not an answer
                await harness.admin.answer_elicitation(form.id, ElicitationReply(action="accept", content={}))
            await harness.admin.answer_elicitation(form.id, ElicitationReply(action="accept", content={"name": "Cy"}))
            assert json.loads(await call) == {"action": "accept", "content": {"name": "Cy"}}
        # Nobody to show it to: the upstream hears so at once.
        said = await _elicit(client)
    assert said.startswith("elicitation failed: Polter could not ask the human: no controller is listening")
    reasons = [row.reason for row in _rows(harness, pane.pane.id, "elicitation")]
    assert any("answered in Polter's window" in reason and reason.endswith(": accept") for reason in reasons)


async def test_a_form_outside_the_spec_is_refused_and_shown_to_nobody(harness: Harness) -> None:
    pane = await harness.pane("open")
    asked: list[Any] = []

    async def answer(context: Any, params: types.ElicitRequestParams) -> types.ElicitResult:
        asked.append(params)
        return types.ElicitResult(action="decline")

    nested = {"type": "object", "properties": {"address": {"type": "object", "properties": {}}}}
    async with (
        harness.client("features", pane.token, elicitation_callback=answer) as client,
        controller(harness) as window,
    ):
        said = await _elicit(client, nested)
    assert said.startswith("elicitation failed: Polter refused the elicitation: the form is outside the MCP")
    assert "properties.address.type" in said
    assert asked == [] and window.elicitations() == []
    [row] = _rows(harness, pane.pane.id, "elicitation")
    assert row.decision == "deny"


async def test_the_role_decides_whether_a_server_may_elicit_or_sample(harness: Harness) -> None:
    barred, sampler, plain = (
        await harness.pane("no-questions"),
        await harness.pane("samples"),
        await harness.pane("open"),
    )

    async def model(context: Any, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        return types.CreateMessageResult(role="assistant", content=types.TextContent(text="hi"), model="fake-model")

    async with harness.client("features", barred.token) as client:
        said = await _elicit(client)
    assert "Polter refused elicitation by features (forbidden, not broken)" in said
    assert "elicitation.default" in said
    async with harness.client("features", sampler.token, sampling_callback=model) as client:
        await wait_until(lambda: len(harness.gateway.channels.get_streams._open) > 0, message="the GET stream")
        said = (await client.call_tool("sample", {"prompt": "hello"})).content[0].text
    assert said == "model fake-model said: hi"
    # The default role asks the human before a server samples: nobody listening is a no; and a client
    # that cannot sample gets a clear error once the human allowed it.
    async with harness.client("features", plain.token) as client:
        said = (await client.call_tool("sample", {"prompt": "hello"})).content[0].text
        assert "Polter refused sampling by features" in said and "no controller is listening" in said
        async with controller(harness) as window:
            call = asyncio.create_task(client.call_tool("sample", {"prompt": "hello"}))
            await wait_until(lambda: window.asks(), message="the sampling ask")
            [ask] = window.asks()
            assert ask.kind == "sampling" and ask.server == "features"
            await harness.admin.answer(ask.id, "allow_once")
            said = (await call).content[0].text
    assert "the CLI of the pane whose call asked for it did not declare sampling" in said
    [row, *_] = _rows(harness, sampler.pane.id, "sampling")
    assert row.decision == "allow" and "passed to the pane's CLI" in row.reason


async def test_removing_the_pane_ends_its_form_at_once(tmp_path: Path) -> None:
    async with start_gateway(tmp_path, servers={"features": features_server(timeout=60)}) as harness:
        pane, other = await harness.pane("open"), await harness.pane("open")
        async with harness.client("features", pane.token) as client, controller(harness) as window:
            call = asyncio.create_task(_elicit(client))
            await wait_until(lambda: window.elicitations(), message="the form in the window")
            await harness.admin.remove(pane.pane.id)
            result = await asyncio.wait_for(call, 15)
        assert "the pane was removed" in result or "failed" in result
        async with harness.client("features", other.token) as client:
            state = json.loads((await client.call_tool("running", {})).content[0].text)
        assert state["sleeping"] == 0


async def test_a_2026_client_that_never_answers_its_round_trip_abandons_the_call(tmp_path: Path) -> None:
    """The gateway keeps the upstream's call for the client's answer only as long as the upstream's timeout:
    then the call is cancelled upstream, the question answered with an error, and nothing stays parked."""
    async with start_gateway(tmp_path, servers={"features": features_server(timeout=1)}, roles=TEST_ROLES) as harness:
        pane = await harness.pane("open")
        async with harness.raw(pane.token) as http:
            asked = await http.post("/mcp/features", headers={
                "Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2026-07-28",
                "Mcp-Method": "tools/call", "Mcp-Name": "elicit"}, json={
                "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
                    "name": "elicit", "arguments": {"message": "Still there?", "schema": FORM},
                    "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                              "io.modelcontextprotocol/clientInfo": {"name": "gone", "version": "1"},
                              "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}}})
        result = asked.json()["result"]
        assert result["resultType"] == "input_required" and result["requestState"], result
        [question] = result["inputRequests"].values()
        assert question["params"]["message"] == "Still there?"
        assert len(harness.gateway.round_trips) == 1
        await wait_until(lambda: len(harness.gateway.round_trips) == 0 and not harness.gateway.calls.of_server(
            "features"), timeout=15, message="the parked call abandoned")
        await wait_until(lambda: _rows(harness, pane.pane.id, "call"), message="the call's audit row")
        [row] = _rows(harness, pane.pane.id, "call")
        assert "cancelled" in row.reason, row
