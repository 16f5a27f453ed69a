"""The connections to a session (attached windows, and commands that only call) and what the host sends them.

:class:`Windows` owns them: who is attached, the events every attached window gets, the notices kept for the
next window while none is attached, each pane's frames (skipped for a window whose socket is full, and made
up with a whole screen once it drained), and which window's sizes the panes take (the one that most
recently typed or attached: tmux's "latest"). It also keeps what the windows show of the session as a whole:
the layout, and the pane the last window focused and zoomed (the ``layout`` and ``view`` calls).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import socket
import struct
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Final

from pydantic import BaseModel

from polter.tasks import BackgroundTasks
from polter.wire import messages as wire
from polter.wire import methods
from polter.wire.frames import StyleTable, WindowStyles, encode_frame

if TYPE_CHECKING:
    from polter.host.call_table import CallTable
    from polter.host.pane import HostPane

__all__ = ["UNSEEN_NOTICES", "WINDOW_BUFFER_LIMIT", "Window", "Windows", "same_user"]

WINDOW_BUFFER_LIMIT: Final = 4 * 1024 * 1024
"""Bytes a window may have waiting on its socket before its frames are skipped (it gets a whole
screen once it has caught up): a stalled window must not make the host buffer without bound."""
UNSEEN_NOTICES: Final = 20
"""Notices kept for the next window while none is attached (the newest)."""


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
        self.catching_up: asyncio.Task[None] | None = None

    def send(self, message: BaseModel) -> None:
        if self.writer.is_closing():
            return
        self.writer.write(wire.encode(message))

    @property
    def stalled(self) -> bool:
        transport = self.writer.transport
        return transport.is_closing() or transport.get_write_buffer_size() > WINDOW_BUFFER_LIMIT


class Windows:
    """The session's connections. ``panes()`` gives the session's panes in order (for whole screens and
    sizes); ``on_layout`` runs when a window changed the layout (the session saves it)."""

    def __init__(
        self,
        panes: Callable[[], Iterable[HostPane]],
        *,
        layout: wire.LayoutMode,
        tasks: BackgroundTasks,
        on_layout: Callable[[], None],
    ) -> None:
        self._panes = panes
        self._tasks = tasks
        self._on_layout = on_layout
        self._connected: set[Window] = set()
        self.latest: Window | None = None
        """The window whose sizes the panes take."""
        self.styles = StyleTable()
        """Style numbers as frames carry them (each window learns each number once)."""
        self._unseen: deque[wire.Notice] = deque(maxlen=UNSEEN_NOTICES)
        """Notices given while no window was attached: the next window to attach gets them."""
        self.layout: wire.LayoutMode = layout
        self.active: str | None = None
        """The pane the last window had the focus in (the next window to attach starts there)."""
        self.zoomed: str | None = None

    def register_calls(self, calls: CallTable) -> None:
        calls.register(methods.LayoutParams, self._set_layout)
        calls.register(methods.ViewParams, self._view)

    # -- connections --------------------------------------------------------------------------------------

    def connect(self, window: Window) -> None:
        self._connected.add(window)

    def disconnect(self, window: Window) -> None:
        """``window`` is gone: the panes take the sizes of the attached window that remains, if any."""
        self._connected.discard(window)
        if self.latest is window:
            self.latest = None
            successor = next((other for other in self._connected if other.attached), None)
            if successor is not None:
                self.make_latest(successor)

    def __iter__(self) -> Iterator[Window]:
        return iter(list(self._connected))

    def __len__(self) -> int:
        return len(self._connected)

    @property
    def attached(self) -> list[Window]:
        return [window for window in self._connected if window.attached]

    @property
    def any_attached(self) -> bool:
        return any(window.attached for window in self._connected)

    def attach(self, window: Window, welcome: Callable[[], wire.Welcome]) -> None:
        """``window`` attaches: the session (as ``welcome()`` says it, with this window among the attached),
        every pane's whole screen and the notices it missed."""
        window.attached = True
        window.send(welcome())
        for pane in self._panes():
            self.full_frame(window, pane)
        while self._unseen:
            window.send(self._unseen.popleft())
        self.latest = window  # its sizes arrive next, and apply

    async def close_all(self) -> None:
        """The session ends: what was sent reaches each window (a little while at most), then it closes."""
        for window in list(self._connected):
            with contextlib.suppress(ConnectionError, RuntimeError):
                await asyncio.wait_for(window.writer.drain(), 2)
            window.writer.close()

    # -- what every window is told ------------------------------------------------------------------------

    def broadcast(self, message: BaseModel) -> None:
        for window in self._connected:
            if window.attached:
                window.send(message)

    def notify(self, notice: wire.Notice) -> None:
        """Tell the windows; with none attached (a session that is starting, or detached), the next one."""
        if self.any_attached:
            self.broadcast(notice)
        else:
            self._unseen.append(notice)

    # -- frames -------------------------------------------------------------------------------------------

    def frame(self, pane: HostPane, dirty: set[int] | None) -> None:
        """Rows ``dirty`` of ``pane`` changed (``None``: all): each attached window gets them, unless it fell behind."""
        screen = pane.terminal.screen
        if screen is None:
            return
        for window in self._connected:
            if not window.attached:
                continue
            if window.stalled or window.behind:
                self._fall_behind(window, pane.id)
                continue
            window.send(wire.FrameEvent(pane=pane.id, frame=encode_frame(screen, dirty, self.styles, window.styles)))

    def full_frame(self, window: Window, pane: HostPane) -> None:
        screen = pane.terminal.screen
        if screen is not None:
            frame = encode_frame(screen, None, self.styles, window.styles)
            window.send(wire.FrameEvent(pane=pane.id, frame=frame))

    def _fall_behind(self, window: Window, pane_id: str) -> None:
        """Skip a stalled window's frames; once its socket drained, it gets each skipped pane whole."""
        window.behind.add(pane_id)
        if window.catching_up is None or window.catching_up.done():

            async def catch_up() -> None:
                with contextlib.suppress(ConnectionError):
                    await window.writer.drain()  # until the socket took all but a quarter of the limit
                behind, window.behind = window.behind, set()
                for pane in self._panes():
                    if pane.id in behind:
                        self.full_frame(window, pane)

            window.catching_up = self._tasks.run(catch_up(), "catching a window up")

    # -- sizes --------------------------------------------------------------------------------------------

    def make_latest(self, window: Window) -> None:
        """``window`` typed or attached: the panes take the sizes it gives them."""
        if self.latest is window:
            return
        self.latest = window
        for pane in self._panes():
            size = window.sizes.get(pane.id)
            if size is not None and size != pane.size:
                pane.resize(*size)

    def size_of(self, pane: HostPane) -> tuple[int, int] | None:
        """The size the latest window gives ``pane`` (None: it gave none yet)."""
        return self.latest.sizes.get(pane.id) if self.latest is not None else None

    def resized(self, window: Window, pane_id: str, size: tuple[int, int]) -> None:
        """``window`` gives pane ``pane_id`` a size: it applies if that window is the latest (or the pane's
        program has not started: it starts at the first size it is given)."""
        window.sizes[pane_id] = size
        pane = next((pane for pane in self._panes() if pane.id == pane_id), None)
        if pane is not None and (window is self.latest or not pane.terminal.started):
            pane.resize(*size)

    # -- the calls ----------------------------------------------------------------------------------------

    async def _set_layout(self, window: Window, params: methods.LayoutParams) -> None:
        self.layout = params.layout
        for other in self._connected:
            if other is not window and other.attached:
                other.send(wire.LayoutEvent(layout=params.layout))
        self._on_layout()

    async def _view(self, window: Window, params: methods.ViewParams) -> None:
        self.active, self.zoomed = params.active, params.zoomed


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
