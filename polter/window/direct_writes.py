"""The echo of a key written to the terminal by the event loop's own thread, not by Textual's writer thread.

Textual's driver hands every write to a thread of its own (``WriterThread``), so that a terminal that stops
reading cannot block the event loop. An echo's bytes then wait for that thread to be woken, scheduled and
given the GIL: on a loaded machine a woken thread is not a running one, and the window's thread goes on
drawing other panes meanwhile (``benchmarks/terminal_latency.py --outer``, timed stage by stage: up to tens
of milliseconds between the echo's compose and the writer taking it, at a load of 10 on 2 CPUs).

:class:`DirectWriter` replaces the driver's writer thread with one that behaves the same, except while the
echo composes (:meth:`DirectWriter.at_once`): what that compose writes goes to the terminal at once from the
calling thread, in one write on a non-blocking descriptor of its own, when the writer thread has nothing
queued or in hand (so the order of the bytes is kept). Whatever the terminal does not take at once goes to the
writer thread as before: a terminal that stops reading still never blocks the event loop.

The Textual internals this touches are the driver's ``_writer_thread`` and ``WriterThread``'s ``_queue`` and
``_file``; ``tests/window/test_direct_writes.py`` fails naming the Textual version if they change.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import IO, Any

from textual.app import App
from textual.drivers._writer_thread import WriterThread

__all__ = ["DirectWriter", "direct_writer"]


class DirectWriter(WriterThread):
    """Textual's writer thread, and writes from the calling thread while :meth:`at_once` holds them."""

    def __init__(self, file: IO[str], after: threading.Thread | None = None) -> None:
        super().__init__(file)
        self._after = after
        """The writer thread this one replaces: it writes what it holds first."""
        self._lock = threading.Lock()
        self._pending = 1 if after is not None else 0
        """Writes queued or in the thread's hands (and the thread replaced, until it ends): a direct write
        goes out only when there are none."""
        self._held: list[str] | None = None
        self._fd = _nonblocking_descriptor(file)
        self._encoding: str = getattr(file, "encoding", None) or "utf-8"
        self._errors: str = getattr(file, "errors", None) or "strict"
        self.direct_writes = 0
        """How many times :meth:`at_once` wrote everything itself."""

    def write(self, text: str) -> None:
        if self._held is not None:
            self._held.append(text)
            return
        with self._lock:
            self._pending += 1
        self._queue.put(text)

    @contextmanager
    def at_once(self) -> Iterator[None]:
        """Hold what is written meanwhile and write it when this ends: itself when the thread is idle,
        else (or what the terminal did not take) through the thread, after what is queued."""
        if self._held is not None:  # already inside
            yield
            return
        self._held = []
        try:
            yield
        finally:
            text, self._held = "".join(self._held), None
            if text:
                self._write_now(text)

    def _write_now(self, text: str) -> None:
        with self._lock:
            item: str | bytes = text
            if self._pending == 0 and self._fd is not None:
                data = text.encode(self._encoding, self._errors)
                try:
                    written = os.write(self._fd, data)
                except BlockingIOError:
                    written = 0
                except OSError:
                    written = 0
                    self._fd = None  # a descriptor that refuses: the thread writes from now on
                if written == len(data):
                    self.direct_writes += 1
                    return
                if written:
                    item = data[written:]  # the rest (maybe from the middle of a character), in order
            self._pending += 1
            self._queue.put(item)  # type: ignore[arg-type]

    def run(self) -> None:
        """Textual's loop (write; flush once the queue is empty), after the thread replaced, counting what is
        in hand; bytes are the rest of a direct write."""
        if self._after is not None:
            self._after.join()
            with self._lock:
                self._pending -= 1
        write = self._file.write
        flush = self._file.flush
        get = self._queue.get
        qsize = self._queue.qsize
        while True:
            item: str | bytes | None = get()
            if item is None:
                break
            if isinstance(item, bytes):
                flush()
                self._file.buffer.write(item)  # type: ignore[attr-defined]
                self._file.buffer.flush()  # type: ignore[attr-defined]
            else:
                write(item)
            if qsize() == 0:
                flush()
            with self._lock:
                self._pending -= 1
        flush()

    def stop(self) -> None:
        super().stop()
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def _nonblocking_descriptor(file: IO[str]) -> int | None:
    """A descriptor of the same terminal opened anew, non-blocking: ``O_NONBLOCK`` on the file's own would
    hold for every descriptor of it (the keyboard's reads too). None when it is no terminal (a file opened
    anew would be written from its start)."""
    try:
        if not os.isatty(file.fileno()):
            return None
        return os.open(f"/proc/self/fd/{file.fileno()}", os.O_WRONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None


def direct_writer(app: App[Any]) -> DirectWriter | None:
    """The app's driver's writer, made a :class:`DirectWriter` the first time; None for a driver with no
    writer thread (headless, as in tests)."""
    driver = app._driver
    writer = getattr(driver, "_writer_thread", None)
    if writer is None or isinstance(writer, DirectWriter):
        return writer
    if not isinstance(writer, WriterThread) or not writer.is_alive():
        return None
    # The old thread writes what it holds and ends; the new one waits for it (the event loop never does).
    writer._queue.put(None)
    replacement = DirectWriter(writer._file, after=writer)
    replacement.start()
    driver._writer_thread = replacement  # type: ignore[union-attr]
    return replacement
