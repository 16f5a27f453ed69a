"""Hypothesis-fuzzed JSON-RPC bodies never crash the gateway and never turn a deny into an allow.

Two tests, each 400 bodies in the fast tier and 10,000 in the end-to-end tier (CI), drawn :data:`BATCH` to a
Hypothesis example, with the same assertions:
calls, listings and any method at all against a role that denies tools; and the params of the protocol's
utilities (logging, completion, subscriptions, reads) from a pane whose role denies the server, with the answers
to a server's elicitation (a client's, the window's, a 2026-07-28 retry's) while one waits.
"""

from __future__ import annotations

import asyncio
import json
from http.client import HTTPConnection
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.gateway import ROLES, Harness, controller, features_server, role, start_gateway
from support.waiting import wait_until

from polter.gateway.audit import read_rows
from polter.gateway.forms import FormError, check_answer, parse_form

pytestmark = pytest.mark.asyncio(loop_scope="module")

DENIED = ["write_note", "delete_all", "add_tool"]  # the reader role denies every tool that is not read-only
NAME_VARIANTS = st.sampled_from(DENIED).flatmap(lambda name: st.sampled_from([
    name, name.upper(), f" {name}", f"{name} ", f"{name}\u0000", f"fixture/{name}", f"fixture__{name}",
    f"../{name}", f"{name}\n", name.replace("_", "-"), f"mcp__fixture__{name}",
]))
JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=12,
)
METHODS = st.sampled_from([
    "tools/call", "tools/list", "prompts/get", "resources/read", "initialize", "server/discover",
    "subscriptions/listen", "notifications/initialized", "ping", "completion/complete", "logging/setLevel",
]) | st.text(max_size=20)
CALL_PARAMS = st.fixed_dictionaries(
    {"name": NAME_VARIANTS | st.text(max_size=20)},
    optional={"arguments": JSON | st.fixed_dictionaries({"text": st.text(max_size=10)}), "_meta": JSON},
)
MESSAGE = st.fixed_dictionaries(
    {"jsonrpc": st.sampled_from(["2.0", "2.0", "1.0", 2]), "method": METHODS},
    optional={"id": st.integers() | st.text(max_size=6) | st.none() | JSON, "params": CALL_PARAMS | JSON},
)
BODIES = (
    MESSAGE.map(json.dumps)
    | st.lists(MESSAGE, min_size=1, max_size=3).map(json.dumps)
    | JSON.map(json.dumps)
    | st.binary(max_size=64).map(lambda raw: raw.decode("latin-1"))
)


BATCH = 20
"""Bodies sent per Hypothesis example. Hypothesis's own work per example costs twice the drawing of a body, so the
bodies are drawn as a list (the same strategies, as many bodies); a failure still shrinks to the body that fails."""


def _call(name: str, arguments: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": arguments}})


VERSIONS = st.sampled_from(["2026-07-28", "2025-11-25", None, "1999-01-01"])
FUZZED = st.tuples(BODIES, VERSIONS, st.booleans(), st.sampled_from(["fixture", "fixture", "polter"]))
"""A body, the protocol version it claims (or none), whether it names the session, the endpoint it goes to."""


@pytest.mark.parametrize(
    "bodies", [400, pytest.param(10_000, marks=[pytest.mark.e2e, pytest.mark.timeout(1200)], id="10000")]
)
async def test_fuzzed_bodies_never_crash_the_gateway_or_bypass_a_deny(own_harness: Harness, bodies: int) -> None:
    harness = own_harness  # its own upstream: the notes read at the end are this test's alone
    reader = await harness.pane("reader")
    writer = await harness.pane("open")
    async with harness.client("fixture", writer.token) as client:
        await client.call_tool("write_note", {"text": "keep me"})
    async with harness.raw(reader.token) as http:
        opened = await http.post("/mcp/fixture", headers={"Accept": "application/json, text/event-stream"}, json={
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "f", "version": "1"}}})
        session = opened.headers["mcp-session-id"]
    tools_before = [tool.name for tool in harness.gateway.pool.get("fixture").tools]
    statuses: list[int] = []

    def fuzz() -> None:  # the stdlib's HTTP client: a tenth of httpx's CPU per request, on a machine the gateway shares
        http = HTTPConnection(*harness.url.removeprefix("http://").split(":"), timeout=10)
        try:

            @settings(max_examples=bodies // BATCH, deadline=None, suppress_health_check=list(HealthCheck),
                      database=None)
            @example(batch=[(_call("write_note", {"text": "x"}), "2026-07-28", False, "fixture")])
            @example(batch=[(_call("delete_all", {}), "2025-11-25", True, "fixture")])
            @example(batch=[('{"jsonrpc": "2.0", "method": "tools/list"}', "2025-11-25", True,
                             "fixture")])  # a notification named like a request (found by this test)
            @given(batch=st.lists(FUZZED, min_size=BATCH, max_size=BATCH))
            def some(batch: list[tuple[str, str | None, bool, str]]) -> None:
                for body, version, use_session, endpoint in batch:
                    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                               "Authorization": f"Bearer {reader.token}"}
                    if version is not None:
                        headers["Mcp-Protocol-Version"] = version
                    if use_session:
                        headers["Mcp-Session-Id"] = session
                    http.request("POST", f"/mcp/{endpoint}", body.encode("utf-8", "surrogatepass"), headers)
                    response = http.getresponse()
                    text = response.read().decode("utf-8", "replace")
                    statuses.append(response.status)
                    assert response.status < 500, (body, response.status, text[:300])
                    assert "noted:" not in text and '"deleted"' not in text, body

            some()
        finally:
            http.close()

    await asyncio.to_thread(fuzz)
    assert len(statuses) >= bodies and {200, 400} <= set(statuses)
    # The gateway still works, the upstream saw none of the denied calls, and the audit agrees.
    async with harness.client("fixture", reader.token) as client:
        assert (await client.call_tool("read_notes", {})).content[0].text == "keep me"  # no write, no delete
    assert [tool.name for tool in harness.gateway.pool.get("fixture").tools] == tools_before  # no add_tool
    allowed: list[Any] = [row for row in read_rows(harness.gateway.audit.path, pane=reader.pane.id)
                          if row.layer == "call" and row.decision not in ("deny", "error")]
    assert all(row.name not in DENIED for row in allowed), allowed


FORM = {  # what the upstream asks the human in Polter's window while the answers are fuzzed
    "type": "object",
    "properties": {"name": {"type": "string", "minLength": 2}, "age": {"type": "integer", "minimum": 0},
                   "colour": {"type": "string", "enum": ["red", "green"]}},
    "required": ["name", "colour"],
}
URIS = st.sampled_from(["features://watched", "features://items/1", "features://items/{id}", ""]) | st.text(max_size=16)
REFERENCES = st.fixed_dictionaries(
    {"type": st.sampled_from(["ref/prompt", "ref/resource", "ref/other"]) | JSON},
    optional={"name": st.sampled_from(["pick", "nope"]) | JSON, "uri": URIS | JSON},
)
UTILITY_PARAMS = {
    "logging/setLevel": st.fixed_dictionaries(
        {"level": st.sampled_from(["debug", "info", "notice", "warning", "error", "critical", "emergency"]) | JSON},
        optional={"_meta": JSON}),
    "completion/complete": st.fixed_dictionaries(
        {"ref": REFERENCES | JSON, "argument": st.fixed_dictionaries(
            {"name": st.sampled_from(["colour", "id"]) | JSON, "value": st.text(max_size=4) | JSON}) | JSON},
        optional={"context": JSON, "_meta": JSON}),
    "resources/subscribe": st.fixed_dictionaries({"uri": URIS | JSON}, optional={"_meta": JSON}),
    "resources/unsubscribe": st.fixed_dictionaries({"uri": URIS | JSON}, optional={"_meta": JSON}),
    "resources/read": st.fixed_dictionaries({"uri": URIS | JSON}, optional={"_meta": JSON}),
}
REFUSED = ("completion/complete", "resources/subscribe", "resources/read")  # what the barred pane never gets
UTILITY_REQUEST = st.sampled_from(sorted(UTILITY_PARAMS)).flatmap(lambda method: st.fixed_dictionaries({
    "jsonrpc": st.just("2.0"), "method": st.just(method), "id": st.integers(1, 10**6) | st.text(max_size=4),
    "params": UTILITY_PARAMS[method] | JSON}))
CLIENT_ANSWER = st.fixed_dictionaries(  # a client's answer to a request of the server's (elicitation/create)
    {"jsonrpc": st.just("2.0"), "id": st.integers(0, 3) | st.text(max_size=4) | JSON},
    optional={"result": st.fixed_dictionaries({"action": st.sampled_from(["accept", "decline", "cancel"]) | JSON},
                                              optional={"content": JSON}) | JSON, "error": JSON},
)
FORM_CONTENT = st.fixed_dictionaries({}, optional={"name": st.text(max_size=3) | JSON, "age": st.integers(-2, 3) | JSON,
                                                   "colour": st.sampled_from(["red", "blue"]) | JSON})
MODERN_META = {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientInfo": {"name": "fuzz", "version": "1"},
               "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}}
RESUME = st.fixed_dictionaries(  # a 2026-07-28 retry with answers to a question nobody asked this pane
    {"jsonrpc": st.just("2.0"), "id": st.integers(1, 10**6), "method": st.just("tools/call"), "params": st.fixed_dictionaries(
        {"name": st.sampled_from(["elicit", "touch", "nope"]) | st.text(max_size=8),
         "requestState": st.text(max_size=40) | st.sampled_from(["", "polter-1", "x" * 32]),
         "inputResponses": st.dictionaries(st.sampled_from(["polter-1", "polter-2"]) | st.text(max_size=8), st.one_of(
             st.fixed_dictionaries({"action": st.sampled_from(["accept", "decline", "cancel"]) | JSON},
                                   optional={"content": JSON}), JSON), max_size=3) | JSON,
         "_meta": st.just(MODERN_META)}, optional={"arguments": JSON})},
)
KINDS = st.sampled_from(["barred", "barred", "allowed", "client", "window", "resume"])
"""Who sends a body: a pane barred from the server, one allowed, a client answering, the window, a retry."""
WINDOW_ANSWER = st.fixed_dictionaries(  # the window's answer to a form it shows (/control/elicitations/{id})
    {"action": st.sampled_from(["accept", "accept", "accept", "decline", "cancel"]) | JSON},
    optional={"content": FORM_CONTENT | JSON},
)


@pytest.mark.parametrize(
    "bodies", [400, pytest.param(10_000, marks=[pytest.mark.e2e, pytest.mark.timeout(1200)], id="10000")]
)
async def test_fuzzed_params_of_the_utilities_and_elicitation_answers_never_crash_or_bypass(
    tmp_path: Path, bodies: int
) -> None:
    """``logging/setLevel``, ``completion/complete``, ``resources/subscribe``/``unsubscribe``/``read`` from a pane
    whose role denies the server and from one it allows, clients' answers to the server's requests, and the
    window's answers to a form: no 5xx; the barred pane is never answered, and no answer that does not fill the
    form in ever reaches the upstream."""

    roles = {**ROLES, "no-features": role("The features server is off limits", servers={"deny": ["features"]})}
    async with start_gateway(tmp_path, servers={"features": features_server(timeout=30)}, roles=roles) as harness, \
            controller(harness):
        barred, allowed, asker = [await harness.pane(name) for name in ("no-features", "open", "open")]
        sessions = {}
        async with harness.raw() as http:
            for name, pane in (("barred", barred), ("allowed", allowed)):
                opened = await http.post("/mcp/features", headers={"Accept": "application/json, text/event-stream",
                                                                   "Authorization": f"Bearer {pane.token}"}, json={
                    "jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
                        "clientInfo": {"name": "f", "version": "1"}}})
                sessions[name] = (pane.token, opened.headers["mcp-session-id"])
        reached_upstream: list[dict[str, Any]] = []
        timed_out: list[str] = []
        done = asyncio.Event()

        async def keep_a_form_open() -> None:  # the upstream asks again as soon as an answer comes back
            async with harness.client("features", asker.token) as client:
                while not done.is_set():
                    result = await client.call_tool("elicit", {"message": "Who?", "schema": FORM})
                    said = result.content[0].text
                    if result.is_error:  # no answer came within the upstream's timeout (a loaded machine)
                        timed_out.append(said)
                    elif not said.startswith("elicitation failed"):
                        reached_upstream.append(json.loads(said))

        keeper = asyncio.create_task(keep_a_form_open())
        await wait_until(lambda: harness.gateway.elicitations.pending(), message="the first form")
        subscribed_by_allowed: set[str] = set()
        statuses: list[int] = []

        def fuzz() -> None:
            http = HTTPConnection(*harness.url.removeprefix("http://").split(":"), timeout=30)
            try:

                @settings(max_examples=bodies // BATCH, deadline=None, suppress_health_check=list(HealthCheck),
                          database=None)
                @given(data=st.data())
                def some(data: st.DataObject) -> None:
                    for _ in range(BATCH):
                        one(data, data.draw(KINDS))

                def one(data: st.DataObject, kind: str) -> None:
                    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
                               "Mcp-Protocol-Version": "2025-11-25"}
                    if kind == "window":
                        pending = harness.gateway.elicitations.pending()
                        form_id = pending[0].id if pending else "e00000000"
                        message: Any = data.draw(WINDOW_ANSWER | JSON)
                        headers["Authorization"] = f"Bearer {harness.admin_token}"
                        path = f"/control/elicitations/{form_id}"
                    elif kind == "resume":
                        message = data.draw(RESUME)
                        token = (barred if data.draw(st.booleans()) else allowed).token
                        headers |= {"Authorization": f"Bearer {token}", "Mcp-Protocol-Version": "2026-07-28",
                                    "Mcp-Method": "tools/call"}
                        path = "/mcp/features"
                    else:
                        message = data.draw(CLIENT_ANSWER if kind == "client" else UTILITY_REQUEST)
                        token, session = sessions["allowed" if kind == "client" else kind]
                        headers |= {"Authorization": f"Bearer {token}", "Mcp-Session-Id": session}
                        path = "/mcp/features"
                    http.request("POST", path, json.dumps(message).encode("utf-8", "surrogatepass"), headers)
                    response = http.getresponse()
                    text = response.read().decode("utf-8", "replace")
                    statuses.append(response.status)
                    assert response.status < 500, (kind, message, response.status, text[:300])
                    method = message.get("method") if isinstance(message, dict) else None
                    if (kind == "barred" and method in REFUSED) or kind == "resume":  # nothing was asked: no answer
                        assert '"result"' not in text or '"isError":true' in text.replace(" ", ""), (message, text[:300])
                    if kind == "allowed" and method == "resources/subscribe" and '"result"' in text:
                        subscribed_by_allowed.add(str(message["params"]["uri"]))

                some()
            finally:
                http.close()

        try:
            await asyncio.to_thread(fuzz)
        finally:
            done.set()
            harness.gateway.elicitations.cancel_all("the fuzzing ended")
            await asyncio.wait_for(keeper, 30)
        assert len(statuses) >= bodies and {200, 202, 400, 422} <= set(statuses), sorted(set(statuses))
        assert reached_upstream, "no answer of the window's was ever passed on"
        assert all("did not answer within" in text for text in timed_out), timed_out  # no other error
        for answer in reached_upstream:  # what the upstream got is a decline, a cancel or a form filled in
            assert answer["action"] in ("accept", "decline", "cancel"), answer
            if answer["action"] == "accept":
                try:
                    check_answer(parse_form(FORM), answer["content"])
                except FormError as exc:
                    raise AssertionError(f"an answer that does not fill the form reached the upstream: {answer}") from exc
        async with harness.client("features", allowed.token) as client:
            state = json.loads((await client.call_tool("running", {})).content[0].text)
        assert set(state["subscribed"]) <= subscribed_by_allowed, (state["subscribed"], "the barred pane subscribed")
        rows = read_rows(harness.gateway.audit.path, pane=barred.pane.id)
        assert rows and all(row.decision == "deny" for row in rows if row.layer in ("resource", "completion")), rows
