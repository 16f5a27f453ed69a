"""Role patterns: their syntax (checked once, with a message that says what to write instead) and
their compiled matchers (so a decision costs a few dict lookups and at most a couple of regex runs).

Three pattern kinds:

- server patterns: a server name with ``*`` globs (``github``, ``git*``);
- tool patterns: ``server/tool`` with ``*`` globs (``github/*``, ``*/delete_*``), or a selector that
  matches MCP tool annotations, alone (``@read-only``) or for one server glob (``github/@destructive``);
- skill patterns: a skill name with ``*`` globs (``pdf``, ``*deploy*``).

``*`` is the only wildcard. In the server part it never crosses the ``/``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "SELECTORS",
    "NameMatcher",
    "ToolMatcher",
    "ToolPattern",
    "annotation_matches",
    "check_server_pattern",
    "check_skill_pattern",
    "check_tool_pattern",
    "parse_tool_pattern",
]

Selector = Literal["read-only", "destructive"]
SELECTORS: tuple[Selector, ...] = ("read-only", "destructive")

_UNSUPPORTED_GLOB = set("?[]{}!")
_FORBIDDEN = set("\"'\\,;")


def _check_glob(part: str, pattern: str, what: str) -> str | None:
    """The checks every name glob passes; returns an error message about ``pattern`` or None."""
    if not part:
        return f"{pattern!r}: the {what} is empty"
    if any(char.isspace() for char in part):
        return f"{pattern!r}: a pattern contains no whitespace"
    bad = sorted(set(part) & _UNSUPPORTED_GLOB)
    if bad:
        return f"{pattern!r}: only * is a wildcard ({' '.join(bad)} is not supported)"
    bad = sorted(set(part) & _FORBIDDEN)
    if bad:
        return f"{pattern!r}: {' '.join(bad)} cannot appear in a pattern"
    return None


def check_server_pattern(pattern: str) -> str | None:
    """Why ``pattern`` is not a valid server pattern, or None when it is."""
    if "/" in pattern:
        return f"{pattern!r}: a server pattern names a server, without '/' (tool patterns go in tools.*)"
    if pattern.startswith("@"):
        return f"{pattern!r}: selectors match tool annotations and belong in tools.*"
    return _check_glob(pattern, pattern, "server pattern")


def check_skill_pattern(pattern: str) -> str | None:
    """Why ``pattern`` is not a valid skill pattern, or None when it is."""
    if pattern.startswith("@"):
        return f"{pattern!r}: selectors match tool annotations and belong in tools.*"
    return _check_glob(pattern, pattern, "skill pattern")


def check_tool_pattern(pattern: str) -> str | None:
    """Why ``pattern`` is not a valid tool pattern, or None when it is."""
    if pattern.startswith("@"):
        return _check_selector(pattern, pattern[1:])
    if "/" not in pattern:
        hint = '"*/*"' if pattern == "*" else f'"{pattern}/*"'
        return f"{pattern!r}: a tool pattern is server/tool (write {hint} for every tool of it)"
    server, tool = pattern.split("/", 1)
    if server.startswith("@"):
        return f"{pattern!r}: a selector stands alone or after the server, as in \"github/@read-only\""
    if error := _check_glob(server, pattern, "server part before '/'"):
        return error
    if tool.startswith("@"):
        return _check_selector(pattern, tool[1:])
    return _check_glob(tool, pattern, "tool part after '/'")


def _check_selector(pattern: str, name: str) -> str | None:
    if name not in SELECTORS:
        known = ", ".join(f"@{selector}" for selector in SELECTORS)
        return f"{pattern!r}: unknown selector '@{name}' (known: {known})"
    return None


@dataclass(frozen=True, slots=True)
class ToolPattern:
    """A parsed tool pattern: a server glob and either a tool glob or an annotation selector."""

    text: str
    server: str
    tool: str | None
    selector: Selector | None


def parse_tool_pattern(pattern: str) -> ToolPattern:
    """Parse a pattern that :func:`check_tool_pattern` accepted."""
    if error := check_tool_pattern(pattern):
        raise ValueError(error)
    if pattern.startswith("@"):
        return ToolPattern(pattern, "*", None, pattern[1:])  # type: ignore[arg-type]
    server, tool = pattern.split("/", 1)
    if tool.startswith("@"):
        return ToolPattern(pattern, server, None, tool[1:])  # type: ignore[arg-type]
    return ToolPattern(pattern, server, tool, None)


def annotation_matches(selector: Selector, read_only: bool | None, destructive: bool | None) -> bool:
    """Whether a tool with these MCP annotation hints matches ``selector``.

    An absent hint takes the MCP spec's default, which errs on the safe side: ``readOnlyHint``
    defaults to false, so only a tool that says it is read-only matches ``@read-only``;
    ``destructiveHint`` defaults to true for a tool that is not read-only, so a tool that says
    nothing matches ``@destructive``.
    """
    if selector == "read-only":
        return read_only is True
    return destructive is True or (destructive is None and read_only is not True)


def _glob_regex(glob: str, star: str) -> str:
    return star.join(re.escape(part) for part in glob.split("*"))


def _alternation(regexes: Sequence[str]) -> re.Pattern[str]:
    """One regex whose ``lastindex`` - 1 tells which alternative matched (the first in order)."""
    return re.compile("|".join(f"({regex})" for regex in regexes), re.DOTALL)


class NameMatcher:
    """First matching pattern among name globs: an exact-name dict, then one combined regex."""

    __slots__ = ("_exact", "_regex", "_globs")

    def __init__(self, patterns: Iterable[str]) -> None:
        self._exact: dict[str, str] = {}
        self._globs: list[str] = []
        for pattern in patterns:
            if "*" in pattern:
                self._globs.append(pattern)
            else:
                self._exact.setdefault(pattern, pattern)
        self._regex = _alternation([_glob_regex(glob, ".*") for glob in self._globs]) if self._globs else None

    def first(self, name: str) -> str | None:
        """The pattern that matches ``name`` (an exact one before any glob), or None."""
        exact = self._exact.get(name)
        if exact is not None or self._regex is None:
            return exact
        match = self._regex.fullmatch(name)
        return None if match is None else self._globs[match.lastindex - 1]  # type: ignore[operator]


class ToolMatcher:
    """First matching pattern among tool patterns.

    Patterns are bucketed by shape so that a thousand of them cost little: exact ``server/tool``
    names in a dict; globs on a literal server in one regex per server; globs on a server glob in
    one regex over ``server/tool``; selectors last, checked against the annotations.
    """

    __slots__ = ("_exact", "_by_server", "_generic", "_selectors")

    def __init__(self, patterns: Iterable[ToolPattern]) -> None:
        self._exact: dict[tuple[str, str], str] = {}
        by_server: dict[str, list[ToolPattern]] = {}
        generic: list[ToolPattern] = []
        self._selectors: list[tuple[NameMatcher, Selector, str]] = []
        for pattern in patterns:
            if pattern.selector is not None:
                self._selectors.append((NameMatcher([pattern.server]), pattern.selector, pattern.text))
            elif "*" in pattern.server:
                generic.append(pattern)
            elif "*" in pattern.tool:  # type: ignore[operator]
                by_server.setdefault(pattern.server, []).append(pattern)
            else:
                self._exact.setdefault((pattern.server, pattern.tool), pattern.text)  # type: ignore[arg-type]
        self._by_server = {
            server: (_alternation([_glob_regex(p.tool, ".*") for p in group]), [p.text for p in group])  # type: ignore[arg-type]
            for server, group in by_server.items()
        }
        self._generic = (
            (
                _alternation([f"{_glob_regex(p.server, '[^/]*')}/{_glob_regex(p.tool, '.*')}" for p in generic]),  # type: ignore[arg-type]
                [p.text for p in generic],
            )
            if generic
            else None
        )

    def first(self, server: str, tool: str, read_only: bool | None, destructive: bool | None) -> str | None:
        """The first pattern that matches this tool, or None."""
        exact = self._exact.get((server, tool))
        if exact is not None:
            return exact
        bucket = self._by_server.get(server)
        if bucket is not None:
            match = bucket[0].fullmatch(tool)
            if match is not None:
                return bucket[1][match.lastindex - 1]  # type: ignore[operator]
        if self._generic is not None:
            match = self._generic[0].fullmatch(f"{server}/{tool}")
            if match is not None:
                return self._generic[1][match.lastindex - 1]  # type: ignore[operator]
        for servers, selector, text in self._selectors:
            if annotation_matches(selector, read_only, destructive) and servers.first(server) is not None:
                return text
        return None
