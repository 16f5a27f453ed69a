"""Where sessions live on disk, and which of them are alive.

Each session ``NAME`` has, in the runtime dir's ``sessions/`` folder (0700):

- ``NAME.sock``: the host's Unix socket (0600), the only way into the session;
- ``NAME.lock``: locked (``flock``) by the host for as long as it runs — a lock nobody holds means
  the host is gone, whatever files it left;
- ``NAME.json``: the host's record (pid, when and where it started), removed when the session ends
  properly. A record whose lock is free is a session that did not end properly (its host was killed):
  the next ``polter`` says so, once, and offers ``--restore``
  (:class:`~polter.wire.record.SessionRecord`).

A logout can remove the runtime dir under a running session (logind deletes ``$XDG_RUNTIME_DIR`` when the
user's last login ends, unless lingering is on). The host notices within half a second and makes its files
again (:meth:`~polter.host.session_socket.SessionSocket.keep_reachable`), in the runtime dir as it is then:
``/tmp/polter-UID`` while the login's is gone. So the sessions are looked for in both (:func:`sessions_folders`), unless
``$POLTER_RUNTIME_DIR`` names the one place.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Final, TextIO

from polter.errors import SessionError
from polter.paths import ENV_RUNTIME_DIR, fallback_runtime_dir, runtime_dir

if TYPE_CHECKING:
    from polter.wire.record import SessionRecord

__all__ = [
    "DEFAULT_NAME",
    "SessionFiles",
    "SessionLock",
    "check_name",
    "known_sessions",
    "session_files",
    "sessions_folder",
    "sessions_folders",
]

DEFAULT_NAME: Final = "main"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,39}$")


def check_name(name: str) -> str:
    """A session name: letters, digits, ``_ . -``, at most 40 characters (it names files)."""
    if not _NAME.match(name):
        raise SessionError(
            f"{name!r} is not a session name: use letters, digits, '_', '.' and '-' (at most 40, not starting "
            "with a punctuation mark)"
        )
    return name


@dataclass(frozen=True)
class SessionFiles:
    """The files of session ``name``."""

    name: str
    folder: Path

    @property
    def socket(self) -> Path:
        return self.folder / f"{self.name}.sock"

    @property
    def lock(self) -> Path:
        return self.folder / f"{self.name}.lock"

    @property
    def record(self) -> Path:
        return self.folder / f"{self.name}.json"

    def read_record(self) -> SessionRecord | None:
        from pydantic import ValidationError  # lazy: the relay finds a session's socket without pydantic

        from polter.wire.record import SessionRecord  # lazy: as above

        try:
            return SessionRecord.model_validate_json(self.record.read_text(encoding="utf-8"))
        except (OSError, ValidationError):
            return None

    def write_record(self, record: SessionRecord) -> None:
        temporary = self.record.with_suffix(".tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            handle.write(record.model_dump_json(indent=2))
        os.replace(temporary, self.record)

    def host_alive(self) -> bool:
        """Whether a host holds this session's lock right now."""
        try:
            with open(self.lock, "a") as handle:
                try:
                    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    return True
                fcntl.flock(handle, fcntl.LOCK_UN)
                return False
        except OSError:
            return False

    def remove(self) -> None:
        """Remove what a host that is gone left behind."""
        for path in (self.socket, self.record, self.lock):
            with contextlib.suppress(OSError):
                path.unlink()


def sessions_folder() -> Path:
    folder = runtime_dir() / "sessions"
    folder.mkdir(mode=0o700, exist_ok=True)
    return folder


def sessions_folders() -> list[Path]:
    """Where sessions are looked for: the runtime dir's folder, and ``/tmp/polter-UID``'s when it is another one
    and exists as a private folder of this user's (a session whose runtime dir was removed is there)."""
    folders = [sessions_folder()]
    if os.environ.get(ENV_RUNTIME_DIR):
        return folders
    fallback = fallback_runtime_dir() / "sessions"
    try:
        info = fallback.stat()
    except OSError:
        return folders
    if fallback != folders[0] and info.st_uid == os.getuid() and not info.st_mode & 0o077:
        folders.append(fallback)
    return folders


def session_files(name: str) -> SessionFiles:
    """Session ``name``'s files: where it has them, else where a new session makes them."""
    check_name(name)
    for folder in sessions_folders():
        files = SessionFiles(name, folder)
        if files.socket.exists() or files.record.exists():
            return files
    return SessionFiles(name, sessions_folder())


def known_sessions() -> list[SessionFiles]:
    """Every session with a socket or a record in :func:`sessions_folders`, alive or not, by name."""
    found: dict[str, SessionFiles] = {}
    for folder in sessions_folders():
        for path in folder.iterdir():
            if path.suffix in (".sock", ".json") and _NAME.match(path.stem):
                found.setdefault(path.stem, SessionFiles(path.stem, folder))
    return [found[name] for name in sorted(found)]


class SessionLock:
    """The host's hold on its session's name: taken when it starts (refused if another host holds it)
    and kept until the process ends — the kernel lets go even if the host is killed."""

    def __init__(self, files: SessionFiles) -> None:
        self.files = files
        self._handle: TextIO | None = None

    def acquire(self) -> None:
        handle = open(self.files.lock, "a")  # noqa: SIM115  (held open for the host's lifetime)
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            record = self.files.read_record()
            pid = f" (pid {record.pid})" if record is not None else ""
            raise SessionError(
                f"a session named {self.files.name} is already running{pid}: attach to it with "
                f"`polter attach {self.files.name}`, or choose another name with --session"
            ) from None
        os.set_inheritable(handle.fileno(), False)
        self._handle = handle

    @property
    def held(self) -> bool:
        """Whether the lock file this holds is still the one at the lock's path (not removed under it)."""
        if self._handle is None:
            return False
        try:
            return os.stat(self.files.lock).st_ino == os.fstat(self._handle.fileno()).st_ino
        except OSError:
            return False

    def release(self) -> None:
        if self._handle is not None:
            self._handle.close()
            self._handle = None
