"""The session's socket: its place on disk (the socket, the lock on the name, the record) and what windows say
through it.

The socket is 0600 in a 0700 folder and the peer's uid is checked. A window says hello (same Polter, same
protocol), then sends calls, which the :class:`~polter.host.call_table.CallTable` answers, and input: keys,
pastes, raw bytes, focus and sizes. Keys and pastes into an agent pane also become the lines the human typed,
the gateway's evidence for gates and phases: only what comes through this socket from the human's windows is
counted so.

A logout's logind may remove the runtime dir under a running session: :meth:`SessionSocket.keep_reachable`
makes the socket, lock and record again where the runtime dir is now, so ``polter ls`` finds the session.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Callable
from datetime import datetime

from pydantic import ValidationError

from polter import __version__
from polter.errors import PolterError, SessionError
from polter.host.call_table import CallTable
from polter.host.pane import HostPane
from polter.host.panes import Panes
from polter.host.questions import Questions
from polter.host.windows import Window, Windows, same_user
from polter.tasks import BackgroundTasks
from polter.wire import messages as wire
from polter.wire.record import SessionRecord
from polter.wire.registry import SessionFiles, SessionLock, sessions_folder

__all__ = ["SessionSocket"]

logger = logging.getLogger(__name__)

HELLO_TIMEOUT = 10.0
"""Seconds a connection has to say hello before it is refused."""


class SessionSocket:
    """The socket of the session ``files.name``. ``info()`` and ``state()`` are what a window is welcomed with;
    ``ending()`` says the session is ending (new windows are refused); ``typed(pane, lines)`` takes the lines the
    human typed into a pane."""

    def __init__(
        self,
        files: SessionFiles,
        *,
        started_at: datetime,
        windows: Windows,
        panes: Panes,
        questions: Questions,
        calls: CallTable,
        tasks: BackgroundTasks,
        info: Callable[[], wire.SessionInfo],
        state: Callable[[], wire.SessionState],
        ending: Callable[[], bool],
        typed: Callable[[HostPane, list[str]], None],
    ) -> None:
        self.files = files
        self._started_at = started_at
        self._windows = windows
        self._panes = panes
        self._questions = questions
        self._calls = calls
        self._tasks = tasks
        self._info = info
        self._state = state
        self._ending = ending
        self._typed = typed
        self._lock = SessionLock(files)
        self._server: asyncio.Server | None = None
        self._inode = 0

    @property
    def name(self) -> str:
        return self.files.name

    async def open(self) -> None:
        """Take the session's name and open its socket (raises :class:`SessionError` if the name is taken)."""
        self._lock.acquire()
        await self._listen()

    def close(self) -> None:
        """Stop listening and remove the session's files (the windows are closed by their owner)."""
        if self._server is not None:
            self._server.close()
        self.files.remove()
        self._lock.release()

    async def _listen(self) -> None:
        """Open the session's socket (0600) and write its record."""
        socket_path = self.files.socket
        socket_path.unlink(missing_ok=True)  # a socket left by a killed host (the lock said it is gone)
        old_umask = os.umask(0o177)
        try:
            self._server = await asyncio.start_unix_server(self._serve, path=str(socket_path), limit=wire.LINE_LIMIT)
        finally:
            os.umask(old_umask)
        os.chmod(socket_path, 0o600)
        self._inode = socket_path.stat().st_ino
        self.files.write_record(
            SessionRecord(
                name=self.name,
                pid=os.getpid(),
                version=__version__,
                started=self._started_at,
                cwd=os.getcwd(),
                executable=sys.executable,
            )
        )

    async def keep_reachable(self) -> None:
        """Make the session's socket, lock and record again if they were removed under it (a logout's logind
        removes the runtime dir; tmux makes its socket again on SIGUSR1): in the runtime dir as it is now, so the
        next ``polter ls`` finds the session. Windows attached meanwhile stay attached."""
        if self._server is None or self._ending():
            return
        try:
            if self.files.socket.stat().st_ino == self._inode and self._lock.held:
                return
        except OSError:
            pass
        try:
            files = SessionFiles(self.name, sessions_folder())
        except PolterError as exc:
            logger.warning("the session's files were removed and cannot be made again: %s", exc)
            return
        lock = SessionLock(files)
        if not (files == self.files and self._lock.held):
            try:
                lock.acquire()
            except SessionError as exc:  # another host took the name meanwhile
                logger.warning("the session's files were removed and another session took its name: %s", exc)
                return
            self._lock.release()
            self._lock = lock
        logger.warning("the session's files were removed (%s): made again in %s", self.files.socket, files.folder)
        self._server.close()
        self.files = files
        await self._listen()

    # -- one connection ----------------------------------------------------------------------------------

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        window = Window(reader, writer)
        try:
            if not same_user(writer):
                window.send(wire.Refused(reason="this session belongs to another user"))
                return
            self._windows.connect(window)
            if not await self._handshake(window):
                return
            while line := await reader.readline():
                try:
                    message = wire.decode_client(line)
                except ValidationError as exc:
                    logger.warning("a window sent a message that is not Polter's protocol: %s", exc)
                    continue
                self._received(window, message)
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            self._windows.disconnect(window)
            writer.close()

    async def _handshake(self, window: Window) -> bool:
        try:
            line = await asyncio.wait_for(window.reader.readline(), HELLO_TIMEOUT)
            hello = wire.decode_client(line)
        except (TimeoutError, ValidationError, ValueError):
            window.send(wire.Refused(reason="not a Polter window (it did not say hello)"))
            return False
        if not isinstance(hello, wire.Hello):
            window.send(wire.Refused(reason="a window must say hello first"))
            return False
        if hello.protocol != wire.PROTOCOL_VERSION or hello.version != __version__:
            window.send(
                wire.Refused(
                    reason=f"session {self.name} runs Polter {__version__} (protocol {wire.PROTOCOL_VERSION}) and "
                    f"this is Polter {hello.version} (protocol {hello.protocol}): attach with the Polter that "
                    f"started it ({sys.executable} -m polter attach {self.name}), or end the session with "
                    f"`polter kill {self.name}`"
                )
            )
            return False
        if self._ending():
            window.send(wire.Refused(reason=f"session {self.name} is ending"))
            return False
        if not hello.attach:
            window.send(wire.Welcome(info=self._info()))
            return True
        self._windows.attach(window, lambda: wire.Welcome(info=self._info(), state=self._state()))
        self._questions.window_attached()  # (the state carries the questions that wait)
        return True

    def _received(self, window: Window, message: wire.ClientMessage) -> None:
        match message:
            case wire.Call():
                self._tasks.run(self._answer(window, message), f"the call {message.method}")
            case wire.ResizeInput(pane=pane_id, columns=columns, lines=lines):
                self._windows.resized(window, pane_id, (columns, lines))
            case wire.KeyInput(pane=pane_id, key=key, character=character):
                if (pane := self._input_pane(window, pane_id)) is not None:
                    self._typed(pane, pane.key(key, character))
            case wire.PasteInput(pane=pane_id, text=text):
                if (pane := self._input_pane(window, pane_id)) is not None:
                    self._typed(pane, pane.paste(text))
            case wire.BytesInput(pane=pane_id, data=data):
                if (pane := self._input_pane(window, pane_id)) is not None:
                    pane.terminal.send(data.encode("latin-1"))
            case wire.FocusInput(pane=pane_id, focused=focused):
                if (pane := self._panes.find(pane_id)) is not None:
                    pane.terminal.focus(focused)

    async def _answer(self, window: Window, call: wire.Call) -> None:
        window.send(await self._calls.answer(window, call))

    def _input_pane(self, window: Window, pane_id: str) -> HostPane | None:
        self._windows.make_latest(window)
        return self._panes.find(pane_id)
