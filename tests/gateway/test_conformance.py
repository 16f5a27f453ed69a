"""The official MCP conformance suite (``@modelcontextprotocol/conformance``, server scenarios, pending ones
included) against its own reference server, directly and through the gateway, in one run: with a role that
allows everything every scenario that passes directly passes through Polter; under a role that refuses one
tool, that tool's scenario fails with Polter's reason and nothing else changes."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from support.conformance import SUITE, ReferenceServer, failures, run_suite, token_relay
from support.gateway import role, start_gateway
from support.report import report
from support.waiting import wait_until

from polter.servers import HttpServer

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(1500)]

ROLES = {
    "everything": role("Everything allowed, sampling included", sampling={"default": "allow"}),
    "no-simple-text": role(
        "One tool refused", sampling={"default": "allow"}, tools={"deny": ["conformance/test_simple_text"]}
    ),
}


@pytest.fixture
def reference(tmp_path: Path) -> Iterator[ReferenceServer]:
    server = ReferenceServer(tmp_path / "reference-server.log")
    server.start()
    yield server
    server.stop()


async def test_every_server_scenario_passes_through_the_gateway_as_it_does_directly(
    tmp_path: Path, reference: ReferenceServer
) -> None:
    await wait_until(reference.listening, timeout=60, message="the reference server listens")
    direct = await run_suite(reference.url, tmp_path / "direct")
    # The reference server loses the answer of the call whose stream it closes (server-sse-polling): the
    # server's timeout ends that call, so it is short here.
    upstream = HttpServer(url=reference.url, timeout=5)
    async with start_gateway(tmp_path, servers={"conformance": upstream}, roles=ROLES) as harness:
        pane = await harness.pane("everything")
        async with token_relay(harness.app, pane.token) as url:
            through = await run_suite(f"{url}/mcp/conformance", tmp_path / "through")
        refused = await harness.pane("no-simple-text")
        async with token_relay(harness.app, refused.token) as url:
            restricted = {}
            for scenario in ("tools-call-simple-text", "tools-call-image", "tools-list"):
                restricted |= await run_suite(f"{url}/mcp/conformance", tmp_path / "restricted", scenario)

    passed_direct = sorted(name for name, checks in direct.items() if not failures(checks))
    passed_through = sorted(name for name, checks in through.items() if not failures(checks))
    report(
        f"MCP conformance {SUITE[1]}: {len(passed_direct)} of {len(direct)} server scenarios directly, "
        f"{len(passed_through)} of {len(through)} through Polter"
    )
    assert len(direct) == 32 and set(through) == set(direct)
    assert passed_direct == sorted(direct), {name: failures(direct[name]) for name in direct}
    assert passed_through == passed_direct, {
        name: failures(through[name]) for name in through if failures(through[name])
    }

    assert not failures(restricted["tools-call-image"]) and not failures(restricted["tools-list"])
    # (The scenario looks for text content only, so it counts the refusal as a pass; the answer is Polter's.)
    [check] = restricted["tools-call-simple-text"]
    result = check["details"]["result"]
    assert result["isError"] is True and result["_meta"]["polter"]["decision"] == "deny"
    assert result["content"][0]["text"].startswith(
        "Polter refused conformance/test_simple_text (forbidden, not broken)"
    )
    listed = [c["details"]["tools"] for c in restricted["tools-list"]]
    assert listed == [
        [tool for tool in c["details"]["tools"] if tool != "test_simple_text"] for c in through["tools-list"]
    ]
