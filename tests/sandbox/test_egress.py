"""The egress proxy for real: ``polter egress`` under its supervisor, a real gateway deciding by a role's web
rules, and a loopback server standing in for the web (its names mapped by the proxy's explicit test hook)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import pytest_asyncio
from support.gateway import Harness, start_gateway
from support.waiting import wait_until

from polter.gateway.audit import read_rows
from polter.sandbox.egress_supervisor import EgressSupervisor

SURFER = """
    description = "May browse, except denied.test"
    [builtins]
    default = "allow"
    deny = ["web(domain:denied.test)", "web(domain:model.test)"]
"""
TEST_HOSTS = {"allowed.test": "127.0.0.1", "denied.test": "127.0.0.1", "model.test": "127.0.0.1"}


@dataclass
class Web:
    """A loopback HTTP server that answers every request with the Host and path it received."""

    port: int
    hosts: list[str] = field(default_factory=list)


async def _answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, web: Web) -> None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode().split("\r\n")
        host = next((line.split(":", 1)[1].strip() for line in lines if line.lower().startswith("host:")), "")
        web.hosts.append(host)
        body = f"hello {host} {lines[0].split(' ')[1]}".encode()
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))
        await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


@pytest_asyncio.fixture
async def web() -> AsyncIterator[Web]:
    holder: list[Web] = []
    server = await asyncio.start_server(lambda r, w: _answer(r, w, holder[0]), "127.0.0.1", 0)
    holder.append(Web(server.sockets[0].getsockname()[1]))
    async with server:
        yield holder[0]


@pytest_asyncio.fixture
async def gateway(tmp_path: Path) -> AsyncIterator[Harness]:
    async with start_gateway(tmp_path, servers={}, roles={"surfer": SURFER}) as started:
        yield started


@dataclass
class Proxy:
    supervisor: EgressSupervisor
    socket: str
    pane_id: str
    downs: list[str]


@pytest_asyncio.fixture
async def proxy(gateway: Harness, web: Web, tmp_path: Path, isolated_dirs: dict[str, Path]) -> AsyncIterator[Proxy]:
    downs: list[str] = []
    supervisor = EgressSupervisor(on_down=downs.append, test_hosts=TEST_HOSTS)
    await supervisor.start()
    pane = await gateway.pane("surfer")
    path = str(isolated_dirs["runtime"] / "egress.sock")
    supervisor.add_pane(
        pane.pane.id,
        socket=path,
        token=pane.token,
        gateway=gateway.url,
        project=str(tmp_path),
        role="surfer",
        model_hosts=[f"model.test:{web.port}"],
        loopback_ports=[],
    )
    await supervisor.pane_ready(pane.pane.id)
    try:
        yield Proxy(supervisor, path, pane.pane.id, downs)
    finally:
        await supervisor.aclose()


async def exchange(path: str, request: bytes) -> bytes:
    """Send ``request`` on a fresh connection to the pane's socket; everything until the proxy closes."""
    reader, writer = await asyncio.open_unix_connection(path)
    writer.write(request)
    answer = await asyncio.wait_for(reader.read(), 30)
    writer.close()
    return answer


async def tunnel(path: str, authority: str, host: str) -> tuple[bytes, bytes]:
    """CONNECT, then a plain request through the tunnel: (the proxy's answer head, what came through)."""
    reader, writer = await asyncio.open_unix_connection(path)
    writer.write(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode())
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
    if not head.startswith(b"HTTP/1.1 200"):
        rest = await reader.read()
        writer.close()
        return head, rest
    writer.write(f"GET /through HTTP/1.1\r\nHost: {host}\r\n\r\n".encode())
    body = await asyncio.wait_for(reader.read(), 30)
    writer.close()
    return head, body


def header(answer: bytes, name: str) -> str:
    for line in answer.split(b"\r\n\r\n", 1)[0].decode().split("\r\n")[1:]:
        key, _, value = line.partition(":")
        if key.lower() == name.lower():
            return value.strip()
    raise AssertionError(f"no {name} header in {answer[:300]!r}")


async def test_an_allowed_host_answers_through_connect_and_plain_http(proxy: Proxy, gateway: Harness, web: Web) -> None:
    head, through = await tunnel(proxy.socket, f"allowed.test:{web.port}", "allowed.test")
    assert head.startswith(b"HTTP/1.1 200"), head
    assert through.endswith(b"hello allowed.test /through"), through
    plain = await exchange(
        proxy.socket, f"GET http://allowed.test:{web.port}/page?q=1 HTTP/1.1\r\nHost: evil.example\r\n\r\n".encode()
    )
    assert plain.startswith(b"HTTP/1.1 200") and plain.endswith(f"hello allowed.test:{web.port} /page?q=1".encode())
    rows = read_rows(gateway.gateway.audit.path, pane=proxy.pane_id)
    assert [(row.builtin, row.target, row.decision) for row in rows] == [
        ("web", f"https://allowed.test:{web.port}/", "allow"),
        ("web", f"http://allowed.test:{web.port}/page?q=1", "allow"),
    ]
    assert all(row.reason.startswith("[egress]") for row in rows)


async def test_a_denied_host_gets_403_naming_the_role_and_the_rule(proxy: Proxy, gateway: Harness, web: Web) -> None:
    head, body = await tunnel(proxy.socket, f"Denied.Test.:{web.port}", "denied.test")
    assert head.startswith(b"HTTP/1.1 403"), head
    sentence = body.decode().strip()
    assert sentence.startswith("Polter: the web host denied.test is not allowed: the role surfer denies"), sentence
    assert 'rule builtins.deny["web(domain:denied.test)"]' in sentence, sentence
    assert header(head, "X-Polter-Reason") == sentence
    assert header(head, "X-Polter-Rule").startswith("builtins.deny")
    plain = await exchange(proxy.socket, f"GET http://denied.test:{web.port}/ HTTP/1.1\r\n\r\n".encode())
    assert plain.startswith(b"HTTP/1.1 403") and b"surfer" in plain
    assert web.hosts == [], "nothing reached the denied host"
    rows = read_rows(gateway.gateway.audit.path, pane=proxy.pane_id)
    assert [(row.target, row.decision) for row in rows] == [
        (f"https://denied.test:{web.port}/", "deny"),
        (f"http://denied.test:{web.port}/", "deny"),
    ]


async def test_a_declared_model_host_is_allowed_by_the_proxy_and_audited(
    proxy: Proxy, gateway: Harness, web: Web
) -> None:
    head, through = await tunnel(proxy.socket, f"model.test:{web.port}", "model.test")
    assert head.startswith(b"HTTP/1.1 200") and through.endswith(b"hello model.test /through"), (head, through)

    def rows() -> list[str]:
        return [row.name or "" for row in read_rows(gateway.gateway.audit.path, pane=proxy.pane_id)]

    await wait_until(lambda: len(rows()) == 1, message="the model host's audit row")
    assert f"model.test:{web.port}" in rows()[0]
    [row] = read_rows(gateway.gateway.audit.path, pane=proxy.pane_id)
    assert row.decision == "allow" and "model API" in (row.reason or ""), row


async def test_loopback_only_on_a_declared_port(proxy: Proxy, gateway: Harness, web: Web, tmp_path: Path) -> None:
    head, body = await tunnel(proxy.socket, f"127.0.0.1:{web.port}", "127.0.0.1")
    assert head.startswith(b"HTTP/1.1 403") and b"loopback" in body and b"surfer" in body, (head, body)
    assert header(head, "X-Polter-Rule") == "polter:egress-loopback"
    gateway_port = gateway.url.rsplit(":", 1)[1]
    head, body = await tunnel(proxy.socket, f"localhost:{gateway_port}", "localhost")
    assert head.startswith(b"HTTP/1.1 403") and b"gateway" in body
    for forbidden in ("169.254.169.254:80", "0.0.0.0:80", "[::ffff:127.0.0.1]:80", "127.0.0.2:80"):
        head, body = await tunnel(proxy.socket, forbidden, "x")
        assert head.startswith(b"HTTP/1.1 403"), (forbidden, head, body)
    assert web.hosts == []

    def refusals() -> list[tuple[str | None, str]]:
        rows = read_rows(gateway.gateway.audit.path, pane=proxy.pane_id)
        return [(row.rule, row.decision) for row in rows]

    # every connection the proxy refused by itself is an audit row too, with its rule
    await wait_until(lambda: len(refusals()) == 6, message=lambda: f"the refusals' audit rows: {refusals()}")
    assert set(refusals()) >= {("polter:egress-loopback", "deny"), ("polter:egress-gateway", "deny")}
    assert all(decision == "deny" for _rule, decision in refusals())
    pane = await gateway.pane("surfer")
    proxy.supervisor.add_pane(
        pane.pane.id,
        socket=proxy.socket + "2",
        token=pane.token,
        gateway=gateway.url,
        project=str(tmp_path),
        role="surfer",
        loopback_ports=[web.port],
    )
    await proxy.supervisor.pane_ready(pane.pane.id)
    for authority in (f"127.0.0.1:{web.port}", f"localhost:{web.port}"):
        head, through = await tunnel(proxy.socket + "2", authority, "local")
        assert head.startswith(b"HTTP/1.1 200") and through.endswith(b"hello local /through"), (authority, through)


async def test_without_a_gateway_every_decision_is_refused(proxy: Proxy, web: Web) -> None:
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()

    async def garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nnot json!")
        await writer.drain()
        writer.close()

    liar = await asyncio.start_server(garbage, "127.0.0.1", 0)
    async with liar:
        for url in (f"http://127.0.0.1:{port}", f"http://127.0.0.1:{liar.sockets[0].getsockname()[1]}"):
            proxy.supervisor.set_gateway(url)
            await proxy.supervisor.stats()  # answered after every earlier command: the new URL is in force
            head, body = await tunnel(proxy.socket, f"allowed.test:{web.port}", "allowed.test")
            assert head.startswith(b"HTTP/1.1 403") and b"gave no verdict" in body, (url, head, body)
    assert web.hosts == []


GARBAGE = {
    "tls-hello": b"\x16\x03\x01\x02\x00garbage\r\n\r\n",
    "origin-form": b"GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
    "https-url": b"GET https://allowed.test/ HTTP/1.1\r\n\r\n",
    "no-port": b"CONNECT allowed.test HTTP/1.1\r\n\r\n",
    "disguised-ip": b"CONNECT 127.1:80 HTTP/1.1\r\n\r\n",
    "empty-label": b"CONNECT a..b:443 HTTP/1.1\r\n\r\n",
    "not-http": b"BREW /pot HTCPCP/1.0\r\n\r\n",
    "folded-header": b"GET http://allowed.test/ HTTP/1.1\r\n bad header\r\n\r\n",
    "huge-head": b"GET http://allowed.test/ HTTP/1.1\r\nX-Long: " + b"a" * 40000 + b"\r\n\r\n",
}


@pytest.mark.parametrize("request_bytes", list(GARBAGE.values()), ids=list(GARBAGE))
async def test_garbage_gets_400_and_the_proxy_carries_on(proxy: Proxy, web: Web, request_bytes: bytes) -> None:
    answer = await exchange(proxy.socket, request_bytes)
    assert answer.startswith(b"HTTP/1.1 400") and b"Polter" in answer, answer[:300]
    head, through = await tunnel(proxy.socket, f"allowed.test:{web.port}", "allowed.test")
    assert head.startswith(b"HTTP/1.1 200"), head


async def test_a_killed_proxy_is_restarted_and_the_same_socket_works(proxy: Proxy, web: Web) -> None:
    first = proxy.supervisor.pid
    assert first is not None
    os.kill(first, signal.SIGKILL)
    await wait_until(lambda: proxy.downs, message="on_down")
    assert "SIGKILL" in proxy.downs[0]
    await wait_until(lambda: proxy.supervisor.pid not in (None, first), message="a new proxy")
    await proxy.supervisor.pane_ready(proxy.pane_id)
    head, through = await tunnel(proxy.socket, f"allowed.test:{web.port}", "allowed.test")
    assert head.startswith(b"HTTP/1.1 200") and through.endswith(b"hello allowed.test /through")


async def test_closing_stdin_stops_the_proxy_and_removes_its_sockets(isolated_dirs: dict[str, Path]) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "polter", "egress",
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    assert await asyncio.wait_for(process.stdout.readline(), 30) == b"egress ready\n"
    path = isolated_dirs["runtime"] / "p.sock"
    command = {"op": "add", "pane": "p1", "socket": str(path), "token": "t", "gateway": "http://127.0.0.1:9",
               "project": "/", "role": "coder"}  # fmt: skip
    process.stdin.write(json.dumps(command).encode() + b"\n{not json\n")
    assert json.loads(await process.stdout.readline()) == {"ok": True, "op": "add", "pane": "p1"}
    assert json.loads(await process.stdout.readline())["ok"] is False
    assert path.is_socket() and path.stat().st_mode & 0o777 == 0o600
    process.stdin.close()
    assert await asyncio.wait_for(process.wait(), 30) == 0
    assert not path.exists()


async def test_a_removed_pane_loses_its_socket(proxy: Proxy, web: Web) -> None:
    proxy.supervisor.remove_pane(proxy.pane_id)
    stats = await proxy.supervisor.stats()  # answered after the removal
    assert stats["panes"] == 0
    assert not Path(proxy.socket).exists()
    with pytest.raises(OSError):
        await asyncio.open_unix_connection(proxy.socket)
