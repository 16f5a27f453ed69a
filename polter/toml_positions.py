"""Where a key, a value or a syntax error is in a TOML text: one reader for every TOML file Polter reads
(roles, the servers file, the app's config, a worktree's setup), so they all report ``file:line``.

``tomllib`` gives a line for syntax errors only, so for everything else (an unknown key, a bad value)
this finds the line of the key or value in the source text with a small scanner of TOML key paths:
best effort, a place that cannot be found is reported without a line. It needs neither the roles nor
pydantic, so a process that reads a config file does not load the roles' engine for its messages.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from pathlib import Path

from polter.errors import RoleError

__all__ = ["BARE_KEY", "key_parts", "locate_line", "toml_syntax_error"]

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
