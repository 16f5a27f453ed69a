"""The relay: the host's end of a session reached from another machine (``ssh HOST polter relay NAME``).

A window elsewhere runs ``polter relay`` on the host through the user's own ``ssh``; its standard input and
output are that window's connection. The relay is a window of the host's own user as far as the session is
concerned: it connects to the session's Unix socket, where the host checks the peer's uid as for any window, so
it reaches only the SSH user's sessions. It passes on only the session protocol: every line from the window is
checked to be one of a window's messages, field by field (:func:`window_line_problem`), before it goes on, and a
line that is not one, or one longer than :data:`LINE_LIMIT`, ends the relay (the session never sees it, and runs
on). What the host sends goes back as it came.

Standard library only, and no asyncio: the relay starts while the window waits for its first frame, and
pydantic's models (:mod:`polter.wire.messages`) cost half a second to import. The window's messages are
few and flat, so they are described here as a table (:data:`WINDOW_MESSAGES`), which a test holds to the
protocol's models: whatever this table lets through, the models accept.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Final

from polter import __version__
from polter.wire.installed import this_installation

__all__ = [
    "HELLO_TIMEOUT",
    "LINE_LIMIT",
    "PROTOCOL_VERSION",
    "WINDOW_MESSAGES",
    "greeting_line",
    "hello_problem",
    "pump",
    "read_line",
    "window_line_problem",
    "write_all",
]

PROTOCOL_VERSION: Final = 4
"""Bumped whenever a message changes shape; a window and a host of different versions refuse each other."""
LINE_LIMIT: Final = 64 * 1024 * 1024
"""The longest message either side reads (a block of scrollback rows is the largest)."""
HELLO_TIMEOUT: Final = 30
"""Seconds the relay waits for the window's hello (after that nobody is there)."""
CHUNK: Final = 256 * 1024


@dataclass(frozen=True)
class Field:
    """A field of a window's message: the JSON it takes (``kind`` names it), and whether it must be there."""

    kind: str
    accepts: Callable[[Any], bool]
    required: bool = True

    def optional(self) -> Field:
        return Field(self.kind, self.accepts, required=False)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


TEXT: Final = Field("a string", lambda value: isinstance(value, str))
TEXT_OR_NULL: Final = Field("a string or null", lambda value: value is None or isinstance(value, str))
FLAG: Final = Field("true or false", lambda value: isinstance(value, bool))
NUMBER: Final = Field("an integer", _is_int)
SIZE: Final = Field("an integer of at least 1", lambda value: _is_int(value) and value >= 1)
OBJECT: Final = Field("an object", lambda value: isinstance(value, dict))

WINDOW_MESSAGES: Final[dict[str, dict[str, Field]]] = {
    "hello": {"protocol": NUMBER.optional(), "version": TEXT.optional(), "attach": FLAG.optional()},
    "key": {"pane": TEXT, "key": TEXT, "character": TEXT_OR_NULL.optional()},
    "paste": {"pane": TEXT, "text": TEXT},
    "bytes": {"pane": TEXT, "data": TEXT},
    "focus": {"pane": TEXT, "focused": FLAG},
    "resize": {"pane": TEXT, "columns": SIZE, "lines": SIZE},
    "call": {"id": NUMBER, "method": TEXT, "params": OBJECT.optional()},
}
"""A window's messages (``polter.wire.messages.ClientMessage``): each type's fields (any other is refused)."""


def _unicode(value: Any) -> bool:
    """No lone surrogates anywhere (JSON's ``\\ud800`` parses here, but the protocol's reader refuses it)."""
    if isinstance(value, str):
        try:
            value.encode()
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, dict):
        return all(_unicode(key) and _unicode(item) for key, item in value.items())
    if isinstance(value, list):
        return all(_unicode(item) for item in value)
    return True


def _no_constants(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def window_line_problem(line: bytes) -> str | None:
    """What makes ``line`` not one of a window's messages (``where: what``), or None when it is one."""
    try:
        message = json.loads(line, parse_constant=_no_constants)
    except (ValueError, RecursionError) as exc:
        return f"not JSON: {exc}"
    if not isinstance(message, dict):
        return "not a JSON object"
    kind = message.get("type")
    fields = WINDOW_MESSAGES.get(kind) if isinstance(kind, str) else None
    if fields is None:
        return f"type: not a window's message type ({kind!r})"
    for name, value in message.items():
        field = fields.get(name)
        if name == "type":
            continue
        if field is None:
            return f"{kind}.{name}: no such field"
        if not field.accepts(value):
            return f"{kind}.{name}: must be {field.kind}"
    missing = [name for name, field in fields.items() if field.required and name not in message]
    if missing:
        return f"{kind}.{missing[0]}: missing"
    if not _unicode(message):
        return f"{kind}: a string is not Unicode (a lone surrogate)"
    return None


def greeting_line() -> bytes:
    """The relay's first line (``polter.wire.messages.RelayGreeting``): which Polter answers here."""
    here = this_installation()
    greeting = {"type": "relay", "version": __version__, "protocol": PROTOCOL_VERSION}
    return json.dumps({**greeting, "clone": here.clone, "commit": here.commit}).encode() + b"\n"


def hello_problem(line: bytes) -> str | None:
    """Why the window's first line is not the hello of this Polter's version (None: it is)."""
    problem = window_line_problem(line) if line else "the window ended"
    if problem is not None:
        return f"not a Polter window (it did not say hello): {problem}"
    hello = json.loads(line)
    if hello["type"] != "hello":
        return "a window must say hello first"
    version, protocol = hello.get("version", __version__), hello.get("protocol", PROTOCOL_VERSION)
    if version != __version__ or protocol != PROTOCOL_VERSION:
        return (
            f"this host runs Polter {__version__} (protocol {PROTOCOL_VERSION}) and the window is Polter {version} "
            f"(protocol {protocol})"
        )
    return None


def read_line(stream: BinaryIO, timeout: float | None = None) -> bytes:
    """One line of at most :data:`LINE_LIMIT` bytes (longer: raises ``ValueError``); ``timeout``: seconds to wait
    for it (raises ``TimeoutError``)."""

    def expired(_signal: int, _frame: Any) -> None:
        raise TimeoutError(f"nothing came within {timeout:.0f} s")

    if timeout is not None:
        previous = signal.signal(signal.SIGALRM, expired)
        signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        line = stream.readline(LINE_LIMIT + 1)
    finally:
        if timeout is not None:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
    if len(line) > LINE_LIMIT:
        raise ValueError(f"longer than {LINE_LIMIT} bytes")
    return line


def write_all(descriptor: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(descriptor, view) :]


def pump(session_socket: Path, hello: bytes, window_in: BinaryIO, window_out: int) -> str | None:
    """Connect to the session's socket, say the window's ``hello``, and pass lines both ways until one side
    ends. Returns why the window's side was cut off (a line that is not the protocol, or too long), None for a
    clean end (the window left, or the session closed the connection). Raises ``OSError`` when the socket
    cannot be reached."""
    session = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        session.connect(str(session_socket))
    except OSError:
        session.close()
        raise
    session.sendall(hello)
    cut_off: list[str] = []

    def upstream() -> None:
        number = 1
        try:
            while True:
                number += 1
                try:
                    line = read_line(window_in)
                except ValueError as exc:
                    cut_off.append(f"line {number} from the window is {exc}")
                    return
                if not line:
                    return
                problem = window_line_problem(line)
                if problem is not None:
                    cut_off.append(f"line {number} from the window is not Polter's session protocol ({problem})")
                    return
                session.sendall(line)
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                session.shutdown(socket.SHUT_RDWR)  # the session hears this window leave: it runs on

    threading.Thread(target=upstream, name="relay-upstream", daemon=True).start()
    try:
        while chunk := session.recv(CHUNK):
            write_all(window_out, chunk)
    except OSError:
        pass
    finally:
        session.close()
    return cut_off[0] if cut_off else None
