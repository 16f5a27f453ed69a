"""The relay: the host's end of a session reached from another machine (``ssh HOST polter relay NAME``).

A window elsewhere runs ``polter relay`` on the host through the user's own ``ssh``; its standard input and
output are that window's connection. The relay is a window of the host's own user as far as the session is
concerned: it connects to the session's Unix socket, where the host checks the peer's uid as for any window, so
it reaches only the SSH user's sessions. It passes on only the session protocol: every line from the window is
read as a window's message (:func:`~polter.session.protocol.decode_client`) before it goes on, and a line that is
not one, or one longer than :data:`~polter.session.protocol.LINE_LIMIT`, ends the relay (the session never sees
it, and runs on). What the host sends goes back as it came.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import Final

from pydantic import ValidationError

from polter import __version__
from polter.errors import SessionError
from polter.session import protocol as wire
from polter.session.registry import SessionFiles

__all__ = ["HELLO_TIMEOUT", "pump", "read_hello", "stdio_streams"]

HELLO_TIMEOUT: Final = 30.0
"""Seconds the relay waits for the window's hello (after that nobody is there)."""
CHUNK: Final = 256 * 1024


async def stdio_streams() -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """This process's standard input and output as streams (the SSH channel)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=wire.LINE_LIMIT)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin.buffer)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, sys.stdout.buffer)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    return reader, writer


async def read_hello(reader: asyncio.StreamReader) -> wire.Hello:
    """The window's first line: its hello, of this Polter's version (raises :class:`SessionError` saying why not)."""
    try:
        line = await asyncio.wait_for(reader.readline(), HELLO_TIMEOUT)
        hello = wire.decode_client(line)
    except (TimeoutError, ValidationError, ValueError) as exc:
        raise SessionError(f"not a Polter window (it did not say hello): {exc}") from None
    if not isinstance(hello, wire.Hello):
        raise SessionError("a window must say hello first")
    if hello.version != __version__ or hello.protocol != wire.PROTOCOL_VERSION:
        raise SessionError(
            f"this host runs Polter {__version__} (protocol {wire.PROTOCOL_VERSION}) and the window is Polter "
            f"{hello.version} (protocol {hello.protocol})"
        )
    return hello


async def pump(
    window_in: asyncio.StreamReader, window_out: asyncio.StreamWriter, files: SessionFiles, hello: wire.Hello
) -> str | None:
    """Connect to session ``files.name``, say the window's ``hello``, and pass lines both ways until one side
    ends. Returns why the window's side was cut off (a line that is not the protocol, or too long), None for a
    clean end (the window left, or the session closed the connection)."""
    try:
        session_in, session_out = await asyncio.open_unix_connection(str(files.socket), limit=wire.LINE_LIMIT)
    except OSError as exc:
        raise SessionError(f"cannot reach session {files.name} at {files.socket}: {exc}") from exc
    session_out.write(wire.encode(hello))

    async def upstream() -> str | None:
        number = 1
        while True:
            try:
                line = await window_in.readline()
            except ValueError:
                return f"line {number + 1} from the window is longer than {wire.LINE_LIMIT} bytes"
            if not line:
                return None
            number += 1
            try:
                wire.decode_client(line)
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(part) for part in first["loc"])
                return f"line {number} from the window is not Polter's session protocol ({where}: {first['msg']})"
            session_out.write(line)
            await session_out.drain()

    async def downstream() -> None:
        while chunk := await session_in.read(CHUNK):
            window_out.write(chunk)
            await window_out.drain()

    up = asyncio.create_task(upstream())
    down = asyncio.create_task(downstream())
    try:
        done, _ = await asyncio.wait({up, down}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        session_out.close()  # the session hears this window leave: it runs on
        for task in (up, down):
            task.cancel()
        with contextlib.suppress(asyncio.CancelledError, ConnectionError, OSError):
            await asyncio.gather(up, down, return_exceptions=True)
    if up in done and not up.cancelled() and up.exception() is None:
        return up.result()
    return None
