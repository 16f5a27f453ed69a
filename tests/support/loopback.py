"""A listening socket served in a thread until the test is done: each connection gets ``reply`` and is closed."""

from __future__ import annotations

import contextlib
import socket
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
