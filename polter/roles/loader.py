"""Reading one role file: TOML → :class:`Role`, with every problem named by file, line and field.

``tomllib`` gives a line for syntax errors only, so for everything else (an unknown key, a bad
pattern, a missing default) this module finds the line of the offending key or value in the source
text with a small scanner of TOML key paths. That is best effort: a problem whose place cannot be
found is reported without a line, never dropped.
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

__all__ = ["RoleFile", "locate_line", "read_role_file", "role_files", "toml_syntax_error"]

_BARE_KEY = r"[A-Za-z0-9_-]+"
_KEY = rf"""(?:{_BARE_KEY}|"(?:[^"\\]|\\.)*"|'[^']*')"""
_DOTTED = rf"{_KEY}(?:\s*\.\s*{_KEY})*"
_HEADER = re.compile(rf"^\s*\[\[?\s*({_DOTTED})\s*\]\]?\s*(?:#.*)?$")
_ASSIGNMENT = re.compile(rf"^\s*({_DOTTED})\s*=")
_KEY_PART = re.compile(_KEY)
_TOML_POSITION = re.compile(r"\s*\((?:at line (\d+), column (\d+)|at end of document)\)$")


def _key_parts(dotted: str) -> tuple[str, ...]:
    parts = []
    for match in _KEY_PART.finditer(dotted):
        part = match.group(0)
        if part[0] in "\"'":
            part = part[1:-1].encode().decode("unicode_escape") if part[0] == '"' else part[1:-1]
        parts.append(part)
    return tuple(parts)


def _key_lines(text: str) -> dict[tuple[str, ...], list[int]]:
    """Every key path of a TOML text and the lines it is written on (tables and assignments)."""
    lines: dict[tuple[str, ...], list[int]] = {}
    table: tuple[str, ...] = ()
    in_multiline: str | None = None
    for number, line in enumerate(text.splitlines(), 1):
        if in_multiline is not None:
            if line.count(in_multiline) % 2 == 1:
                in_multiline = None
            continue
        if header := _HEADER.match(line):
            table = _key_parts(header.group(1))
            lines.setdefault(table, []).append(number)
            continue
        if assignment := _ASSIGNMENT.match(line):
            lines.setdefault(table + _key_parts(assignment.group(1)), []).append(number)
            rest = line[assignment.end() :]
            for quotes in ('"""', "'''"):
                if rest.count(quotes) % 2 == 1:
                    in_multiline = quotes
    return lines


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
        return locate_line(self.text, _key_parts(field), value)


def locate_line(text: str, path: Sequence[str], value: str | None = None) -> int | None:
    """The line of the key ``path`` in a TOML text (its longest written prefix: a table header, a
    dotted key, an inline table), or of the quoted ``value`` in the key's value; None if not found."""
    lines = _key_lines(text)
    start = None
    for length in range(len(path), 0, -1):
        if numbers := lines.get(tuple(path[:length])):
            start = numbers[0]
            break
    if start is None or value is None:
        return start
    source = text.splitlines()
    quoted = (f'"{value}"', f"'{value}'")
    for number in range(start, len(source) + 1):
        line = source[number - 1]
        if number > start and (_ASSIGNMENT.match(line) or _HEADER.match(line)):
            break
        if any(candidate in line for candidate in quoted):
            return number
    return start


def _field_name(loc: Sequence[int | str]) -> str:
    parts = []
    for part in loc:
        if isinstance(part, int) or part == "[key]":
            continue
        parts.append(part if re.fullmatch(_BARE_KEY, part) else f'"{part}"')
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


def toml_syntax_error(path: Path | str, text: str, error: tomllib.TOMLDecodeError | str) -> RoleError:
    """A ``tomllib`` syntax error as ``file:line: invalid TOML: reason (column N)``.

    tomllib hides the position inside its message, and reports a key written twice at the end of the
    document; this finds the line (the second writing of the key, for that case). Used for every TOML
    file Polter reads (roles, the servers file, the app's config), so they all report alike.
    """
    message = str(error)
    position = _TOML_POSITION.search(message)
    line = None
    reason = message
    if position is not None:
        reason = message[: position.start()]
        if position.group(1):
            line, column = int(position.group(1)), int(position.group(2))
            reason += f" (column {column})"
        else:
            line = _duplicate_key_line(text) if "overwrite" in reason else None
            line = line or max(1, len(text.splitlines()))
    return RoleError(f"invalid TOML: {reason}", path=path, line=line)


def _duplicate_key_line(text: str) -> int | None:
    """tomllib reports a key written twice at the end of the document; find the second one."""
    repeats = [numbers[1] for numbers in _key_lines(text).values() if len(numbers) > 1]
    return min(repeats, default=None)


def role_files(path: Path) -> Iterator[Path]:
    """The role files at ``path``: the file itself, or a folder's ``*.toml`` files, sorted by name."""
    if path.is_file():
        yield path
    elif path.is_dir():
        yield from sorted(child for child in path.glob("*.toml") if child.is_file())
