"""uvicorn's server for a process that owns its signals (the gateway, the Terraria backend's local servers)."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import uvicorn

__all__ = ["EmbeddedServer"]


class EmbeddedServer(uvicorn.Server):
    """A uvicorn server without its signal handlers: they re-raise SIGINT/SIGTERM after shutting down,
    which kills the process before its own cleanup runs."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield
