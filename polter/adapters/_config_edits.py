"""Settings a CLI wrote into Polter's copy of its config go to the user's own config (see ``EditedConfig``).

Only additions travel, and only where the user's file has nothing yet: a setting the user has is never changed,
and nothing is removed. JSON files are rewritten (2-space indent) only if they parse as plain JSON; TOML files keep
every byte of the user's text (new top-level values go in front, new tables at the end), and the result is checked
to parse to exactly the user's settings plus the additions before it replaces the file.
"""

from __future__ import annotations

import json
import os
import tempfile
import tomllib
from pathlib import Path
from typing import Any

import tomli_w

__all__ = ["carry_config_edits"]

_SAME = object()


def _changed(before: Any, after: Any) -> Any:
    """What ``after`` adds to or changes in ``before`` (nested for tables); ``_SAME`` when nothing."""
    if isinstance(before, dict) and isinstance(after, dict):
        found = {}
        for key, value in after.items():
            part = value if key not in before else _changed(before[key], value)
            if part is not _SAME:
                found[key] = part
        return found or _SAME
    return _SAME if before == after else after


def _missing(user: dict[str, Any], additions: dict[str, Any]) -> dict[str, Any]:
    """The part of ``additions`` that ``user`` has no value for at all."""
    found = {}
    for key, value in additions.items():
        if key not in user:
            found[key] = value
        elif isinstance(user[key], dict) and isinstance(value, dict) and (inner := _missing(user[key], value)):
            found[key] = inner
    return found


def _merged(user: dict[str, Any], missing: dict[str, Any]) -> dict[str, Any]:
    result = dict(user)
    for key, value in missing.items():
        result[key] = _merged(result[key], value) if isinstance(result.get(key), dict) else value
    return result


def _paths(tree: dict[str, Any], prefix: str = "") -> list[str]:
    names = []
    for key, value in tree.items():
        name = f"{prefix}{key}"
        names += _paths(value, f"{name}.") if isinstance(value, dict) and value else [name]
    return names


def _parse(text: str, toml: bool) -> dict[str, Any]:
    value = tomllib.loads(text) if toml else json.loads(text or "{}")
    if not isinstance(value, dict):
        raise ValueError("not a table of settings")
    return value


def carry_config_edits(written: str, pane_file: Path, user_file: Path, polter_keys: tuple[str, ...]) -> list[str]:
    """Add to ``user_file`` what the CLI added to ``pane_file`` (Polter wrote ``written`` there) outside
    ``polter_keys``, where the user's file has nothing yet. Returns the settings added (dotted names); raises
    ``ValueError`` or ``OSError`` saying why the user's file could not take them (it is then left as it was)."""
    toml = pane_file.suffix == ".toml"
    current = _parse(pane_file.read_text(encoding="utf-8"), toml)
    original = _parse(written, toml)
    additions = {
        key: part
        for key, value in current.items()
        if key not in polter_keys and (part := _changed(original.get(key, _SAME), value)) is not _SAME
    }
    if not additions:
        return []
    user_text = user_file.read_text(encoding="utf-8") if user_file.exists() else ""
    try:
        user = _parse(user_text, toml)
    except ValueError as exc:
        raise ValueError(f"{user_file} is not plain {'TOML' if toml else 'JSON'} ({exc})") from exc
    missing = _missing(user, additions)
    if not missing:
        return []
    expected = _merged(user, missing)
    if toml:
        values = {key: value for key, value in missing.items() if not isinstance(value, dict)}
        tables = {key: value for key, value in missing.items() if isinstance(value, dict)}
        parts = [tomli_w.dumps(values)] if values else []
        parts += [user_text if user_text.endswith("\n") else user_text + "\n"] if user_text else []
        parts += [tomli_w.dumps(tables)] if tables else []
        text = "\n".join(parts)
        try:
            if tomllib.loads(text) != expected:
                raise ValueError("the settings would not read back as the user's plus the additions")
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(
                f"{user_file}: adding {', '.join(_paths(missing))} would not be valid TOML ({exc})"
            ) from exc
    else:
        text = json.dumps(expected, indent=2) + "\n"
    _write(user_file, text)
    return _paths(missing)


def _write(path: Path, text: str) -> None:
    """Replace ``path`` atomically, keeping its permissions (0600 for a new file)."""
    target = path.resolve() if path.exists() else path
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    mode = target.stat().st_mode & 0o777 if target.exists() else 0o600
    handle, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(text)
        os.chmod(temp, mode)
        os.replace(temp, target)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise
