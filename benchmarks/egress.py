"""What the egress proxy costs a sandboxed pane, against references measured in the same run.

``polter egress`` runs as the session host runs it (a child process driven over stdin) with a real gateway
(``polter gateway`` as a subprocess, a pane under a role whose builtins allow the web). A loopback server
stands in for the web:

- latency: one connection, one 4-byte ping and its pong, then close; direct to the server (the reference),
  through the proxy to a declared loopback port (the proxy decides alone), and through the proxy to a host
  name the gateway decides (``--test-host`` maps it to the loopback server);
- throughput: one connection receiving 1 GiB, direct and tunnelled (CONNECT);
- memory: the proxy's PSS, RSS and private pages (``/proc/PID/smaps_rollup``) after the runs, next to ``python -c
  'import asyncio'`` measured at the same moment (PSS depends on what else shares the interpreter's pages).

Targets (issue 21): at most 5 ms added per connection (p50, declared loopback port), at least 100 MB/s through
one tunnel, under 10 MB PSS. Run: ``.venv/bin/python benchmarks/egress.py``. The last line is JSON.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROUNDS = 400
STREAM_BYTES = 1 << 30
CHUNK = 1 << 20


def serve(listener: socket.socket) -> None:
    """``ping`` → ``pong``; ``bulk`` → STREAM_BYTES of zeros; one request per connection."""
    payload = bytes(CHUNK)

    def handle(connection: socket.socket) -> None:
        with connection:
            request = connection.recv(16)
            if request == b"ping":
                connection.sendall(b"pong")
            elif request == b"bulk":
                for _ in range(STREAM_BYTES // CHUNK):
                    connection.sendall(payload)

    while True:
        connection, _ = listener.accept()
        threading.Thread(target=handle, args=(connection,), daemon=True).start()


def open_direct(port: int) -> socket.socket:
    connection = socket.create_connection(("127.0.0.1", port))
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return connection


def open_tunnel(path: str, authority: str) -> socket.socket:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    connection.connect(path)
    connection.sendall(f"CONNECT {authority} HTTP/1.1\r\nHost: {authority}\r\n\r\n".encode())
    head = b""
    while b"\r\n\r\n" not in head:
        chunk = connection.recv(4096)
        if not chunk:
            raise SystemExit(f"the proxy closed the tunnel to {authority}: {head!r}")
        head += chunk
    if not head.startswith(b"HTTP/1.1 200"):
        raise SystemExit(f"the proxy refused {authority}: {head!r}")
    return connection


def latency_ms(open_connection: object) -> tuple[float, float]:
    assert callable(open_connection)
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        connection = open_connection()
        connection.sendall(b"ping")
        if connection.recv(4) != b"pong":
            raise SystemExit("no pong")
        connection.close()
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    return statistics.median(times), times[int(len(times) * 0.95)]


def throughput_mb_s(connection: socket.socket) -> float:
    buffer = bytearray(CHUNK)
    received = 0
    start = time.perf_counter()
    connection.sendall(b"bulk")
    while received < STREAM_BYTES:
        got = connection.recv_into(buffer)
        if not got:
            break
        received += got
    elapsed = time.perf_counter() - start
    connection.close()
    if received != STREAM_BYTES:
        raise SystemExit(f"received {received} of {STREAM_BYTES} bytes")
    return received / elapsed / 1e6


def memory_kb(pid: int) -> dict[str, int]:
    fields = {}
    for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines()[1:]:
        name, _, value = line.partition(":")
        fields[name] = int(value.split()[0])
    return {"pss": fields["Pss"], "rss": fields["Rss"], "uss": fields["Private_Clean"] + fields["Private_Dirty"]}


def main() -> None:
    work = Path(tempfile.mkdtemp(prefix="polter-egress-bench-"))
    (work / "none.toml").write_text("[servers]\n")
    (work / "roles").mkdir()
    (work / "roles" / "browser.toml").write_text('description = "browses"\n[builtins]\ndefault = "allow"\n')
    env = {**os.environ, "POLTER_CONFIG_DIR": str(work / "config")}
    polter = [sys.executable, "-m", "polter"]
    listener = socket.create_server(("127.0.0.1", 0), backlog=512)
    port = listener.getsockname()[1]
    threading.Thread(target=serve, args=(listener,), daemon=True).start()
    gateway = subprocess.Popen(
        [*polter, "gateway", "--state-dir", str(work / "state"), "--servers", str(work / "none.toml"),
         "--roles-dir", str(work / "roles")],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
    )  # fmt: skip
    proxy = subprocess.Popen(
        [*polter, "egress", "--test-host", "web.test=127.0.0.1"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env,
    )  # fmt: skip
    reference = subprocess.Popen(
        [sys.executable, "-c", "import asyncio, sys; sys.stdin.read()"], stdin=subprocess.PIPE, env=env
    )
    try:
        assert gateway.stdout is not None and proxy.stdin is not None and proxy.stdout is not None
        line = gateway.stdout.readline()
        if "listening on" not in line:
            raise SystemExit(f"the gateway did not start: {line!r}")
        url = line.rsplit(" ", 1)[1].strip()
        created = json.loads(
            subprocess.run(
                [*polter, "panes", "register", "--role", "browser", "--json", "--state-dir", str(work / "state")],
                capture_output=True, text=True, check=True, env=env,
            ).stdout
        )  # fmt: skip
        if proxy.stdout.readline().strip() != "egress ready":
            raise SystemExit("the proxy did not start")
        path = str(work / "pane.sock")
        command = {"op": "add", "pane": created["pane"]["id"], "socket": path, "token": created["token"],
                   "gateway": url, "project": str(work), "role": "browser", "loopback_ports": [port]}  # fmt: skip
        proxy.stdin.write(json.dumps(command) + "\n")
        proxy.stdin.flush()
        reply = json.loads(proxy.stdout.readline())
        if not reply["ok"]:
            raise SystemExit(f"the proxy refused the pane: {reply}")
        latency_ms(lambda: open_tunnel(path, f"127.0.0.1:{port}"))  # warm up (threads, page cache)
        direct = latency_ms(lambda: open_direct(port))
        declared = latency_ms(lambda: open_tunnel(path, f"127.0.0.1:{port}"))
        decided = latency_ms(lambda: open_tunnel(path, f"web.test:{port}"))
        direct_rate = throughput_mb_s(open_direct(port))
        tunnel_rate = throughput_mb_s(open_tunnel(path, f"127.0.0.1:{port}"))
        proxy_memory = memory_kb(proxy.pid)
        reference_memory = memory_kb(reference.pid)
    finally:
        for process in (proxy, reference):
            if process.stdin is not None:
                process.stdin.close()
        proxy.wait(timeout=20)
        reference.wait(timeout=20)
        gateway.terminate()
        gateway.wait(timeout=20)
        shutil.rmtree(work, ignore_errors=True)
    print(f"{'direct':<28} {direct[0]:6.2f} ms p50  {direct[1]:6.2f} ms p95  (reference)")
    for name, (p50, p95) in (("proxy, declared loopback", declared), ("proxy, gateway decides", decided)):
        print(f"{name:<28} {p50:6.2f} ms p50  {p95:6.2f} ms p95  (+{p50 - direct[0]:.2f} ms p50; target +5 ms)")
    print(f"{'throughput direct':<28} {direct_rate:8.0f} MB/s")
    print(
        f"{'throughput tunnelled':<28} {tunnel_rate:8.0f} MB/s  ({tunnel_rate / direct_rate:.2f}x direct; "
        "target 100 MB/s)"
    )
    print(
        f"{'proxy memory':<28} {proxy_memory['pss'] / 1024:6.1f} MB PSS  {proxy_memory['rss'] / 1024:6.1f} MB RSS"
        f"  {proxy_memory['uss'] / 1024:.1f} MB its own"
        f"  (python -c 'import asyncio': {reference_memory['pss'] / 1024:.1f} / {reference_memory['rss'] / 1024:.1f};"
        " target < 10 MB PSS)"
    )
    print(
        json.dumps(
            {
                "benchmark": "egress",
                "rounds": ROUNDS,
                "direct_ms": {"p50": round(direct[0], 3), "p95": round(direct[1], 3)},
                "declared_loopback_ms": {"p50": round(declared[0], 3), "p95": round(declared[1], 3)},
                "gateway_decides_ms": {"p50": round(decided[0], 3), "p95": round(decided[1], 3)},
                "added_p50_ms": round(declared[0] - direct[0], 3),
                "added_p50_gateway_ms": round(decided[0] - direct[0], 3),
                "throughput_mb_s": {"direct": round(direct_rate), "tunnelled": round(tunnel_rate)},
                "proxy_kb": proxy_memory,
                "import_asyncio_kb": reference_memory,
            }
        )
    )


if __name__ == "__main__":
    main()
