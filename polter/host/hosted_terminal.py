"""A program on a pseudo-terminal with its screen: one pane as the session host keeps it. No UI.

Output path: the PTY's reader callback feeds the screen engine as bytes arrive (bounded reads, so one
flooding program cannot hold the event loop) — while the program floods (its last frame redrew every
row), in batches of :data:`FLOOD_BATCH` bytes, and what is left when the next frame goes out or
anything reads ``screen`` — then schedules a *frame*: a call of ``on_frame`` with the rows that changed
since the last one. Frames run at most :data:`FRAME_RATE` times a second
(:data:`BUSY_FRAME_RATE` while the program keeps scrolling the whole screen, until its output stops for
:data:`QUIET`), are held while the
program draws a synchronized update (mode 2026, for at most :data:`SYNC_TIMEOUT`), and the echo of
what the user typed goes out at once. Busy terminals sharing a :class:`TypingClock` stop reading and
hold their frames for :data:`YIELD_TO_TYPING` after the user typed into another, so the echo is parsed
and drawn first.

Input path: keys arrive as Textual key names (:mod:`polter.terminal.keys`) and are encoded against the
screen's modes here, where those modes are current; pastes are bracketed when the program asked.
"""

from __future__ import annotations

import asyncio
import os
import textwrap
import time
from collections.abc import Callable
from pathlib import Path
from typing import Final

from polter.errors import SpawnError
from polter.host.pty import PtyProcess
from polter.processes import describe_exit
from polter.terminal.keys import encode_focus, encode_key, encode_paste
from polter.terminal.launch import LaunchSpec
from polter.terminal.screen import TerminalScreen

__all__ = ["FRAME_RATE", "HostedTerminal", "TypingClock"]

FRAME_RATE: Final = 60
BUSY_FRAME_RATE: Final = 10
"""Frames a second for a pane whose last frame had to redraw every row (scrolling output)."""
YIELD_TO_TYPING: Final = 0.035
"""Seconds a busy pane stops reading and holds its frames after the user typed into another pane: long
enough for the echo to arrive and be drawn. A pane never waits longer than two of its frame
intervals, so fast typing slows a flood but cannot stop it."""
FLOOD_BATCH: Final = 32_768
"""Bytes of a flooding program's output kept back and fed to the screen engine in one go: a feed has a
fixed cost (4 KB feeds parse a flood at half the rate), and another pane's echo may wait behind one
feed (about 2 ms for 32 KB)."""
QUIET: Final = 0.005
"""Seconds without output after which a busy pane's frame goes out at once rather than at the busy rate:
the last screen of a flood reaches the window within one frame (1/:data:`FRAME_RATE`) of the output
stopping."""
SYNC_TIMEOUT: Final = 0.25
"""Longest a synchronized update (``CSI ? 2026 h``) may hold frames, for programs that never end one."""

FrameListener = Callable[[set[int] | None], None]
"""Receives a frame: the screen rows that changed since the last frame (``None``: every row)."""


class TypingClock:
    """Shared by the terminals of one session: when the user types into one, the busy others hold
    their frames for :data:`YIELD_TO_TYPING`, so the echo is drawn first."""

    def __init__(self) -> None:
        self._terminals: set[HostedTerminal] = set()

    def join(self, terminal: HostedTerminal) -> None:
        self._terminals.add(terminal)

    def leave(self, terminal: HostedTerminal) -> None:
        self._terminals.discard(terminal)

    def typed(self, into: HostedTerminal) -> None:
        until = asyncio.get_running_loop().time() + YIELD_TO_TYPING
        for terminal in self._terminals:
            if terminal is not into:
                terminal._yield_until(until)


class HostedTerminal:
    """One program on one pseudo-terminal, its screen, and paced frames of what changed.

    It starts with :meth:`start` (the first size is needed to start). ``on_frame`` receives each frame;
    ``on_change`` is called when the program started, failed to start, exited or set its title.
    """

    def __init__(
        self,
        spec: LaunchSpec,
        *,
        scrollback: int = 10_000,
        typing: TypingClock | None = None,
        on_frame: FrameListener = lambda dirty: None,
        on_change: Callable[[], None] = lambda: None,
    ) -> None:
        self.spec = spec
        self.scrollback = scrollback
        self.typing = typing or TypingClock()
        self.on_frame = on_frame
        self.on_change = on_change
        self._screen: TerminalScreen | None = None
        self._unfed = bytearray()
        """A flooding program's latest output, not yet fed to the screen (see :data:`FLOOD_BATCH`)."""
        self.process: PtyProcess | None = None
        self.returncode: int | None = None
        """How the last run ended; ``None`` while running or before the start."""
        self.spawn_error: str | None = None
        self.title = ""
        """The program's own title (OSC 0/2), empty until it sets one."""
        self.last_output = 0.0
        """``time.monotonic()`` of the program's latest output (0 before any): screen activity."""
        self.last_input = 0.0
        """``time.monotonic()`` of the human's latest input."""
        self.last_resize = 0.0
        """``time.monotonic()`` of the latest resize (the program's redraw for it is no work of its own)."""
        self._frame_handle: asyncio.TimerHandle | None = None
        self._frame_due = 0.0
        self._last_frame = 0.0
        self._frame_interval = 1 / FRAME_RATE
        self._busy = False
        """The last frame had to redraw every row: the program is streaming output."""
        self._typed = False
        """Input went to the program since the last frame: send its echo at once."""
        self._sync_since: float | None = None
        self._hold_until = 0.0
        self._resume_handle: asyncio.TimerHandle | None = None
        self._quiet_handle: asyncio.TimerHandle | None = None
        self._output_at = 0.0
        """Event-loop time of the latest output (for :data:`QUIET`)."""
        self._early_input = bytearray()
        """What the human typed before the program started (it gets it first thing)."""
        """Event-loop time until which frames wait: the user typed into another pane (TypingClock)."""
        self.typing.join(self)

    # -- state ---------------------------------------------------------------------------------

    @property
    def screen(self) -> TerminalScreen | None:
        """The screen engine, with all the output read so far fed to it."""
        if self._unfed:
            self._feed_unfed()
        return self._screen

    @screen.setter
    def screen(self, screen: TerminalScreen | None) -> None:
        self._unfed.clear()
        self._screen = screen

    def catch_up(self) -> None:
        """Read and feed to the screen everything the program has written so far: a report it sent after its output
        (its hook's Stop) may come before the loop reads that output."""
        if self.running:
            assert self.process is not None
            self.process.drain()
        if self._unfed:
            self._feed_unfed()

    def _feed_unfed(self) -> None:
        assert self._screen is not None
        data = bytes(self._unfed)
        self._unfed.clear()
        self._screen.feed(data)

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.running

    @property
    def started(self) -> bool:
        """Whether it has been started (it may have ended since)."""
        return self.screen is not None

    @property
    def program_title(self) -> str:
        """What a header shows: the program's own title, else the spec's, else the command name."""
        return self.title or self.spec.title or self.spec.argv[0].rsplit("/", 1)[-1]

    @property
    def status_text(self) -> str:
        if self.spawn_error is not None:
            return "failed to start"
        if self.returncode is not None:
            return describe_exit(self.returncode)
        return "running" if self.running else "starting"

    @property
    def frame_pending(self) -> bool:
        """Whether the screen holds output whose frame has not gone out yet."""
        return self._frame_handle is not None

    def working_directory(self) -> Path | None:
        """Where the program (its foreground job, else the program itself) currently is."""
        process = self.process
        if process is None or not process.running:
            return None
        for pid in (process.foreground_process_group(), process.pid):
            if pid is None:
                continue
            try:
                return Path(os.readlink(f"/proc/{pid}/cwd"))
            except OSError:
                continue
        return None

    # -- lifecycle -----------------------------------------------------------------------------

    def start(self, columns: int, lines: int, spec: LaunchSpec | None = None) -> None:
        """Start the program (``spec`` replaces the one it runs) on a fresh ``columns`` × ``lines`` screen."""
        if self.running:
            raise RuntimeError("the program is still running; close it first")
        if spec is not None:
            self.spec = spec
        self.screen = TerminalScreen(columns, lines, scrollback=self.scrollback, reply=self._reply)
        self.returncode = None
        self.spawn_error = None
        self.title = ""
        try:
            self.process = PtyProcess.spawn(
                self.spec, columns=columns, lines=lines, on_output=self._on_output, on_exit=self._on_exit
            )
            if self._early_input:
                self.process.write(bytes(self._early_input))
                self._early_input.clear()
        except SpawnError as exc:
            self.process = None
            self.spawn_error = str(exc)
            message = "\r\n".join(textwrap.wrap(str(exc), columns, break_on_hyphens=False))
            self.screen.feed(f"\x1b[1;31m{message}\x1b[0m\r\n".encode())
            self._frame()
        self.on_change()

    def restart(self, spec: LaunchSpec | None = None) -> None:
        """Start the program again at the screen's size (after it exited or failed)."""
        columns, lines = (self.screen.columns, self.screen.lines) if self.screen is not None else (80, 24)
        self.start(columns, lines, spec)

    def resize(self, columns: int, lines: int) -> None:
        """Resize the screen and the terminal (the program gets SIGWINCH)."""
        screen = self.screen
        if screen is None or columns < 1 or lines < 1 or (columns, lines) == (screen.columns, screen.lines):
            return
        screen.resize(columns, lines)
        self.last_resize = time.monotonic()
        if self.running:
            assert self.process is not None
            self.process.resize(columns, lines)
        self._schedule_frame(0.0)

    async def close(self) -> None:
        """End the program and everything it started (SIGHUP, then SIGKILL after a grace period)."""
        if self.process is not None:
            await self.process.aclose()

    def dispose(self) -> None:
        """Stop pacing frames for good (the pane is gone; the program must have been closed)."""
        self.typing.leave(self)
        for handle in (self._frame_handle, self._resume_handle, self._quiet_handle):
            if handle is not None:
                handle.cancel()
        self._frame_handle = self._resume_handle = self._quiet_handle = None

    # -- input ---------------------------------------------------------------------------------

    def key(self, key: str, character: str | None = None) -> bool:
        """Send a key by its Textual name (``character`` for a printable key with no encoding of its
        own); whether it went to the program."""
        application_cursor = self.screen is not None and self.screen.application_cursor_keys
        data = encode_key(key, application_cursor=application_cursor)
        if data is None and character is not None and character.isprintable():
            data = character.encode()
        if data is None:
            return False
        return self.send(data)

    def paste(self, text: str) -> bool:
        """Paste ``text``, bracketed if the program asked; returns whether it was bracketed."""
        bracketed = self.screen is not None and self.screen.bracketed_paste
        self.send(encode_paste(text, bracketed=bracketed))
        return bracketed

    def focus(self, focused: bool) -> None:
        """Tell the program its pane gained or lost the focus, if it asked (mode 1004)."""
        if self.running and self.screen is not None and self.screen.focus_events:
            assert self.process is not None
            self.process.write(encode_focus(focused))

    def send(self, data: bytes) -> bool:
        """Write ``data`` to the program as the human's input (kept for it if it has not started yet);
        whether it went to the program (not when it has ended)."""
        if self.screen is None:
            self._early_input += data
            return True
        if not self.running:
            return False
        assert self.process is not None
        self.last_input = time.monotonic()
        self._typed = True
        self.typing.typed(self)
        self.process.write(data)
        return True

    def _reply(self, data: bytes) -> None:
        """Answers the screen owes the program (cursor position, device attributes, ...)."""
        if self.running:
            assert self.process is not None
            self.process.write(data)

    # -- output and frames ---------------------------------------------------------------------

    def _on_output(self, data: bytes) -> None:
        assert self._screen is not None
        self.last_output = time.monotonic()
        if self._busy and not self._typed:
            self._unfed += data
            if len(self._unfed) >= FLOOD_BATCH:
                self._feed_unfed()
        else:
            if self._unfed:
                self._feed_unfed()
            self._screen.feed(data)
        self._schedule_frame()
        if self._busy:
            loop = asyncio.get_running_loop()
            self._output_at = loop.time()
            if self._quiet_handle is None:
                self._quiet_handle = loop.call_at(self._output_at + QUIET, self._quiet)
            paced = self._last_frame + self._frame_interval
            if self._frame_handle is not None and self._frame_due < paced and not self._typed:
                # a frame brought forward by a pause (_quiet), and the flood goes on: back to the busy rate
                self._frame_handle.cancel()
                self._frame_handle = None
                self._schedule_frame()

    def _quiet(self) -> None:
        """A busy pane's output may have stopped: if none came for :data:`QUIET`, what it kept back is parsed
        now and its pending frame goes out as soon as one frame interval less :data:`QUIET` since the last frame
        allows, so the last screen of a flood does not wait for the busy rate and reaches the window within one
        frame (1/:data:`FRAME_RATE`) of the output stopping, its parsing done while the frame waits."""
        self._quiet_handle = None
        loop = asyncio.get_running_loop()
        now = loop.time()
        if now < self._output_at + QUIET:
            self._quiet_handle = loop.call_at(self._output_at + QUIET, self._quiet)
        elif self._frame_handle is not None:
            if self._unfed and now >= self._hold_until:  # (a hold for another pane's echo keeps it for later)
                self._feed_unfed()
                now = loop.time()
            paced = self._last_frame + 1 / FRAME_RATE - QUIET
            self._schedule_frame(max(0.0, paced - now, self._hold_until - now))

    def _on_exit(self, returncode: int) -> None:
        self.returncode = returncode
        self._frame()
        self.on_change()

    def _yield_until(self, until: float) -> None:
        """The user typed elsewhere: if streaming, stop reading and hold frames until ``until``, so the
        echo is parsed, sent and drawn first (on a machine with few cores the flood's parsing competes with
        the shell and the window for them) — but never for longer than two frame intervals since the
        last frame, so a flood slows, it never stops."""
        if not self._busy or until - self._last_frame > 2 * self._frame_interval:
            return
        self._hold_until = until
        if self.process is not None and self.running:
            loop = asyncio.get_running_loop()
            self.process.pause_reading()
            if self._resume_handle is not None:
                self._resume_handle.cancel()
            self._resume_handle = loop.call_at(until, self._resume_reading)
        if self._frame_handle is not None and self._frame_due < until:
            self._frame_handle.cancel()
            self._frame_handle = None
            self._schedule_frame()

    def _resume_reading(self) -> None:
        self._resume_handle = None
        if self.process is not None:
            self.process.resume_reading()

    def _schedule_frame(self, delay: float | None = None) -> None:
        """A frame as soon as the frame rate allows (or after ``delay``); an earlier one wins."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        if delay is None:
            if self._typed:
                delay = 0.0
            else:
                delay = max(0.0, self._last_frame + self._frame_interval - now, self._hold_until - now)
        if self._frame_handle is not None:
            if self._frame_due <= now + delay:
                return
            self._frame_handle.cancel()
        self._frame_due = now + delay
        self._frame_handle = loop.call_later(delay, self._frame)

    def _frame(self) -> None:
        if self._frame_handle is not None:
            self._frame_handle.cancel()
            self._frame_handle = None
        screen = self.screen
        if screen is None:
            return
        now = asyncio.get_running_loop().time()
        if screen.synchronized_output and self.running:
            if self._sync_since is None:
                self._sync_since = now
            if now - self._sync_since < SYNC_TIMEOUT:
                self._schedule_frame(self._sync_since + SYNC_TIMEOUT - now)
                return
        else:
            self._sync_since = None
        self._last_frame = now
        self._typed = False
        dirty = screen.take_dirty()
        self._busy = dirty is None
        self._frame_interval = 1 / (BUSY_FRAME_RATE if self._busy else FRAME_RATE)
        if screen.title != self.title:
            self.title = screen.title
            self.on_change()
        self.on_frame(dirty)
