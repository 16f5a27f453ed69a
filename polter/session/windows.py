"""One connection to a session (an attached window, or a command that only calls), and the checks on
who may connect."""

from __future__ import annotations

import asyncio
import os
import socket
import struct
from typing import Final

from pydantic import BaseModel

from polter.session import protocol as wire
from polter.terminal.frames import WindowStyles

__all__ = ["WINDOW_BUFFER_LIMIT", "Window", "same_user"]

WINDOW_BUFFER_LIMIT: Final = 4 * 1024 * 1024
"""Bytes a window may have waiting on its socket before its frames are skipped (it gets a whole
screen once it has caught up): a stalled window must not make the host buffer without bound."""


class Window:
    """One connection to the session: an attached window, or a command (``ls``, ``kill``) that only calls."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        writer.transport.set_write_buffer_limits(high=WINDOW_BUFFER_LIMIT)  # drain() waits until it is a quarter
        self.attached = False
        self.styles = WindowStyles()
        self.sizes: dict[str, tuple[int, int]] = {}
        """The size this window gives each pane."""
        self.looking_at: str | None = None
        """The pane this window has focused (the ``looking`` call), and whether its terminal has the focus: the
        human looks at that pane, so it needs no notification."""
        self.app_focused = True
        self.terminal_notifies = False
        """Its terminal raises a desktop notification itself (OSC 9/777/99); a bell does not."""
        self.behind: set[str] = set()
        """Panes whose frames were skipped while the window's socket was full: they get a whole screen."""
        self._catching_up: asyncio.Task[None] | None = None

    def send(self, message: BaseModel) -> None:
        if self.writer.is_closing():
            return
        self.writer.write(wire.encode(message))

    @property
    def stalled(self) -> bool:
        transport = self.writer.transport
        return transport.is_closing() or transport.get_write_buffer_size() > WINDOW_BUFFER_LIMIT


def same_user(writer: asyncio.StreamWriter) -> bool:
    """Whether the peer of a Unix socket runs as this user (SO_PEERCRED; other platforms trust the
    socket's mode and its private folder)."""
    sock: socket.socket | None = writer.get_extra_info("socket")
    peercred = getattr(socket, "SO_PEERCRED", None)
    if sock is None or peercred is None:
        return True
    credentials = sock.getsockopt(socket.SOL_SOCKET, peercred, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", credentials)
    return uid == os.getuid()
