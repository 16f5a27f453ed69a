"""Reading a TOML file Polter reads (roles, the servers file, the app's config, a project's worktree setup):
one reader, so every problem is a :class:`~polter.errors.ConfigError` (or the caller's subclass of it) that
says ``file:line: field: message``.

:meth:`TomlFile.read` reads the text and parses it (a syntax error names its line); :meth:`TomlFile.problems`
turns pydantic's validation errors into those errors, each at the line of its key. ``tomllib`` gives a line
for syntax errors only, so for everything else (an unknown key, a bad value) the line of the key or value is
found in the source text with a small scanner of TOML key paths: best effort, a place that cannot be found
is reported without a line. It needs neither the roles nor a model, so a process that reads a config file
does not load the roles' engine for its messages.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from polter.errors import ConfigError

__all__ = ["BARE_KEY", "TomlFile", "dotted_field", "key_parts", "locate_line", "toml_syntax_error"]

ModelT = TypeVar("ModelT", bound=BaseModel)

BARE_KEY = r"[A-Za-z0-9_-]+"
"""A key that needs no quotes."""
_KEY = rf"""(?:{BARE_KEY}|"(?:[^"\\]|\\.)*"|'[^']*')"""
_DOTTED = rf"{_KEY}(?:\s*\.\s*{_KEY})*"
_HEADER = re.compile(rf"^\s*\[\[?\s*({_DOTTED})\s*\]\]?\s*(?:#.*)?$")
_ASSIGNMENT = re.compile(rf"^\s*({_DOTTED})\s*=")
_KEY_PART = re.compile(_KEY)
_TOML_POSITION = re.compile(r"\s*\((?:at line (\d+), column (\d+)|at end of document)\)$")


def key_parts(dotted: str) -> tuple[str, ...]:
    """The parts of a dotted TOML key, unquoted: ``a."b.c"`` is ``("a", "b.c")``."""
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
            table = key_parts(header.group(1))
            lines.setdefault(table, []).append(number)
            continue
        if assignment := _ASSIGNMENT.match(line):
            lines.setdefault(table + key_parts(assignment.group(1)), []).append(number)
            rest = line[assignment.end() :]
            for quotes in ('"""', "'''"):
                if rest.count(quotes) % 2 == 1:
                    in_multiline = quotes
    return lines


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


def toml_syntax_error(
    path: Path | str, text: str, error: tomllib.TOMLDecodeError | str, kind: type[ConfigError] = ConfigError
) -> ConfigError:
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
    return kind(f"invalid TOML: {reason}", path=path, line=line)


def _duplicate_key_line(text: str) -> int | None:
    """tomllib reports a key written twice at the end of the document; find the second one."""
    repeats = [numbers[1] for numbers in _key_lines(text).values() if len(numbers) > 1]
    return min(repeats, default=None)


def dotted_field(loc: Sequence[int | str]) -> str:
    """``panes[1].adapter`` from pydantic's ``("panes", 1, "adapter")``."""
    return "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in loc).lstrip(".")


def _default_message(error: ErrorDetails) -> str:
    return "unknown key" if error["type"] == "extra_forbidden" else str(error["msg"])


_TABLE_ARRAY = re.compile(r"^\s*\[\[\s*(\w+)\s*\]\]")
_KEY_LINE = re.compile(r"^\s*([A-Za-z0-9_\-]+)\s*=")
_TABLE = re.compile(r"^\s*\[")


@dataclass(frozen=True)
class TomlFile:
    """One TOML file as read: its text and its data, and where things are written in it."""

    path: Path
    text: str
    data: dict[str, Any]

    @classmethod
    def read(cls, path: Path, *, what: str = "the file", kind: type[ConfigError] = ConfigError) -> TomlFile:
        """Read and parse ``path`` (``what`` names it in a message). Raises ``kind`` for a file that cannot be
        read or is not TOML (with its line); a missing file raises :class:`FileNotFoundError`, which each
        caller decides about."""
        try:
            text = path.read_bytes().decode("utf-8")
        except FileNotFoundError:
            raise
        except UnicodeDecodeError as exc:
            raise kind(f"not UTF-8 text (byte {exc.start})", path=path) from None
        except OSError as exc:
            raise kind(f"cannot read {what}: {exc.strerror or exc}", path=path) from None
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as exc:
            raise toml_syntax_error(path, text, exc, kind) from None
        return cls(path, text, data)

    def line(self, loc: Sequence[int | str], value: str | None = None) -> int | None:
        """The line of ``loc`` (``("panes", 1, "adapter")``: the key in the second ``[[panes]]`` table; a dotted
        path of keys otherwise), or of the quoted ``value`` under it."""
        lines = self.text.splitlines()
        if len(loc) >= 2 and isinstance(loc[1], int):
            headers = [
                number
                for number, line in enumerate(lines, 1)
                if (match := _TABLE_ARRAY.match(line)) and match.group(1) == loc[0]
            ]
            if loc[1] < len(headers):
                start = headers[loc[1]]
                key = loc[2] if len(loc) > 2 else None
                for number in range(start + 1, len(lines) + 1):
                    if _TABLE.match(lines[number - 1]):
                        break
                    if key is not None and (match := _KEY_LINE.match(lines[number - 1])) and match.group(1) == key:
                        return number
                return start
        return locate_line(self.text, [str(part) for part in loc if not isinstance(part, int)], value)

    def problem(
        self, message: str, loc: Sequence[int | str] = (), *, kind: type[ConfigError] = ConfigError
    ) -> ConfigError:
        """``file:line: field: message`` for the key at ``loc``."""
        return kind(message, path=self.path, line=self.line(loc) if loc else None, field=dotted_field(loc) or None)

    def problems(
        self,
        error: ValidationError,
        *,
        within: Sequence[int | str] = (),
        message: Callable[[ErrorDetails], str] = _default_message,
        field: Callable[[Sequence[int | str]], str] = dotted_field,
        value: Callable[[ErrorDetails], str | None] = lambda error: None,
        line: Callable[[Sequence[int | str], str | None], int | None] | None = None,
        kind: type[ConfigError] = ConfigError,
    ) -> list[ConfigError]:
        """Each of pydantic's errors in validating (the part at ``within`` of) this file, at its key's line.
        ``message``, ``field``, ``value`` (a text under the key to point at) and ``line`` may say it otherwise."""
        where = line or self.line
        found = []
        for details in error.errors():
            loc = (*within, *details["loc"])
            found.append(
                kind(message(details), path=self.path, line=where(loc, value(details)), field=field(loc) or None)
            )
        return found

    def validate(self, model: type[ModelT], **how: Any) -> ModelT:
        """The file as ``model`` (raises the first of :meth:`problems`, with ``how``)."""
        try:
            return model.model_validate(self.data)
        except ValidationError as exc:
            raise self.problems(exc, **how)[0] from None
