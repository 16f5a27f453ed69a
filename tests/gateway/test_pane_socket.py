"""The panes' socket: the only way into the gateway from a pane's sandbox, and never to the control API."""

from __future__ import annotations

import stat
from pathlib import Path

import httpx
import pytest
from support.gateway import start_gateway

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}},
}
JSON_HEADERS = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"}


def through(socket: Path, token: str) -> httpx.AsyncClient:
    """A client that reaches the gateway as a pane's forwarder does: HTTP to 127.0.0.1:PORT over the Unix socket."""
    transport = httpx.AsyncHTTPTransport(uds=str(socket))
    headers = {"Authorization": f"Bearer {token}"}
    return httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1:9", headers=headers, timeout=30)


async def test_the_panes_socket_serves_a_pane_and_never_the_controls(tmp_path: Path) -> None:
    socket = tmp_path / "gateway" / "gateway.sock"
    async with start_gateway(tmp_path, pane_socket=socket) as harness:
        assert stat.S_IMODE(socket.stat().st_mode) == 0o600
        pane = await harness.pane("open")
        async with through(socket, pane.token) as http:
            assert (await http.post("/mcp/fixture", json=INIT, headers=JSON_HEADERS)).status_code == 200
        for token in (harness.admin_token, pane.token, "x" * 43):
            async with through(socket, token) as http:
                response = await http.post("/control/panes/" + pane.pane.id + "/role", json={"role": "coder"})
                assert response.status_code == 403, response.text
                assert "cannot be reached from inside a pane" in response.json()["error"]
        async with harness.raw(harness.admin_token) as http:  # the same admin token outside: the controls answer
            assert (await http.get("/control/panes")).status_code == 200
        assert (await harness.admin.panes())[0].role == "open"
    assert not socket.exists(), "the socket goes with the gateway"


@pytest.mark.parametrize("bad", ["not-a-folder"])
async def test_a_panes_socket_that_cannot_be_made_names_its_path(tmp_path: Path, bad: str) -> None:
    from polter.errors import ConfigError

    (tmp_path / bad).write_text("a file where a folder must be")
    with pytest.raises(ConfigError, match=bad):
        async with start_gateway(tmp_path, pane_socket=tmp_path / bad / "gateway.sock"):
            pass
