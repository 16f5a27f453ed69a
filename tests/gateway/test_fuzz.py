"""Hypothesis-fuzzed JSON-RPC bodies never crash the gateway and never turn a deny into an allow.

400 bodies in the fast tier; 10,000 in the end-to-end tier (CI), with the same assertions.
"""

from __future__ import annotations

import asyncio
import json
from http.client import HTTPConnection
from typing import Any

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.gateway import Harness

from polter.gateway.audit import read_rows

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


def _call(name: str, arguments: dict[str, Any]) -> str:
    return json.dumps({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": name, "arguments": arguments}})


VERSIONS = st.sampled_from(["2026-07-28", "2025-11-25", None, "1999-01-01"])


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

            @settings(max_examples=bodies, deadline=None, suppress_health_check=list(HealthCheck), database=None)
            @example(body=_call("write_note", {"text": "x"}), version="2026-07-28", use_session=False, endpoint="fixture")
            @example(body=_call("delete_all", {}), version="2025-11-25", use_session=True, endpoint="fixture")
            @example(body='{"jsonrpc": "2.0", "method": "tools/list"}', version="2025-11-25", use_session=True,
                     endpoint="fixture")  # a notification named like a request (found by this test)
            @given(body=BODIES, version=VERSIONS, use_session=st.booleans(), endpoint=st.sampled_from(
                ["fixture", "fixture", "polter"]))
            def one(body: str, version: str | None, use_session: bool, endpoint: str) -> None:
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

            one()
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
