"""The audit log: every listing, call, hook decision and ask answer, in SQLite (WAL) in the state dir.

One writer thread owns the connection and commits in small groups, so the event loop never waits on
disk and a burst of calls costs one commit. Execution-layer rows are awaited before the gateway
answers the call (``await log.write(row)``): a call the agent saw an answer to is already in the
log, and because a WAL commit is in the OS's hands once ``COMMIT`` returns, a gateway killed with
SIGKILL loses no committed row. Listing rows are fire-and-forget (``log.submit``).

Raw arguments are stored only when the user opts in; otherwise only a SHA-256 digest of their
canonical JSON, enough to match a row against a known call without keeping secrets on disk.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import queue
import sqlite3
import threading
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from polter.gateway.models import AuditRow

__all__ = ["AUDIT_FILE", "AuditLog", "digest_arguments", "read_rows"]

AUDIT_FILE = "audit.sqlite3"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    time TEXT NOT NULL,
    pane TEXT,
    role TEXT,
    layer TEXT NOT NULL,
    server TEXT,
    name TEXT,
    decision TEXT NOT NULL,
    rule TEXT,
    reason TEXT NOT NULL,
    latency_ms REAL NOT NULL,
    args_digest TEXT,
    args TEXT,
    builtin TEXT,
    target TEXT
);
CREATE INDEX IF NOT EXISTS audit_by_pane ON audit (pane, id);
"""
_ADDED_COLUMNS = ("builtin", "target")
"""Columns added after the first release: an older log gets them on open (NULL in its old rows)."""
_COLUMNS = (
    "time",
    "pane",
    "role",
    "layer",
    "server",
    "name",
    "decision",
    "rule",
    "reason",
    "latency_ms",
    "args_digest",
    "args",
    "builtin",
    "target",
)
_INSERT = f"INSERT INTO audit ({', '.join(_COLUMNS)}) VALUES ({', '.join('?' * len(_COLUMNS))})"
_BATCH = 256


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


def digest_arguments(arguments: dict[str, Any] | None) -> str:
    return "sha256:" + hashlib.sha256(canonical_json(arguments or {}).encode()).hexdigest()


def _connect(path: Path) -> sqlite3.Connection:
    connection = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    connection.execute("PRAGMA journal_mode=WAL")
    # NORMAL in WAL mode: a committed transaction survives the process being killed (it is in the
    # OS's page cache); only a power cut can lose the last few, which FULL would cost an fsync each.
    connection.execute("PRAGMA synchronous=NORMAL")
    connection.execute("PRAGMA busy_timeout=5000")
    connection.executescript(_SCHEMA)
    present = {row[1] for row in connection.execute("PRAGMA table_info(audit)")}
    for column in _ADDED_COLUMNS:
        if column not in present:
            connection.execute(f"ALTER TABLE audit ADD COLUMN {column} TEXT")
    return connection


_Job = tuple[AuditRow, "asyncio.Future[AuditRow] | None"]


class AuditLog:
    """Appends audit rows from the event loop; ``on_row`` is called (on the loop) after each commit."""

    def __init__(self, path: Path, *, keep_arguments: bool = False) -> None:
        self.path = path
        self.keep_arguments = keep_arguments
        self.on_row: Callable[[AuditRow], None] | None = None
        self._queue: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        path = self.path
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        _connect(path).close()  # create the schema now, so a bad path fails at startup
        for private in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
            if private.exists():
                private.chmod(0o600)  # arguments digests (or raw arguments) are nobody else's business
        self._loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._run, name="polter-audit", daemon=True)
        self._thread.start()

    async def aclose(self) -> None:
        if self._thread is None:
            return
        self._queue.put(None)
        await asyncio.to_thread(self._thread.join)
        self._thread = None

    def make_row(self, arguments: dict[str, Any] | None = None, **fields: Any) -> AuditRow:
        """An unsaved row with the arguments digested (and kept raw when the user opted in)."""
        if arguments is not None:
            fields.setdefault("args_digest", digest_arguments(arguments))
            if self.keep_arguments:
                fields.setdefault("args", canonical_json(arguments))
        fields.setdefault("args_digest", None)
        return AuditRow(**fields)

    async def write(self, row: AuditRow) -> AuditRow:
        """Append a row and wait until it is committed; returns it with its id."""
        if self._thread is None:
            return row
        future: asyncio.Future[AuditRow] = asyncio.get_running_loop().create_future()
        self._queue.put((row, future))
        return await future

    def submit(self, row: AuditRow) -> None:
        """Append a row without waiting for the commit."""
        if self._thread is not None:
            self._queue.put((row, None))

    # -- writer thread --------------------------------------------------------------------------

    def _run(self) -> None:
        connection = _connect(self.path)
        try:
            while True:
                first = self._queue.get()
                if first is None:
                    return
                batch = [first]
                stop = False
                while len(batch) < _BATCH:
                    try:
                        job = self._queue.get_nowait()
                    except queue.Empty:
                        break
                    if job is None:
                        stop = True
                        break
                    batch.append(job)
                self._commit(connection, batch)
                if stop:
                    return
        finally:
            connection.close()

    def _commit(self, connection: sqlite3.Connection, batch: list[_Job]) -> None:
        saved: list[tuple[AuditRow, asyncio.Future[AuditRow] | None]] = []
        error: BaseException | None = None
        try:
            connection.execute("BEGIN")
            for row, future in batch:
                values = row.model_dump(include=set(_COLUMNS))
                values["time"] = row.time.isoformat()
                cursor = connection.execute(_INSERT, [values[column] for column in _COLUMNS])
                saved.append((row.model_copy(update={"id": cursor.lastrowid}), future))
            connection.execute("COMMIT")
        except sqlite3.Error as exc:
            error = exc
            if connection.in_transaction:
                connection.execute("ROLLBACK")
        assert self._loop is not None
        if error is not None:
            self._loop.call_soon_threadsafe(self._fail, [future for _, future in batch], error)
        else:
            self._loop.call_soon_threadsafe(self._deliver, saved)

    def _deliver(self, saved: list[tuple[AuditRow, asyncio.Future[AuditRow] | None]]) -> None:
        for row, future in saved:
            if future is not None and not future.done():
                future.set_result(row)
            if self.on_row is not None:
                self.on_row(row)

    @staticmethod
    def _fail(futures: list[asyncio.Future[AuditRow] | None], error: BaseException) -> None:
        for future in futures:
            if future is not None and not future.done():
                future.set_exception(error)


def read_rows(
    path: Path, *, pane: str | None = None, after_id: int = 0, limit: int | None = None, newest: bool = False
) -> list[AuditRow]:
    """Rows from an audit file, oldest first. ``newest`` with ``limit`` gives the latest ``limit`` rows."""
    if not path.exists():
        return []
    connection = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        connection.execute("PRAGMA busy_timeout=5000")
        where = ["id > ?"]
        params: list[str | int] = [after_id]
        if pane is not None:
            where.append("pane = ?")
            params.append(pane)
        order = "DESC" if newest else "ASC"
        present = {row[1] for row in connection.execute("PRAGMA table_info(audit)")}
        selected = ", ".join(column if column in present else f"NULL AS {column}" for column in _COLUMNS)
        sql = f"SELECT id, {selected} FROM audit WHERE {' AND '.join(where)} ORDER BY id {order}"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        rows = connection.execute(sql, params).fetchall()
    except sqlite3.OperationalError as exc:
        if "no such table" in str(exc):
            return []
        raise
    finally:
        connection.close()
    if newest:
        rows.reverse()
    return [
        AuditRow(id=row[0], **{**dict(zip(_COLUMNS, row[1:], strict=True)), "time": datetime.fromisoformat(row[1])})
        for row in rows
    ]
