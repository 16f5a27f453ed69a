"""Role patterns: their syntax (checked once, with a message that says what to write instead) and
their compiled matchers (so a decision costs a few dict lookups and at most a couple of regex runs).

Three pattern kinds:

- server patterns: a server name with ``*`` globs (``github``, ``git*``);
- tool patterns: ``server/tool`` with ``*`` globs (``github/*``, ``*/delete_*``), or a selector that
  matches MCP tool annotations, alone (``@read-only``) or for one server glob (``github/@destructive``);
  a ``server/tool`` pattern may add conditions on the call's arguments, in the syntax of the CLI's own
  tools (``fs/write_file(path=src/**)``, ``terraria/player_ban(player=*admin*)``): see :class:`ArgumentRule`;
- skill patterns: a skill name with ``*`` globs (``pdf``, ``*deploy*``).

``*`` is the only wildcard. In the server part it never crosses the ``/``.

Gate keywords are matched here too: normalised (NFKC, casefolded), found anywhere in the human's
recent input, an ASCII keyword only as whole words (give or take an English ending).
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal, overload

__all__ = [
    "SELECTORS",
    "ArgumentRule",
    "NameMatcher",
    "ToolMatcher",
    "ToolPattern",
    "annotation_matches",
    "check_server_pattern",
    "check_skill_pattern",
    "check_tool_pattern",
    "keyword_regex",
    "normalise_text",
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
    name, conditions = _split_arguments(pattern)
    if conditions is not None:
        if name.startswith("@") or "/@" in name:
            return f"{pattern!r}: a selector takes no argument conditions"
        if error := _check_conditions(pattern, conditions):
            return error
        if error := check_tool_pattern(name):
            return error.replace(repr(name), repr(pattern), 1)
        return None
    if pattern.startswith("@"):
        return _check_selector(pattern, pattern[1:])
    if "/" not in pattern:
        hint = '"*/*"' if pattern == "*" else f'"{pattern}/*"'
        return f"{pattern!r}: a tool pattern is server/tool (write {hint} for every tool of it)"
    server, tool = pattern.split("/", 1)
    if server.startswith("@"):
        return f'{pattern!r}: a selector stands alone or after the server, as in "github/@read-only"'
    if error := _check_glob(server, pattern, "server part before '/'"):
        return error
    if tool.startswith("@"):
        return _check_selector(pattern, tool[1:])
    return _check_glob(tool, pattern, "tool part after '/'")


_ARGUMENT_KEY = re.compile(r"^[A-Za-z0-9_\-]+(\.[A-Za-z0-9_\-]+)*$")


def _split_arguments(pattern: str) -> tuple[str, list[tuple[str, str]] | None]:
    """``server/tool(key=glob, ...)`` → ``("server/tool", [(key, glob), ...])``; no parentheses → None."""
    if "(" not in pattern and not pattern.endswith(")"):
        return pattern, None
    name, _, rest = pattern.partition("(")
    if not rest.endswith(")") or "(" in rest[:-1] or ")" in rest[:-1]:
        return name, [("", "")]  # reported by _check_conditions as malformed
    conditions = []
    for part in rest[:-1].split(","):
        key, equals, glob = part.strip().partition("=")
        conditions.append((key.strip(), glob.strip()) if equals else ("", part))
    return name, conditions


def _check_conditions(pattern: str, conditions: list[tuple[str, str]]) -> str | None:
    for key, glob in conditions:
        if not key or not _ARGUMENT_KEY.match(key):
            return (
                f"{pattern!r}: argument conditions are key=glob, separated by commas, in one pair of "
                f'parentheses (as in "fs/write_file(path=src/**)"); a key names an argument, or a field of '
                "one with dots (options.mode)"
            )
        if not glob:
            return f"{pattern!r}: the condition on {key} has no glob (write {key}=* for any value)"
        bad = sorted(set(glob) & (_UNSUPPORTED_GLOB | set("\"'\\;")))
        if bad:
            return f"{pattern!r}: only * and ** are wildcards in an argument's glob ({' '.join(bad)} is not supported)"
    if len({key for key, _ in conditions}) != len(conditions):
        return f"{pattern!r}: an argument is named twice"
    return None


def _check_selector(pattern: str, name: str) -> str | None:
    if name not in SELECTORS:
        known = ", ".join(f"@{selector}" for selector in SELECTORS)
        return f"{pattern!r}: unknown selector '@{name}' (known: {known})"
    return None


@dataclass(frozen=True, slots=True)
class ToolPattern:
    """A parsed tool pattern: a server glob and either a tool glob or an annotation selector, and the
    conditions on the call's arguments (``(key, glob)`` pairs; none for most patterns)."""

    text: str
    server: str
    tool: str | None
    selector: Selector | None
    arguments: tuple[tuple[str, str], ...] = ()


def parse_tool_pattern(pattern: str) -> ToolPattern:
    """Parse a pattern that :func:`check_tool_pattern` accepted."""
    if error := check_tool_pattern(pattern):
        raise ValueError(error)
    name, conditions = _split_arguments(pattern)
    if conditions is not None:
        named = parse_tool_pattern(name)
        return ToolPattern(pattern, named.server, named.tool, None, tuple(conditions))
    if pattern.startswith("@"):
        return ToolPattern(pattern, "*", None, _selector(pattern[1:]))
    server, tool = pattern.split("/", 1)
    if tool.startswith("@"):
        return ToolPattern(pattern, server, None, _selector(tool[1:]))
    return ToolPattern(pattern, server, tool, None)


def _selector(name: str) -> Selector:
    """The selector called ``name`` (checked by :func:`check_tool_pattern` before)."""
    [selector] = [selector for selector in SELECTORS if selector == name]
    return selector


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


def normalise_text(text: str) -> str:
    """What keyword matching compares: NFKC (full-width → ASCII), casefolded, whitespace collapsed."""
    return re.sub(r"\s+", " ", unicodedata.normalize("NFKC", text).casefold())


_ENDINGS = "(?:s|es|d|ed|ing|ment|ments|al)?"
"""English endings an ASCII keyword may take: "ban" → "bans", "banned"; "delete" → "deleting"."""


def _keyword_word(word: str) -> str:
    """The regex for one word of a keyword: whole, give or take an English ending ("shutting down")."""
    last = word[-1:]
    if not (last.isascii() and last.isalnum()):
        return re.escape(word)  # Chinese, say: matches anywhere
    if last.isdigit():
        return re.escape(word) + "(?![a-z0-9])"
    if last == "e":  # "delete" → "deleting", "remove" → "removal": the e may go
        stem = f"(?:{re.escape(word)}|{re.escape(word[:-1])}(?=ing|al))"
    else:  # "ban" → "banned", "ship" → "shipping": the last consonant may double
        stem = f"{re.escape(word)}(?:{re.escape(last)}(?=ed|ing))?"
    return stem + _ENDINGS + "(?![a-z0-9])"


def keyword_regex(keywords: Sequence[str]) -> re.Pattern[str]:
    """A regex that finds any keyword.

    A keyword that starts with an ASCII letter or digit must start a word, and each of its words that
    ends with one must end a word, give or take an English ending: "ban" matches "banned", "bans" and
    "请ban他", not "urban", "banner" or "piggy bank". Other keywords (Chinese, say) match anywhere.
    """
    parts = []
    for keyword in keywords:
        words = normalise_text(keyword.strip()).split(" ")
        body = r"\s+".join(_keyword_word(word) for word in words)
        first = words[0][:1]
        parts.append(("(?<![a-z0-9])" if first.isascii() and first.isalnum() else "") + body)
    return re.compile("|".join(parts))


def _glob_regex(glob: str, star: str) -> str:
    return star.join(re.escape(part) for part in glob.split("*"))


class _Alternation:
    """Globs compiled into one regex, tried strictest first, so a match is the strictest one."""

    __slots__ = ("_regex", "_texts")

    def __init__(self, entries: list[tuple[int, str, str]]) -> None:  # (rank, regex, text)
        entries = sorted(entries, key=lambda entry: -entry[0])
        self._regex = re.compile("|".join(f"({regex})" for _, regex, _ in entries), re.DOTALL)
        self._texts = [(rank, text) for rank, _, text in entries]

    def match(self, subject: str) -> tuple[int, str] | None:
        found = self._regex.fullmatch(subject)
        if found is None:
            return None
        assert found.lastindex is not None  # each alternative is one group, and the globs' regexes have none
        return self._texts[found.lastindex - 1]


@overload
def _stricter(best: tuple[int, str] | None, other: tuple[int, str]) -> tuple[int, str]: ...
@overload
def _stricter(best: tuple[int, str] | None, other: tuple[int, str] | None) -> tuple[int, str] | None: ...
def _stricter(best: tuple[int, str] | None, other: tuple[int, str] | None) -> tuple[int, str] | None:
    if other is None:
        return best
    return other if best is None or other[0] > best[0] else best


class NameMatcher:
    """The strictest match among ranked name globs: an exact-name dict, then one regex.

    Each entry is (glob, rank, text): ``text`` is what a match reports (the glob itself, or for a
    selector the whole tool pattern it came from).
    """

    __slots__ = ("_exact", "_globs", "_top")

    def __init__(self, entries: Iterable[tuple[str, int, str]]) -> None:
        self._exact: dict[str, tuple[int, str]] = {}
        globs = []
        for glob, rank, text in entries:
            if "*" in glob:
                globs.append((rank, _glob_regex(glob, ".*"), text))
            else:
                self._exact[glob] = _stricter(self._exact.get(glob), (rank, text))
        self._globs = _Alternation(globs) if globs else None
        self._top = max([rank for rank, _, _ in globs] + [rank for rank, _ in self._exact.values()], default=0)

    def best(self, name: str) -> tuple[int, str] | None:
        """(rank, text) of the strictest entry matching ``name``, or None."""
        found = self._exact.get(name)
        if self._globs is None or (found is not None and found[0] == self._top):
            return found
        return _stricter(found, self._globs.match(name))


def _bucket(tool_glob: str) -> tuple[int, str] | None:
    """Where a server-glob pattern is filed: by the tool's first character when the glob starts with
    a literal, else by its last when it ends with one, else with those tried for every tool."""
    if not tool_glob.startswith("*"):
        return (0, tool_glob[0])
    if not tool_glob.endswith("*"):
        return (-1, tool_glob[-1])
    return None


class ToolMatcher:
    """The strictest matching pattern among ranked tool patterns.

    Patterns are bucketed by shape so that a thousand of them cost little: exact ``server/tool``
    names in a dict; globs on a literal server in one regex per server; globs on a server glob in
    one regex per first (or last) literal character of the tool part; selectors by selector and server.
    """

    __slots__ = ("_exact", "_by_server", "_generic", "_generic_any", "_selectors", "_top")

    def __init__(self, patterns: Iterable[tuple[ToolPattern, int]]) -> None:
        self._exact: dict[tuple[str, str], tuple[int, str]] = {}
        by_server: dict[str, list[tuple[int, str, str]]] = {}
        generic: dict[tuple[int, str] | None, list[tuple[int, str, str]]] = {}
        selectors: dict[Selector, list[tuple[str, int, str]]] = {}
        ranks = [0]
        for pattern, rank in patterns:
            ranks.append(rank)
            if pattern.selector is not None:
                selectors.setdefault(pattern.selector, []).append((pattern.server, rank, pattern.text))
                continue
            tool = pattern.tool
            assert tool is not None  # a pattern has a tool glob or a selector
            if "*" in pattern.server:
                regex = f"{_glob_regex(pattern.server, '[^/]*')}/{_glob_regex(tool, '.*')}"
                generic.setdefault(_bucket(tool), []).append((rank, regex, pattern.text))
            elif "*" in tool:
                by_server.setdefault(pattern.server, []).append((rank, _glob_regex(tool, ".*"), pattern.text))
            else:
                key = (pattern.server, tool)
                self._exact[key] = _stricter(self._exact.get(key), (rank, pattern.text))
        self._by_server = {server: _Alternation(entries) for server, entries in by_server.items()}
        self._generic_any = _Alternation(generic.pop(None)) if None in generic else None
        self._generic = {first: _Alternation(entries) for first, entries in generic.items()}
        self._selectors = {selector: NameMatcher(servers) for selector, servers in selectors.items()}
        self._top = max(ranks)

    def best(self, server: str, tool: str, read_only: bool | None, destructive: bool | None) -> tuple[int, str] | None:
        """(rank, pattern) of the strictest pattern matching this tool, or None."""
        top = self._top
        found = self._exact.get((server, tool))
        if found is not None and found[0] == top:
            return found
        bucket = self._by_server.get(server)
        if bucket is not None:
            found = _stricter(found, bucket.match(tool))
            if found is not None and found[0] == top:
                return found
        if self._generic_any is not None or self._generic:
            name = f"{server}/{tool}"
            generic = self._generic
            for bucket in (generic.get((0, tool[:1])), generic.get((-1, tool[-1:])), self._generic_any):
                if bucket is not None:
                    found = _stricter(found, bucket.match(name))
                    if found is not None and found[0] == top:
                        return found
        for selector in SELECTORS:  # a fixed order: the reported pattern never depends on unrelated ones
            servers = self._selectors.get(selector)
            if servers is not None and annotation_matches(selector, read_only, destructive):
                found = _stricter(found, servers.best(server))
        return found


class ArgumentRule:
    """The conditions of a tool pattern on a call's arguments, compiled.

    A condition ``key=glob`` holds when the argument ``key`` (``a.b`` reaches into an object) is present and its
    value matches ``glob``: ``*`` any run of characters but ``/``, ``**`` any run at all, the rest literal, the
    whole value (``path=src/**``, ``player=*admin*``). A string is matched as it is, anything else as its JSON
    text (``42``, ``true``). For a list, a ``deny`` or ``ask`` rule holds when any element matches and an
    ``allow`` rule only when every element does: the strict reading each way, as with the built-in tools' rules,
    so no element can slip a denied value past. Every condition of the pattern must hold.
    """

    __slots__ = ("_conditions", "any_element", "pattern")

    def __init__(self, pattern: ToolPattern, *, any_element: bool) -> None:
        self.pattern = pattern
        self.any_element = any_element
        self._conditions = tuple((tuple(key.split(".")), _argument_regex(glob)) for key, glob in pattern.arguments)

    def matches(self, arguments: object) -> bool:
        for path, regex in self._conditions:
            value = arguments
            for key in path:
                if not isinstance(value, dict) or key not in value:
                    return False
                value = value[key]
            if isinstance(value, list):
                hits = [_value_matches(regex, item) for item in value]
                if not hits or not (any(hits) if self.any_element else all(hits)):
                    return False
            elif not _value_matches(regex, value):
                return False
        return True


def _argument_regex(glob: str) -> re.Pattern[str]:
    parts = [
        ".*" if part == "**" else "[^/]*" if part == "*" else re.escape(part) for part in re.split(r"(\*\*|\*)", glob)
    ]
    return re.compile("".join(parts), re.DOTALL)


def _value_matches(regex: re.Pattern[str], value: object) -> bool:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, separators=(",", ":"))
    return regex.fullmatch(text) is not None
