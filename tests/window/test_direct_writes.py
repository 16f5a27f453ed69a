"""The echo written from the event loop's thread (`polter/window/direct_writes.py`), on a real PTY: at once when
Textual's writer thread is idle, in order behind it when it is not, and never blocking when the terminal stops
reading."""

from __future__ import annotations

import inspect
import os
import time
from collections.abc import Callable, Iterator
from importlib.metadata import version
from pathlib import Path

import pytest
from textual.drivers import linux_driver
from textual.drivers._writer_thread import WriterThread

from polter.window.direct_writes import DirectWriter


class Terminal:
    """A PTY: the writer writes to its terminal side, the test reads what arrived on the other."""

    def __init__(self) -> None:
        self.master, slave = os.openpty()
        os.set_blocking(self.master, False)
        self.file = os.fdopen(slave, "w", encoding="utf-8")

    def read(self) -> bytes:
        data = b""
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except BlockingIOError:
                return data
            if not chunk:
                return data
            data += chunk

    def close(self) -> None:
        self.file.close()
        os.close(self.master)


@pytest.fixture
def terminal() -> Iterator[Terminal]:
    opened = Terminal()
    yield opened
    opened.close()


def _until(condition: Callable[[], bool], timeout: float = 10) -> None:
    """Poll ``condition`` with a deadline (the writer is a thread: nothing to await)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met in time"
        time.sleep(0.005)


def _fill(terminal: Terminal) -> int:
    """Write to the terminal (a descriptor of its own, non-blocking) until its buffer is full; how much went in."""
    fd = os.open(os.ttyname(terminal.file.fileno()), os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY)
    total = 0
    try:
        while True:
            total += os.write(fd, b"x" * 4096)
    except BlockingIOError:
        return total
    finally:
        os.close(fd)


def test_the_textual_internals_it_replaces() -> None:
    """The driver's ``_writer_thread`` (a ``WriterThread`` of its ``_file``) and the thread's ``_queue`` and
    ``_file``. If this fails, Textual changed them: adapt ``polter/window/direct_writes.py``."""
    textual = version("textual")
    source = inspect.getsource(linux_driver.LinuxDriver)
    assert "self._writer_thread = WriterThread(self._file)" in source, f"Textual {textual}: the driver's writer changed"
    with open(os.devnull, "w") as null:
        thread = WriterThread(null)
        assert hasattr(thread, "_queue") and hasattr(thread, "_file"), f"Textual {textual}: WriterThread changed"
    run = inspect.getsource(WriterThread.run)
    assert "qsize() == 0" in run and "flush()" in run, (
        f"Textual {textual}: WriterThread.run changed (copied in DirectWriter.run)"
    )


def test_an_echo_is_written_at_once_by_the_caller_when_the_thread_is_idle(terminal: Terminal) -> None:
    writer = DirectWriter(terminal.file)
    writer.start()
    try:
        writer.write("before ")
        _until(lambda: writer._pending == 0)
        assert terminal.read() == b"before "
        with writer.at_once():
            writer.write("\x1b[?2026h")
            writer.write("échoed")
            writer.write("\x1b[?2026l")
            assert terminal.read() == b"", "held until the compose ends"
        assert writer.direct_writes == 1
        assert terminal.read() == "\x1b[?2026héchoed\x1b[?2026l".encode()  # there already: no thread ran for it
    finally:
        writer.stop()


def test_behind_a_busy_thread_the_echo_waits_its_turn_and_the_caller_never_blocks(terminal: Terminal) -> None:
    """The terminal stops reading: the thread blocks on its write, the echo is queued behind it (no direct
    write, no blocking), and once the terminal reads again every byte arrives in order."""
    writer = DirectWriter(terminal.file)
    writer.start()
    try:
        filled = _fill(terminal)
        writer.write("A" * 20_000)  # the thread blocks on this one
        _until(lambda: writer._queue.qsize() == 0)
        started = time.monotonic()
        with writer.at_once():
            writer.write("echo")
        assert time.monotonic() - started < 0.5 and writer.direct_writes == 0
        arrived = b""
        deadline = time.monotonic() + 10
        while not arrived.endswith(b"echo") and time.monotonic() < deadline:
            arrived += terminal.read()
        assert arrived == b"x" * filled + b"A" * 20_000 + b"echo"
    finally:
        writer.stop()


def test_an_idle_thread_and_a_full_terminal_the_rest_goes_through_the_thread(terminal: Terminal) -> None:
    """The thread is idle but the terminal's buffer is full (something else filled it): the direct write takes
    what fits without blocking, the thread writes the rest, in order."""
    writer = DirectWriter(terminal.file)
    writer.start()
    try:
        filled = _fill(terminal)
        started = time.monotonic()
        with writer.at_once():
            writer.write("é" * 10_000)  # a partial write may end inside a character: the rest goes as bytes
        assert time.monotonic() - started < 0.5 and writer.direct_writes == 0
        arrived = b""
        expected = b"x" * filled + "é".encode() * 10_000
        deadline = time.monotonic() + 10
        while len(arrived) < len(expected) and time.monotonic() < deadline:
            arrived += terminal.read()
        assert arrived == expected
    finally:
        writer.stop()


def test_a_replaced_thread_writes_what_it_holds_first(terminal: Terminal) -> None:
    old = WriterThread(terminal.file)
    old.start()
    old.write("old")
    old._queue.put(None)
    writer = DirectWriter(terminal.file, after=old)
    writer.start()
    try:
        writer.write(" queued")
        with writer.at_once():
            writer.write(" echo")
        _until(lambda: writer._pending == 0)
        assert terminal.read() == b"old queued echo"
    finally:
        writer.stop()


def test_no_terminal_no_direct_write(tmp_path: Path) -> None:
    """Standard error redirected to a file: a file opened anew would be written from its start, so everything
    goes through the thread."""
    path = tmp_path / "err"
    with path.open("w", encoding="utf-8") as file:
        file.write("kept ")
        file.flush()
        writer = DirectWriter(file)
        writer.start()
        with writer.at_once():
            writer.write("echo")
        writer.stop()
    assert writer.direct_writes == 0
    assert path.read_text(encoding="utf-8") == "kept echo"
