"""Polter's records of the worktrees it made, and the setup commands the user allowed.

A worktree is recorded twice: ``<state>/worktrees/<key>.json`` (how ``polter worktree list`` finds
worktrees of every repository with no app running) and a marker, ``polter-worktree.json``, in the
worktree's admin dir inside the repository (``.git/worktrees/<name>/``), which git removes with the
worktree. Removal deletes a folder only when both say Polter made it, for that path.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime
from pathlib import Path

from pydantic import ValidationError

from polter.paths import state_dir
from polter.worktrees._models import SetupCommand, Worktree
from polter.worktrees._repo import real

__all__ = [
    "MARKER",
    "all_records",
    "consented",
    "delete_record",
    "grant_consent",
    "load_record",
    "logs_dir",
    "read_marker",
    "record_key",
    "revoke_consent",
    "save_record",
    "write_marker",
]

MARKER = "polter-worktree.json"
CONSENT_FILE = "setup-consent.json"


def store_dir() -> Path:
    return state_dir() / "worktrees"


def logs_dir() -> Path:
    return store_dir() / "logs"


def record_key(path: Path) -> str:
    """A worktree's record name: a hash of its folder's real path."""
    return hashlib.sha256(str(real(path)).encode()).hexdigest()[:16]


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_name(f".{path.name}.tmp")
    temporary.write_text(text, encoding="utf-8")
    temporary.replace(path)


def save_record(worktree: Worktree) -> None:
    _write(store_dir() / f"{worktree.key}.json", worktree.model_dump_json(indent=2))


def load_record(key: str) -> Worktree | None:
    try:
        return Worktree.model_validate_json((store_dir() / f"{key}.json").read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return None


def all_records() -> list[Worktree]:
    """Every record in the state dir, oldest first (an unreadable file is skipped, never deleted)."""
    folder = store_dir()
    if not folder.is_dir():
        return []
    records = [load_record(path.stem) for path in folder.glob("*.json") if path.name != CONSENT_FILE]
    return sorted((record for record in records if record is not None), key=lambda record: record.created_at)


def delete_record(worktree: Worktree) -> None:
    (store_dir() / f"{worktree.key}.json").unlink(missing_ok=True)


def write_marker(admin: Path, worktree: Worktree) -> None:
    (admin / MARKER).write_text(worktree.model_dump_json(indent=2), encoding="utf-8")


def read_marker(admin: Path | None) -> Worktree | None:
    if admin is None:
        return None
    try:
        return Worktree.model_validate_json((admin / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValidationError):
        return None


# -- consent to run a repository's setup command ------------------------------------------------


def _consents() -> dict[str, dict[str, str]]:
    try:
        data = json.loads((store_dir() / CONSENT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def consented(setup: SetupCommand) -> bool:
    """Whether the user allowed exactly this command for this repository (a changed command asks again)."""
    entry = _consents().get(str(setup.repository))
    return isinstance(entry, dict) and entry.get("command") == setup.display


def grant_consent(setup: SetupCommand) -> None:
    consents = _consents()
    consents[str(setup.repository)] = {"command": setup.display, "granted_at": datetime.now(UTC).isoformat()}
    _write(store_dir() / CONSENT_FILE, json.dumps(consents, indent=2, ensure_ascii=False))


def revoke_consent(repository: Path) -> None:
    consents = _consents()
    if consents.pop(str(repository), None) is not None:
        _write(store_dir() / CONSENT_FILE, json.dumps(consents, indent=2, ensure_ascii=False))
