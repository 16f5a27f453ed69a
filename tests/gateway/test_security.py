"""Identity and isolation: tokens, the admin API, Host/Origin, and no route leaking another pane."""

from __future__ import annotations

import asyncio
import json
import re
import stat

import pytest
from starlette.routing import Route
from support.gateway import Harness
from support.waiting import wait_until

from polter.gateway.panes import hash_token
from polter.gateway.state import read_state, write_state

pytestmark = pytest.mark.asyncio(loop_scope="module")

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


async def test_mcp_needs_a_known_pane_token(harness: Harness) -> None:
    pane = await harness.pane("open")
    for token, status in ((None, 401), ("x" * 43, 401), (harness.admin_token, 401), (pane.token, 200)):
        async with harness.raw(token) as http:
            response = await http.post("/mcp/fixture", json=INIT, headers=JSON_HEADERS)
            assert response.status_code == status, (token, response.text)
            if status == 401:
                assert response.headers["www-authenticate"].startswith("Bearer")


async def test_control_accepts_only_the_admin_token(harness: Harness) -> None:
    pane = await harness.pane("open")
    for token, status in ((None, 401), ("y" * 43, 401), (pane.token, 403), (harness.admin_token, 200)):
        async with harness.raw(token) as http:
            assert (await http.get("/control/panes")).status_code == status


@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"Host": "evil.example:80"}, 421),
        ({"Host": "127.0.0.1.evil.example:80"}, 421),
        ({"Origin": "http://evil.example"}, 403),
        ({"Origin": "http://127.0.0.1.evil.example:1"}, 403),
        ({"Origin": "http://localhost:5173"}, 200),
    ],
)
async def test_host_and_origin_are_validated_on_every_route(
    harness: Harness, headers: dict[str, str], status: int
) -> None:
    pane = await harness.pane("open")
    async with harness.raw(pane.token, **headers) as http:
        assert (await http.post("/mcp/fixture", json=INIT, headers=JSON_HEADERS)).status_code == status
    async with harness.raw(harness.admin_token, **headers) as http:
        assert (await http.get("/control/status")).status_code == status


async def test_tokens_are_256_bit_and_only_their_hashes_are_kept(harness: Harness) -> None:
    created = await harness.pane("open")
    assert len(created.token) >= 43
    pane = harness.gateway.panes.get(created.pane.id)
    assert pane is not None and pane.token_hash == hash_token(created.token)
    assert created.token not in repr(vars(pane)), "the registry keeps no clear-text token"
    assert "token" not in (await harness.admin.pane(created.pane.id)).model_dump()


async def test_re_registration_accepts_the_callers_id_and_token(harness: Harness) -> None:
    first = await harness.admin.register("open", pane_id="left", title="L")
    await harness.admin.remove("left")
    again = await harness.admin.register("reader", pane_id="left", token=first.token)
    assert again.token == first.token and again.pane.id == "left"
    async with harness.client("fixture", first.token) as client:
        assert {t.name for t in (await client.list_tools()).tools} == {"read_notes", "pid", "slow"}
    from polter.errors import ControlError

    with pytest.raises(ControlError) as taken:
        await harness.admin.register("open", token=first.token)
    assert taken.value.status == 409


async def test_a_session_cannot_be_used_with_another_panes_token(harness: Harness) -> None:
    alpha, bravo = await harness.pane("open"), await harness.pane("open")
    async with harness.raw(alpha.token) as http:
        opened = await http.post("/mcp/fixture", json=INIT, headers=JSON_HEADERS)
        session = opened.headers["mcp-session-id"]
    async with harness.raw(bravo.token) as http:
        stolen = await http.post(
            "/mcp/fixture",
            headers={**JSON_HEADERS, "Mcp-Session-Id": session},
            json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"},
        )
    assert stolen.status_code == 404


async def test_state_file_is_private(tmp_path) -> None:
    from datetime import UTC, datetime

    from polter.gateway.models import GatewayState

    path = write_state(
        tmp_path / "s",
        GatewayState(url="http://127.0.0.1:1", pid=1, admin_token="t" * 43, started_at=datetime.now(UTC), version="0"),
    )
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert read_state(tmp_path / "s").admin_token == "t" * 43


async def test_no_route_reachable_with_pane_a_token_says_anything_about_pane_b(harness: Harness) -> None:
    """Enumerate every route of the app and try it with A's token, aimed at B wherever a path takes an id."""
    alpha = await harness.admin.register("open", pane_id="pane-alpha", title="Alpha Title")
    bravo = await harness.admin.register("asker", pane_id="pane-bravo-secret", title="Bravo Secret Title")
    await harness.admin.set_skills(bravo.pane.id, ["bravo-secret-skill"])
    await harness.admin.input(bravo.pane.id, "bravo secret words")
    secrets = [
        bravo.pane.id,
        "Bravo Secret",
        bravo.token,
        hash_token(bravo.token),
        "bravo-secret-skill",
        "bravo secret words",
    ]

    # B has an ask pending while A probes, so an ask id exists to aim at.
    events = asyncio.create_task(_drain(harness))
    await wait_until(lambda: harness.gateway.events.controllers >= 1, message="controller")
    async with harness.client("fixture", bravo.token) as bravo_client:
        pending = asyncio.create_task(bravo_client.call_tool("write_note", {"text": "bravo secret words"}))
        await wait_until(lambda: harness.gateway.asks.pending(), message="B's ask")
        ask_id = harness.gateway.asks.pending()[0].id
        values = {
            "pane": bravo.pane.id,
            "ask": ask_id,
            "elicitation": "e00000000",
            "request": "t000000000000",
            "adapter": "claude-code",
            "server": None,
        }
        probed = 0
        for route in harness.app.routes:
            assert isinstance(route, Route)
            names = re.findall(r"{(\w+)}", route.path)
            servers = list(harness.app.state.endpoints) + ["nope"] if "server" in names else [None]
            for server in servers:
                path = route.path
                for name in names:
                    path = path.replace(f"{{{name}}}", server if name == "server" else values[name])
                for method in sorted(route.methods or {"GET", "POST", "DELETE"}):
                    if method == "HEAD":
                        continue
                    body = await _probe(harness, alpha.token, method, path)
                    probed += 1
                    for secret in secrets:
                        assert secret not in body, f"{method} {path} leaked {secret!r}: {body[:300]}"
        # And through MCP proper: everything A can list or call about itself.
        for server in harness.app.state.endpoints:
            async with harness.client(server, alpha.token) as client:
                seen = [(await client.list_tools()).model_dump_json()]
                if server == "polter":
                    seen.append((await client.call_tool("whoami", {})).model_dump_json())
                else:
                    seen.append((await client.list_prompts()).model_dump_json())
                    seen.append((await client.list_resources()).model_dump_json())
                for text in seen:
                    assert not any(secret in text for secret in secrets), text[:300]
        assert probed >= 20
        await harness.admin.answer(ask_id, "deny")
        await pending
    events.cancel()


async def _drain(harness: Harness) -> None:
    async for _ in harness.admin.events():
        pass


async def _probe(harness: Harness, token: str, method: str, path: str) -> str:
    async with harness.raw(token) as http:
        if path.startswith("/mcp/"):
            for message in (
                INIT,
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "whoami", "arguments": {"pane": "pane-bravo-secret"}},
                },
            ):
                response = await http.request(
                    method, path, json=message, headers={**JSON_HEADERS, "Mcp-Protocol-Version": "2026-07-28"}
                )
                if response.status_code >= 500:
                    raise AssertionError(f"{method} {path}: {response.status_code}")
            return response.text
        payload = {
            "kind": "mcp_tool",
            "cli_tool": "mcp__fixture__write_note",
            "server": "fixture",
            "tool": "write_note",
            "arguments": {"pane": "pane-bravo-secret"},
        }
        response = await http.request(method, path, json=payload if method in ("POST", "PUT") else None)
        assert response.status_code < 500, (method, path, response.text)
        if path.startswith("/control"):
            assert response.status_code == 403, f"{method} {path} answered a pane token with {response.status_code}"
        return response.text + json.dumps(dict(response.headers))
