"""A child program on its own pseudo-terminal, driven from the asyncio event loop.

The child gets a new session with the PTY as its controlling terminal, so job control, ``ctrl+c``
and SIGWINCH work as in any terminal. We do not fork the (threaded) Python process: ``subprocess``
uses vfork/exec and util-linux ``setsid --ctty`` makes the terminal controlling. Output is read with
``loop.add_reader`` in bounded pieces; the consumer can pause reading to apply back-pressure.

Closing ends the whole session: SIGHUP (and SIGCONT) to the child's process group and the
terminal's foreground group, then SIGKILL to every process still in the session after a grace period.

A child starts with the terminal signals at their defaults, as under any terminal, whatever Polter inherited:
a signal ignored by a process stays ignored across ``exec``, so Polter started by ``nohup`` or in the background of
a script (SIGHUP, SIGINT, SIGQUIT ignored) would hand its panes programs that ``ctrl+c`` cannot interrupt and a
closed pane cannot hang up. Without a fork to reset them in, Polter catches those signals itself with a handler
that does nothing (as ignoring did): a caught signal is reset to its default by ``exec``.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import shutil
import signal
import struct
import subprocess
import sys
import termios
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Final

from polter.errors import SpawnError
from polter.terminal.launch import LaunchSpec

__all__ = ["PtyClosedError", "PtyProcess", "session_processes"]

READ_SIZE: Final = 4096
"""Bytes asked for per read: a PTY gives no more at once (its line discipline's buffer is 4 KiB)."""

READS_PER_CALLBACK: Final = 4
"""Reads one readable callback makes while each fills its buffer (the program writes faster than it is
read): a flood costs a quarter of the event-loop turns, and one busy pane still adds at most 16 KiB of
copying to a turn (the screen engine parses it later, in batches: see `polter.host.hosted_terminal`)."""

DRAIN_LIMIT: Final = 1024 * 1024
"""Output still buffered when the child exits is read up to this much, then the terminal closes."""

CLOSE_GRACE: Final = 1.0
"""Seconds between SIGHUP and SIGKILL when a pane or the app closes."""

TERMINAL_ENV: Final = {"TERM": "xterm-256color", "COLORTERM": "truecolor"}
"""What Polter's screen engine implements; set over the launch spec's environment."""

_SETSID: Final = shutil.which("setsid")

TERMINAL_SIGNALS: Final = (signal.SIGHUP, signal.SIGINT, signal.SIGQUIT, signal.SIGTERM, signal.SIGTSTP)
"""Signals a program on a terminal expects at their defaults (see the module's docstring)."""


class PtyClosedError(RuntimeError):
    """Writing to or resizing a terminal that was closed (a bug in the caller)."""


def _first_child(pid: int) -> int | None:
    """The oldest child of ``pid`` (Linux's ``/proc/PID/task/PID/children``), or None."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return None
    return int(children[0]) if children else None


class PtyProcess:
    """One program on one pseudo-terminal.

    Create it with :meth:`spawn` inside a running event loop. ``on_output`` receives raw bytes as
    they arrive (any chunking); ``on_exit`` receives the return code once the child has ended and its
    buffered output was delivered.
    """

    def __init__(
        self,
        popen: subprocess.Popen[bytes],
        master_fd: int,
        *,
        on_output: Callable[[bytes], None],
        on_exit: Callable[[int], None],
        launchers: int = 0,
    ) -> None:
        self._popen = popen
        self._launchers = launchers
        self._program_pid: int | None = None if launchers else popen.pid
        self._fd: int | None = master_fd
        self._on_output = on_output
        self._on_exit = on_exit
        self._loop = asyncio.get_running_loop()
        self._reading = False
        self._paused = False
        self._end_of_output = False
        self._pending_writes = bytearray()
        self._exited = asyncio.Event()
        self._pidfd: int | None = None
        self._poll_handle: asyncio.TimerHandle | None = None
        self._resume_reading()
        self._watch_exit()

    @classmethod
    def spawn(
        cls,
        spec: LaunchSpec,
        *,
        columns: int,
        lines: int,
        on_output: Callable[[bytes], None],
        on_exit: Callable[[int], None],
    ) -> PtyProcess:
        """Start ``spec`` on a new ``columns`` × ``lines`` terminal.

        Raises:
            SpawnError: the program or the working directory does not exist, or the program is not
                executable. The message is written for the user.
        """
        if spec.refused is not None:
            raise SpawnError(spec.refused)
        env = {**spec.environment(), **TERMINAL_ENV}
        _check_launchable(spec, env)
        _catch_ignored_terminal_signals()
        master_fd, slave_fd = os.openpty()
        try:
            _set_window_size(master_fd, columns, lines)
            os.set_blocking(master_fd, False)
            popen = subprocess.Popen(
                _session_argv(spec.argv),
                stdin=slave_fd,
                stdout=slave_fd,
                stderr=slave_fd,
                cwd=spec.cwd,
                env=env,
                close_fds=True,
                # without util-linux setsid (macOS), make the terminal controlling in the child
                start_new_session=not _SETSID,
                preexec_fn=None if _SETSID else _acquire_controlling_terminal,
            )
        except OSError as exc:
            os.close(master_fd)
            raise SpawnError(f"cannot start {spec.argv[0]!r}: {exc.strerror or exc}") from exc
        finally:
            os.close(slave_fd)
        return cls(popen, master_fd, on_output=on_output, on_exit=on_exit, launchers=spec.launchers)

    # -- state ---------------------------------------------------------------------------------

    @property
    def pid(self) -> int:
        return self._popen.pid

    @property
    def program_pid(self) -> int | None:
        """The pane's own program: the process started, or the one its launchers (``LaunchSpec.launchers``, a
        sandbox's) started; None until they have. The foreground group is the program's when no job runs."""
        if self._program_pid is None:
            pid: int | None = self.pid
            for _ in range(self._launchers):
                pid = _first_child(pid) if pid is not None else None
            self._program_pid = pid
        return self._program_pid

    @property
    def program_group(self) -> int | None:
        """The process group of the pane's program: its own when it manages jobs (a shell), else the one it was
        started in (a program that never calls ``setpgid``, under launchers that did). The foreground group is
        this one while the program itself has the terminal."""
        pid = self.program_pid
        if pid is None:
            return None
        try:
            return os.getpgid(pid)
        except OSError:
            return None

    @property
    def returncode(self) -> int | None:
        """``None`` while running; negative for a signal, as in :mod:`subprocess`."""
        return self._popen.returncode if self._exited.is_set() else None

    @property
    def running(self) -> bool:
        return not self._exited.is_set()

    async def wait(self) -> int:
        """Wait until the child has ended (and its last output was delivered); its return code."""
        await self._exited.wait()
        assert self._popen.returncode is not None
        return self._popen.returncode

    def foreground_process_group(self) -> int | None:
        """The process group that owns the terminal (the job the user is talking to), if known. A terminal
        whose session has ended has none: Linux then answers 0, which must never be signalled (``killpg(0)``
        is the caller's own group)."""
        if self._fd is None:
            return None
        try:
            group = os.tcgetpgrp(self._fd)
        except OSError:
            return None
        return group if group > 0 else None

    # -- input ---------------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        """Queue ``data`` for the child. Never blocks: what the PTY cannot take now is sent when it can."""
        if self._fd is None:
            raise PtyClosedError("the terminal is closed")
        if not data:
            return
        if not self._pending_writes:
            try:
                written = os.write(self._fd, data)
            except BlockingIOError:
                written = 0
            except OSError:  # the child side is gone; its exit is reported separately
                return
            data = data[written:]
            if not data:
                return
            self._loop.add_writer(self._fd, self._flush_writes)
        self._pending_writes += data

    def _flush_writes(self) -> None:
        assert self._fd is not None
        try:
            written = os.write(self._fd, self._pending_writes)
        except BlockingIOError:
            return
        except OSError:
            written = len(self._pending_writes)
        del self._pending_writes[:written]
        if not self._pending_writes:
            self._loop.remove_writer(self._fd)

    def resize(self, columns: int, lines: int) -> None:
        """Set the terminal size; the kernel sends SIGWINCH to the foreground job if it changed."""
        if self._fd is None:
            raise PtyClosedError("the terminal is closed")
        _set_window_size(self._fd, columns, lines)

    # -- output --------------------------------------------------------------------------------

    @property
    def reading(self) -> bool:
        """Whether output is being read now (not paused, not at its end)."""
        return self._reading

    def pause_reading(self) -> None:
        """Stop reading output until :meth:`resume_reading`; the child blocks once the PTY buffer fills."""
        self._paused = True
        if self._reading and self._fd is not None:
            self._loop.remove_reader(self._fd)
            self._reading = False

    def resume_reading(self) -> None:
        self._paused = False
        self._resume_reading()

    def _resume_reading(self) -> None:
        if not (self._reading or self._paused or self._end_of_output or self._fd is None):
            self._loop.add_reader(self._fd, self._read_ready)
            self._reading = True

    def _read_ready(self) -> None:
        assert self._fd is not None
        chunks: list[bytes] = []
        ended = False
        for _ in range(READS_PER_CALLBACK):
            try:
                data = os.read(self._fd, READ_SIZE)
            except BlockingIOError:
                break
            except OSError:  # EIO: every process closed its side of the terminal
                data = b""
            if not data:
                ended = True
                break
            chunks.append(data)
            if len(data) < READ_SIZE - 1:  # the buffer is empty (a full one gives 4095 bytes)
                break
        if chunks:
            self._on_output(chunks[0] if len(chunks) == 1 else b"".join(chunks))
        if ended and self._fd is not None:
            self._end_of_output = True
            if self._reading:
                self._loop.remove_reader(self._fd)
                self._reading = False

    # -- exit ----------------------------------------------------------------------------------

    def _watch_exit(self) -> None:
        try:
            self._pidfd = os.pidfd_open(self.pid)
        except (AttributeError, OSError):  # not Linux ≥ 5.3: poll instead
            self._poll_exit()
            return
        self._loop.add_reader(self._pidfd, self._child_exited)

    def _poll_exit(self) -> None:
        if self._popen.poll() is None:
            self._poll_handle = self._loop.call_later(0.05, self._poll_exit)
        else:
            self._child_exited()

    def _child_exited(self) -> None:
        if self._pidfd is not None:
            self._loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None
        self._popen.wait()
        self.drain()
        self._close_terminal()
        self._exited.set()
        self._on_exit(self._popen.returncode)

    def drain(self) -> None:
        """Deliver now what the child wrote and is still in the PTY buffer (up to :data:`DRAIN_LIMIT`), paused or
        not: what it wrote before it ended, or before it said something another way (a hook's report)."""
        if self._fd is None:
            return
        remaining = DRAIN_LIMIT
        while remaining > 0:
            try:
                data = os.read(self._fd, min(READ_SIZE, remaining))
            except OSError:
                return
            if not data:
                return
            remaining -= len(data)
            self._on_output(data)

    def _close_terminal(self) -> None:
        if self._fd is None:
            return
        if self._reading:
            self._loop.remove_reader(self._fd)
            self._reading = False
        if self._pending_writes:
            self._loop.remove_writer(self._fd)
            self._pending_writes.clear()
        with contextlib.suppress(OSError):
            os.close(self._fd)
        self._fd = None

    async def aclose(self, grace: float = CLOSE_GRACE) -> None:
        """End the child and everything it started in its session; returns once the child is reaped.

        SIGHUP (plus SIGCONT, for stopped jobs) goes to the child's group and the terminal's
        foreground group, as when a terminal window closes; whatever is left of the session after
        ``grace`` seconds gets SIGKILL.
        """
        if self.running:
            for group in {self.pid, self.foreground_process_group()} - {None, 0, os.getpgrp()}:
                assert group is not None
                _signal_group(group, signal.SIGHUP)
                _signal_group(group, signal.SIGCONT)
        await self._until_session_ended(grace)
        if self._poll_handle is not None:
            self._poll_handle.cancel()
        for pid in session_processes(self.pid):
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        _signal_group(self.pid, signal.SIGKILL)
        if self.running:
            self._child_exited()  # reaps the SIGKILLed child, which cannot take long
        self._close_terminal()
        await self._until_session_ended(grace)  # SIGKILL is delivered asynchronously

    async def _until_session_ended(self, timeout: float) -> None:
        deadline = self._loop.time() + timeout
        while self._loop.time() < deadline and (self.running or session_processes(self.pid)):
            await asyncio.sleep(0.01)

    async def __aenter__(self) -> PtyProcess:
        return self

    async def __aexit__(self, *_exc: object) -> None:
        await self.aclose()


def session_processes(session_id: int) -> list[int]:
    """Process ids in session ``session_id`` (Linux ``/proc``; empty elsewhere)."""
    members = []
    for entry in Path("/proc").iterdir() if sys.platform.startswith("linux") else ():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2 :].split()  # after "pid (comm) "
        if int(fields[3]) == session_id and fields[0] != b"Z":
            members.append(int(entry.name))
    return members


def _signal_group(group: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(group, signum)


def _set_window_size(fd: int, columns: int, lines: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", max(lines, 1), max(columns, 1), 0, 0))


def _catch_ignored_terminal_signals() -> None:
    """Turn an inherited "ignore" of :data:`TERMINAL_SIGNALS` into a handler that does nothing, so children get the
    defaults. Only the main thread may set handlers; elsewhere nothing changes (and a child may inherit one)."""
    if threading.current_thread() is not threading.main_thread():
        return
    for number in TERMINAL_SIGNALS:
        if signal.getsignal(number) == signal.SIG_IGN:
            signal.signal(number, _ignore)


def _ignore(number: int, frame: object) -> None:
    """A caught signal that does nothing: Polter still ignores it, and ``exec`` gives the child the default."""


def _session_argv(argv: tuple[str, ...]) -> list[str]:
    return [_SETSID, "--ctty", *argv] if _SETSID else list(argv)


def _acquire_controlling_terminal() -> None:  # pragma: no cover - runs in the child, non-Linux only
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _check_launchable(spec: LaunchSpec, env: dict[str, str]) -> None:
    """Fail early, with a message for the user, for the usual reasons a command cannot start."""
    cwd = spec.cwd
    if cwd is not None and not cwd.is_dir():
        reason = "does not exist" if not cwd.exists() else "is not a directory"
        raise SpawnError(f"cannot start {spec.argv[0]!r}: working directory {str(cwd)!r} {reason}")
    program = spec.argv[0]
    if "/" in program:
        path = Path(program) if cwd is None or Path(program).is_absolute() else cwd / program
        if not path.exists():
            raise SpawnError(f"cannot start {program!r}: no such file")
        if path.is_dir() or not os.access(path, os.X_OK):
            raise SpawnError(f"cannot start {program!r}: not an executable file")
    elif shutil.which(program, path=env.get("PATH", os.defpath)) is None:
        raise SpawnError(f"cannot start {program!r}: command not found (searched PATH)")
