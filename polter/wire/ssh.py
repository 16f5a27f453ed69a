"""Reaching a session on another host: ``ssh HOST polter relay ...``, the user's own ``ssh`` and its config.

Polter runs the ``ssh`` found on ``PATH`` (so the user's config, keys, agent, ``ProxyJump`` and wrappers apply)
with a connect timeout and keep-alives, and speaks the session protocol over its standard input and output to
``polter relay`` on the host (:mod:`polter.wire.relay`); nothing listens on TCP anywhere. The relay's first
line says which Polter answers (:class:`~polter.wire.messages.RelayGreeting`); a different version is
refused here, before the window says anything. When no greeting comes, what ssh said and its exit status become
one line saying what to do (:func:`explain_failure`): the host unreachable, the login refused, ``polter`` not
installed there.

A link opened with ``interactive=False`` (a window's, and its reconnections) runs ssh in a session of its own
with ``BatchMode``: it never asks for a password on the window's terminal; the command line's first connection
may ask (before the window takes the terminal). Every ssh to a host shares Polter's own ``ControlMaster``
(:func:`control_options`): one TCP connection and login per host, which later links reuse at once.
:meth:`RelayLink.spawn` starts ssh without waiting for it, so that the window's imports overlap the connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import shlex
import shutil
import signal
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Final

from pydantic import BaseModel, Field, TypeAdapter, ValidationError

from polter import __version__
from polter.errors import SessionError
from polter.paths import runtime_dir
from polter.wire import messages as wire
from polter.wire.client import EventHandler, SessionClient
from polter.wire.installed import Installation, this_installation
from polter.wire.registry import check_name

__all__ = [
    "CONNECT_TIMEOUT",
    "RelayLink",
    "SshTarget",
    "connect",
    "control_options",
    "explain_failure",
    "parse_target",
    "relay_request",
    "spawn_window_link",
    "ssh_argv",
    "version_mismatch",
]

CONNECT_TIMEOUT: Final = 10
"""Seconds ssh may take to reach the host (``ConnectTimeout``)."""
GREETING_TIMEOUT: Final = 30.0
"""Seconds from starting ssh until the relay says which Polter it is (the login included)."""
KEEPALIVE: Final = ("-o", "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3")
"""A link that went dead is noticed within about 15 s (the window then reconnects)."""
CONTROL_PERSIST: Final = 60
"""Seconds Polter's ssh ControlMaster to a host stays after its last connection ended."""
SOCKET_PATH_LIMIT: Final = 107
CONTROL_PATH_ROOM: Final = len("/ssh-") + 40 + 17
"""What ssh adds to the runtime dir's path: ``/ssh-`` and ``%C`` (40 hex digits), and while it makes the socket
a dot and 16 random characters."""
REMOTE_POLTER: Final = "polter"
NOISE_LINES: Final = 20
"""Lines a login may print before the relay's greeting (a shell's rc files that echo) before it counts as broken."""
_HOST = re.compile(r"^[A-Za-z0-9_.@%\[\]:-]{1,255}$")


def _check_host(host: str) -> str:
    if not _HOST.match(host) or host.startswith("-"):
        raise SessionError(f"{host!r} is not a host name ssh can be given (letters, digits, '.', '-', '_', '@')")
    return host


@dataclass(frozen=True)
class SshTarget:
    """Session ``name`` on ``host`` (as ssh knows it); no name: the one ``polter attach`` would choose there."""

    host: str
    name: str | None = None

    def __post_init__(self) -> None:
        _check_host(self.host)
        if self.name is not None:
            check_name(self.name)

    @property
    def label(self) -> str:
        """``gpu:main``: how the window and its notifications name the session."""
        return f"{self.host}:{self.name}" if self.name else f"{self.host}:"


def parse_target(text: str) -> tuple[str | None, str | None]:
    """``HOST:NAME`` → (HOST, NAME); ``HOST:`` → (HOST, None); ``NAME`` → (None, NAME)."""
    host, colon, name = text.rpartition(":")
    if not colon:
        return None, text
    if not host:
        raise SessionError(f"{text!r}: write HOST:NAME (or HOST: for the session polter attach chooses there)")
    return _check_host(host), (check_name(name) if name else None)


def control_options() -> list[str]:
    """Polter's own ssh ControlMaster: the first connection to a host stays open in the background (for
    :data:`CONTROL_PERSIST` seconds after the last one that uses it), and every later one to that host (a
    reconnection, the window after ``--host`` started its session, ``polter ls HOST``) runs over it, without a
    new TCP connection, key exchange or login. Its socket is in this user's private runtime dir. None when that
    socket's path would be too long for a Unix socket (ssh would refuse it), or would need quoting."""
    folder = str(runtime_dir())
    if len(folder) + CONTROL_PATH_ROOM > SOCKET_PATH_LIMIT or any(char in folder for char in " \t\"'%"):
        return []
    return [
        "-o",
        "ControlMaster=auto",
        "-o",
        f"ControlPath={folder}/ssh-%C",
        "-o",
        f"ControlPersist={CONTROL_PERSIST}",
    ]


def ssh_argv(host: str, relay_args: list[str], *, interactive: bool) -> list[str]:
    """The ssh command that runs ``polter relay RELAY_ARGS`` on ``host``."""
    ssh = shutil.which("ssh")
    if ssh is None:
        raise SessionError("ssh is not installed here (OpenSSH's client: e.g. `apt install openssh-client`)")
    options = ["-T", "-o", f"ConnectTimeout={CONNECT_TIMEOUT}", *KEEPALIVE, *control_options()]
    if not interactive:
        options += ["-o", "BatchMode=yes"]
    return [ssh, *options, "--", _check_host(host), shlex.join([REMOTE_POLTER, "relay", *relay_args])]


def explain_failure(host: str, returncode: int | None, stderr: str) -> str:
    """One line for an ssh that ended before the relay spoke: what went wrong, and what to do."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    said = lines[-1] if lines else f"ssh exited with {returncode}"
    text = stderr.lower()
    if returncode == 127 or "command not found" in text or "polter: not found" in text:
        return (
            f"polter is not installed on {host} (or not on the PATH of an SSH login there): install there the "
            f"Polter this is ({_here()}): {_how_to_install()}, its .venv/bin/polter on the PATH of an SSH login "
            f"(docs/remote.md), then check `ssh {host} polter --version`"
        )
    if "host key verification failed" in text or "remote host identification has changed" in text:
        return f"{host}'s host key is unknown or changed ({said}): connect once with `ssh {host}` and check the key"
    if any(word in text for word in ("permission denied", "too many authentication failures", "authentication failed")):
        return (
            f"cannot log in to {host} over SSH ({said}): `ssh {host}` must log in without asking here (your key in "
            f"{host}'s authorized_keys and loaded in your agent, or a ControlMaster in your ssh config)"
        )
    if any(
        word in text
        for word in (
            "could not resolve",
            "connection refused",
            "timed out",
            "no route to host",
            "network is unreachable",
            "connection closed",
            "connection reset",
        )
    ):
        return f"cannot reach {host} over SSH ({said}): check its name in your ssh config, and that it is up with sshd"
    return f"ssh {host} failed ({said})"


def _here() -> str:
    return this_installation().describe(__version__, wire.PROTOCOL_VERSION)


def _how_to_install() -> str:
    here = this_installation()
    commit = f" at commit {here.short_commit}" if here.commit else ""
    return f"a clone of Polter's repository{commit} with `make .venv/.installed` run in it"


def version_mismatch(host: str, greeting: wire.RelayGreeting) -> str:
    """The line for a host whose Polter is another: both, and how to make the host's this one."""
    there = Installation(greeting.clone, greeting.commit).describe(greeting.version, greeting.protocol)
    here = this_installation()
    if greeting.clone is not None and here.commit is not None:
        there_command = f"cd {shlex.quote(greeting.clone)} && git fetch && git checkout {here.short_commit}"
        command = f"ssh {host} {shlex.quote(there_command + ' && make .venv/.installed')}"  # quoted once, as a whole
        update = f"update the one on {host} to this one's commit (`{command}`, from a remote that has it)"
    else:
        update = f"install on {host} the Polter this is ({_how_to_install()})"
    return f"{host} runs {there} and this is {_here()}: {update}, or run here the Polter {host} has"


class RelayLink:
    """ssh running ``polter relay`` on a host: its output is the session's side of the stream, its input the
    window's. Open with :meth:`open`; :meth:`aclose` ends ssh (the session on the host runs on)."""

    def __init__(self, host: str, process: asyncio.subprocess.Process) -> None:
        self.host = host
        self.process = process
        assert process.stdout is not None and process.stdin is not None
        self.reader: asyncio.StreamReader = process.stdout
        self.writer: asyncio.StreamWriter = process.stdin
        self._stderr: deque[str] = deque(maxlen=20)
        self._stderr_done = asyncio.Event()
        self._stderr_task = asyncio.create_task(self._read_stderr())

    @classmethod
    async def open(cls, host: str, relay_args: list[str], *, interactive: bool = False) -> RelayLink:
        """Start ssh and read the relay's greeting (raises :class:`SessionError`: one line saying what to do)."""
        link = await cls.spawn(host, relay_args, interactive=interactive)
        await link.greeted()
        return link

    @classmethod
    async def spawn(cls, host: str, relay_args: list[str], *, interactive: bool = False) -> RelayLink:
        """Start ssh, and return while it connects (:meth:`greeted` waits for the relay): whatever this process
        does meanwhile (the window's imports) overlaps ssh's connection and the relay's start."""
        argv = ssh_argv(host, relay_args, interactive=interactive)
        try:
            process = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                limit=wire.LINE_LIMIT,
                start_new_session=not interactive,  # no terminal to ask a password on: BatchMode says so at once
            )
        except OSError as exc:
            raise SessionError(f"cannot run ssh: {exc}") from exc
        return cls(host, process)

    async def greeted(self) -> None:
        """Wait for the relay's greeting and check its version (raises :class:`SessionError`, having ended ssh)."""
        try:
            greeting = await asyncio.wait_for(self._greeting(), GREETING_TIMEOUT)
        except TimeoutError:
            await self.aclose()
            raise SessionError(
                f"{self.host} did not answer within {GREETING_TIMEOUT:.0f} s over SSH "
                f"({self.stderr or 'ssh said nothing'})"
            ) from None
        except SessionError:
            await self.aclose()
            raise
        if greeting.version != __version__ or greeting.protocol != wire.PROTOCOL_VERSION:
            await self.aclose()
            raise SessionError(version_mismatch(self.host, greeting))

    async def _greeting(self) -> wire.RelayGreeting:
        noise: list[bytes] = []
        while len(noise) <= NOISE_LINES:
            line = await self.reader.readline()
            if not line:
                returncode = await self.process.wait()
                await self._stderr_done.wait()
                raise SessionError(explain_failure(self.host, returncode, "\n".join(self._stderr)))
            try:
                return wire.RelayGreeting.model_validate_json(line)
            except ValidationError:
                noise.append(line)
        shown = noise[0].decode(errors="replace").strip()[:120]
        raise SessionError(
            f"{self.host} did not answer as Polter's relay does (its login printed {shown!r} first): a shell rc file "
            "that prints must stay quiet when not interactive"
        )

    async def _read_stderr(self) -> None:
        stream = self.process.stderr
        assert stream is not None
        try:
            while line := await stream.readline():
                self._stderr.append(line.decode(errors="replace").rstrip())
        except (ValueError, ConnectionError):
            pass
        finally:
            self._stderr_done.set()

    @property
    def stderr(self) -> str:
        """The last lines ssh (and the relay) wrote to their standard error."""
        return "; ".join(line for line in self._stderr if line)

    def send(self, message: BaseModel) -> None:
        self.writer.write(wire.encode(message))

    async def read(self) -> wire.SessionList | wire.Started:
        """The relay's answer to ``--list`` or ``--start`` (a refusal raises :class:`SessionError` with its reason)."""
        line = await self.reader.readline()
        if not line:
            returncode = await self.process.wait()
            await self._stderr_done.wait()
            raise SessionError(f"the relay on {self.host} ended ({self.stderr or f'exit {returncode}'})")
        try:
            answer = _RELAY_ANSWER.validate_json(line)
        except ValidationError as exc:
            raise SessionError(f"the relay on {self.host} answered something else: {exc.errors()[0]['msg']}") from None
        if isinstance(answer, wire.Refused):
            raise SessionError(f"{self.host}: {answer.reason}")
        return answer

    async def aclose(self) -> str | None:
        """End ssh: its input closes (the relay leaves the session), then it is terminated if it lingers. Says how
        ssh ended when that was not this (killed, or its connection lost: what it wrote last)."""
        with contextlib.suppress(ConnectionError, RuntimeError):
            self.writer.close()
        killed = False
        try:
            await asyncio.wait_for(self.process.wait(), 5)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                self.process.kill()
                killed = True
            await self.process.wait()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stderr_done.wait(), 1)  # what it said last, before it ended
        self._stderr_task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._stderr_task
        returncode = self.process.returncode
        if returncode is not None and returncode < 0 and not killed:
            return f"the ssh to {self.host} was killed ({_signal_name(-returncode)})"
        if self.stderr:
            return f"the ssh to {self.host} ended: {self.stderr}"
        if returncode == 255:  # ssh's own failure, or the relay killed on the host
            return f"the ssh to {self.host} ended (exit 255: its connection, or the relay on {self.host}, ended)"
        return f"the ssh to {self.host} ended (exit {returncode})" if returncode else None


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


RelayAnswer = Annotated[wire.SessionList | wire.Started | wire.Refused, Field(discriminator="type")]
_RELAY_ANSWER: TypeAdapter[RelayAnswer] = TypeAdapter(RelayAnswer)


async def relay_request(
    host: str, relay_args: list[str], *, interactive: bool = True
) -> wire.SessionList | wire.Started:
    """Run ``polter relay RELAY_ARGS`` on ``host`` for one answer (``--list``, ``--start``)."""
    link = await RelayLink.open(host, relay_args, interactive=interactive)
    try:
        link.send(wire.Hello(attach=False))
        return await link.read()
    finally:
        await link.aclose()


async def connect(
    target: SshTarget,
    *,
    attach: bool = True,
    on_event: EventHandler = lambda event: None,
    on_lost: Callable[[str], None] = lambda reason: None,
    interactive: bool = False,
    link: RelayLink | None = None,
) -> SessionClient:
    """Connect to ``target`` through ``ssh HOST polter relay NAME`` and say hello (raises :class:`SessionError`
    in one line, naming the host); ``link``: that ssh, started already with :func:`spawn_window_link`."""
    if link is None:
        link = await spawn_window_link(target, interactive=interactive)
    await link.greeted()
    try:
        return await SessionClient.over(
            link.reader,
            link.writer,
            target.label,
            attach=attach,
            on_event=on_event,
            on_lost=on_lost,
            timeout=GREETING_TIMEOUT,
            closer=link.aclose,
        )
    except SessionError as exc:
        raise type(exc)(f"{target.host}: {exc}") from None


async def spawn_window_link(target: SshTarget, *, interactive: bool = False) -> RelayLink:
    """Start the ssh a window on ``target`` reads (:func:`connect` then waits for it)."""
    return await RelayLink.spawn(target.host, [target.name] if target.name else [], interactive=interactive)
