"""Loopback servers for tests: a listening socket served in a thread until the test is done, a free port, a server
in a child process."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
from collections.abc import Iterator


@contextlib.contextmanager
def answering(server: socket.socket, reply: bytes = b"") -> Iterator[socket.socket]:
    """Serve ``server`` (TCP or Unix, already listening) until the block ends, then close it."""
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = server.accept()
            except TimeoutError:
                continue
            with connection:
                if reply:
                    connection.sendall(reply)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        stop.set()
        thread.join()
        server.close()


def free_port() -> int:
    """A loopback TCP port nobody listens on now (the kernel's pick)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


class ServerProcess:
    """A server in a child process on a free loopback port: ``url`` of its MCP endpoint, ``listening()`` to wait
    on, ``stop()`` to kill it (set ``process`` when it starts)."""

    def __init__(self) -> None:
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def listening(self) -> bool:
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                return True
        except OSError:
            return False

    def stop(self) -> None:
        """Kill the server, and its whole process group when it leads one (``start_new_session=True``: a
        launcher such as tsx runs the server in a child of its own, which would outlive it)."""
        if self.process is None:
            return
        if self.process.returncode is None:  # not reaped yet, so its pid (and a group it leads) is still its own
            with contextlib.suppress(ProcessLookupError):  # it leads no group
                os.killpg(self.process.pid, signal.SIGKILL)
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
        self.process.wait(timeout=20)
