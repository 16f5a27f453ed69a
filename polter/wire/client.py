"""The window's end of a session's socket: the handshake, calls with replies, input, and events.

:class:`SessionClient` knows the protocol, not the UI: the app turns its events into widgets, and the
``polter ls`` / ``kill`` / ``attach`` commands use it too. Events are handed to ``on_event`` in the
order the host sent them, on the event loop; when the connection ends, ``on_lost`` is told why
(unless the client closed it itself).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from polter.errors import SessionError, SessionLost, SessionMissing
from polter.wire import messages as wire
from polter.wire.methods import CallParams
from polter.wire.registry import SessionFiles

__all__ = ["SessionClient"]

EventHandler = Callable[[BaseModel], None]
ResultT = TypeVar("ResultT")
CLOSED = "the session host closed the connection"


class SessionClient:
    """A connection to one session. Create with :meth:`connect`."""

    def __init__(
        self,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        welcome: wire.Welcome,
        on_event: EventHandler,
        on_lost: Callable[[str], None],
        closer: Callable[[], Awaitable[str | None]] | None = None,
    ) -> None:
        self._reader, self._writer = reader, writer
        self._closer = closer
        """Ends what carries the connection besides the stream (ssh, for a session on another host), and says how
        that ended when it ended by itself (ssh killed, its connection lost): why the connection was lost."""
        self.welcome = welcome
        self.on_event = on_event
        self.on_lost = on_lost
        self._replies: dict[int, asyncio.Future[Any]] = {}
        self._calls = 0
        self._closing = False
        self.closed = asyncio.Event()
        self._reading = asyncio.create_task(self._read(), name="polter-session-events")

    @classmethod
    async def connect(
        cls,
        files: SessionFiles,
        *,
        attach: bool = True,
        on_event: EventHandler = lambda event: None,
        on_lost: Callable[[str], None] = lambda reason: None,
        timeout: float = 10.0,
    ) -> SessionClient:
        """Connect to session ``files.name`` and say hello (raises :class:`SessionError` saying why not)."""
        try:
            reader, writer = await asyncio.wait_for(
                asyncio.open_unix_connection(str(files.socket), limit=wire.LINE_LIMIT), timeout
            )
        except (OSError, TimeoutError) as exc:
            raise SessionError(f"cannot reach session {files.name} at {files.socket}: {exc}") from exc
        return await cls.over(reader, writer, files.name, attach=attach, on_event=on_event, on_lost=on_lost,
                              timeout=timeout)  # fmt: skip

    @classmethod
    async def over(
        cls,
        reader: asyncio.StreamReader,
        writer: asyncio.StreamWriter,
        label: str,
        *,
        attach: bool = True,
        on_event: EventHandler = lambda event: None,
        on_lost: Callable[[str], None] = lambda reason: None,
        timeout: float = 10.0,
        closer: Callable[[], Awaitable[str | None]] | None = None,
    ) -> SessionClient:
        """Say hello to session ``label`` over a stream that reaches it (its socket, or a relay on another host);
        ``closer`` ends what carries the stream when the connection ends or fails."""
        writer.write(wire.encode(wire.Hello(attach=attach)))
        try:
            line = await asyncio.wait_for(reader.readline(), timeout)
            if not line:
                raise ConnectionError("the connection closed")
            answer = wire.decode_host(line)
        except (TimeoutError, ValidationError, ValueError, ConnectionError) as exc:
            await _close(writer, closer)
            raise SessionError(f"session {label} did not answer as a Polter session does: {exc}") from exc
        if isinstance(answer, wire.Refused):
            await _close(writer, closer)
            raise (SessionMissing if answer.missing else SessionError)(answer.reason)
        if not isinstance(answer, wire.Welcome):
            await _close(writer, closer)
            raise SessionError(f"session {label} answered {answer.type} to hello")
        return cls(reader, writer, answer, on_event, on_lost, closer)

    @property
    def state(self) -> wire.SessionState:
        if self.welcome.state is None:
            raise RuntimeError("this connection did not attach")
        return self.welcome.state

    # -- sending -----------------------------------------------------------------------------------

    def send(self, message: BaseModel) -> None:
        """Send input (no answer comes); dropped once the connection is closed."""
        if not self._writer.is_closing():
            self._writer.write(wire.encode(message))

    async def call(self, params: CallParams[ResultT]) -> ResultT:
        """Call the method of ``params`` (:mod:`polter.wire.methods`) in the host; its result, or
        :class:`SessionError` with the host's reason."""
        if self._writer.is_closing():
            raise SessionLost("the session is gone")
        self._calls += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._replies[self._calls] = future
        call = wire.Call(id=self._calls, method=params.method, params=params.model_dump(mode="json"))
        self._writer.write(wire.encode(call))
        result = await future
        try:
            validated: ResultT = params.result.validate_python(result)
        except ValidationError as exc:
            raise SessionError(f"the session host answered {params.method} with something else: {exc}") from exc
        return validated

    # -- receiving ---------------------------------------------------------------------------------

    async def _read(self) -> None:
        reason = CLOSED
        try:
            while line := await self._reader.readline():
                try:
                    message = wire.decode_host(line)
                except ValidationError as exc:
                    reason = f"the session host sent something that is not Polter's protocol: {exc}"
                    break
                if isinstance(message, wire.Reply):
                    future = self._replies.pop(message.id, None)
                    if future is not None and not future.done():
                        if message.error is not None:
                            future.set_exception(SessionError(message.error))
                        else:
                            future.set_result(message.result)
                    continue
                if isinstance(message, wire.Ended):
                    reason = message.reason
                self.on_event(message)
        except (ConnectionError, ValueError) as exc:
            reason = f"the connection to the session broke: {exc}"
        finally:
            for future in self._replies.values():
                if not future.done():
                    future.set_exception(SessionLost(reason))
            self._replies.clear()
            self._writer.close()
            if self._closer is not None and not self._closing:
                carrier_ended = await self._closer()
                if carrier_ended and reason == CLOSED:
                    reason = carrier_ended
            self.closed.set()
            if not self._closing:
                self.on_lost(reason)

    async def aclose(self) -> None:
        """Leave the session (detach): the host keeps running."""
        self._closing = True
        self._writer.close()
        with contextlib.suppress(ConnectionError):
            await self._writer.wait_closed()
        self._reading.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reading
        if self._closer is not None:
            await self._closer()
        self.closed.set()


async def _close(writer: asyncio.StreamWriter, closer: Callable[[], Awaitable[str | None]] | None) -> None:
    writer.close()
    if closer is not None:
        await closer()
