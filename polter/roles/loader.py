"""Reading one role file: TOML → :class:`Role`, with every problem named by file, line and field.

The file is read like every TOML file Polter reads (:class:`polter.toml_files.TomlFile`), with the role's own
words for pydantic's errors (an unknown key lists the known ones) and for its semantic problems (a bad
pattern, a missing default), each at the line of its key or value: best effort, a problem whose place cannot
be found is reported without a line, never dropped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from pydantic import BaseModel, ValidationError

from polter.errors import RoleError
from polter.roles.models import ROLE_NAME, Role
from polter.toml_files import BARE_KEY, TomlFile, key_parts, locate_line, toml_syntax_error

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
    """``tools."a.b"``: a dotted field, keys quoted where TOML would (list indexes and dict keys left out)."""
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
    if not ROLE_NAME.match(path.stem):
        role_file.problems.append(
            RoleError(
                f"{path.stem!r} is not a role name: name the file with letters, digits, '.', '_' and '-'",
                path=path,
            )
        )
        return role_file
    try:
        file = TomlFile.read(path, kind=RoleError)
    except RoleError as exc:
        role_file.problems.append(exc)
        return role_file
    except OSError as exc:
        role_file.problems.append(RoleError(f"cannot read the file: {exc.strerror or exc}", path=path))
        return role_file
    role_file.text, data = file.text, file.data
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
        problems = file.problems(
            exc,
            message=_validation_message,
            field=_field_name,
            value=_validation_value,
            line=lambda loc, value: role_file.locate(_field_name(loc) or None, value),
            kind=RoleError,
        )
        role_file.problems += cast(list[RoleError], problems)  # (each of the kind asked for)
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
