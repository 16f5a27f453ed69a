"""Reading one role file: TOML → :class:`Role`, with every problem named by file, line and field.

``tomllib`` gives a line for syntax errors only, so for everything else (an unknown key, a bad
pattern, a missing default) the line of the offending key or value is found in the source text by
:mod:`polter.toml_positions`. That is best effort: a problem whose place cannot be found is reported
without a line, never dropped.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from polter.errors import RoleError
from polter.roles.models import ROLE_NAME, Role
from polter.toml_positions import BARE_KEY, key_parts, locate_line, toml_syntax_error

__all__ = ["RoleFile", "locate_line", "read_role_file", "role_files", "toml_syntax_error"]


@dataclass
class RoleFile:
    """One role file as read: its role if it is valid, and its problems if not."""

    path: Path
    text: str = ""
    role: Role | None = None
    problems: list[RoleError] = field(default_factory=list)

    @property
    def name(self) -> str:
        return self.path.stem

    def error(self, message: str, field: str | None = None, value: str | None = None) -> RoleError:
        """A :class:`RoleError` for this file, at the line of ``field`` (or of ``value`` under it)."""
        return RoleError(message, path=self.path, line=self.locate(field, value), field=field)

    def locate(self, field: str | None, value: str | None = None) -> int | None:
        """The line of a dotted ``field`` (its longest written prefix), or of ``value`` below it."""
        if field is None:
            return None
        return locate_line(self.text, key_parts(field), value)


def _field_name(loc: Sequence[int | str]) -> str:
    parts = []
    for part in loc:
        if isinstance(part, int) or part == "[key]":
            continue
        parts.append(part if re.fullmatch(BARE_KEY, part) else f'"{part}"')
    return ".".join(parts)


def _known_keys(loc: Sequence[int | str]) -> list[str]:
    """The keys a table at ``loc`` accepts, for an unknown-key message."""
    model: type[BaseModel] | None = Role
    for part in loc[:-1]:
        if model is None or not isinstance(part, str) or part not in model.model_fields:
            return []
        annotation = model.model_fields[part].annotation
        candidates = [annotation, *getattr(annotation, "__args__", ())]
        model = next((c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)), None)
    return list(model.model_fields) if model is not None else []


def _validation_message(error: Any) -> str:
    kind, value = error["type"], error.get("input")
    if kind == "extra_forbidden":
        known = _known_keys(error["loc"])
        return "unknown key" + (f" (known: {', '.join(known)})" if known else "")
    if kind == "value_error":
        return str(error["ctx"]["error"])
    if kind == "literal_error":
        return f"must be {error['ctx']['expected']}, not {value!r}"
    if kind == "missing":
        return "missing"
    if kind == "too_short":
        return "must not be empty"
    expected = {
        "string_type": "a string",
        "list_type": "a list",
        "bool_type": "true or false",
        "dict_type": "a table",
        "model_type": "a table",
    }.get(kind)
    if expected is not None:
        return f"must be {expected}, not {value!r}"
    return str(error["msg"])


def _validation_value(error: Any) -> str | None:
    """The offending text, when it is a string that can be found in the file."""
    loc = error["loc"]
    if loc and loc[-1] == "[key]":
        return str(loc[-2])
    return error["input"] if isinstance(error.get("input"), str) else None


def read_role_file(path: Path) -> RoleFile:
    """Read and validate one role file; never raises for bad content (problems are collected)."""
    role_file = RoleFile(path)
    try:
        role_file.text = path.read_bytes().decode("utf-8")
    except OSError as exc:
        role_file.problems.append(RoleError(f"cannot read the file: {exc.strerror or exc}", path=path))
        return role_file
    except UnicodeDecodeError as exc:
        role_file.problems.append(RoleError(f"not UTF-8 text (byte {exc.start})", path=path))
        return role_file
    if not ROLE_NAME.match(path.stem):
        role_file.problems.append(
            RoleError(
                f"{path.stem!r} is not a role name: name the file with letters, digits, '.', '_' and '-'",
                path=path,
            )
        )
        return role_file
    try:
        data = tomllib.loads(role_file.text)
    except tomllib.TOMLDecodeError as exc:
        role_file.problems.append(toml_syntax_error(path, role_file.text, exc))
        return role_file
    if "name" in data and data["name"] != path.stem:
        role_file.problems.append(
            role_file.error(
                f"{data['name']!r} differs from the file's name: a role is named after its file ({path.stem!r})",
                "name",
            )
        )
    try:
        role = Role.model_validate({**data, "name": path.stem})
    except ValidationError as exc:
        for error in exc.errors():
            role_file.problems.append(
                role_file.error(_validation_message(error), _field_name(error["loc"]) or None, _validation_value(error))
            )
        return role_file
    for problem in role.semantic_problems():
        role_file.problems.append(role_file.error(problem.message, problem.field, problem.value))
    if not role_file.problems:
        role_file.role = role
    return role_file


def role_files(path: Path) -> Iterator[Path]:
    """The role files at ``path``: the file itself, or a folder's ``*.toml`` files, sorted by name."""
    if path.is_file():
        yield path
    elif path.is_dir():
        yield from sorted(child for child in path.glob("*.toml") if child.is_file())
