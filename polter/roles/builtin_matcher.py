"""Matching a role's built-in rules against what a call touches: globs over commands and paths, selectors,
path sets, and a part known only when the line runs (which takes the strictest rule that could match it).

Ask and deny rules also match a command's other spellings (:mod:`polter.roles.spellings`); an allow never
does. ``shell(@read-only)`` matches a command of :data:`~polter.roles.builtins.READ_ONLY_COMMANDS` only when
nothing about its spelling makes it write, fetch or run something else (the access's ``caveat``).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from polter.roles.builtins import BUILTIN_KINDS, PATH_KINDS, READ_ONLY_COMMANDS, Access, BuiltinPattern
from polter.roles.shell import HOLE

__all__ = ["BuiltinMatcher", "could_match"]


# -- matching ------------------------------------------------------------------------------------------


def _glob_tokens(glob: str, *, path: bool) -> list[str]:
    """A glob as tokens: literal characters, ``ANY`` (crosses '/'), ``SEG`` (one path segment's worth)."""
    tokens: list[str] = []
    index = 0
    while index < len(glob):
        char = glob[index]
        if char == "*":
            double = glob.startswith("**", index)
            tokens.append("ANY" if double or not path else "SEG")
            index += 2 if double else 1
        elif char == HOLE:
            tokens.append("ANY")
            index += 1
        else:
            tokens.append(char)
            index += 1
    return tokens


def _regex(tokens: list[str]) -> re.Pattern[str]:
    parts = [".*" if token == "ANY" else "[^/]*" if token == "SEG" else re.escape(token) for token in tokens]
    return re.compile("".join(parts), re.DOTALL)


def could_match(rule: list[str], subject: list[str]) -> bool:
    """Whether some value of ``subject``'s holes matches ``rule`` (both as tokens; every wildcard counted
    as crossing '/', which errs on the strict side)."""
    rule = ["ANY" if token == "SEG" else token for token in rule]
    rows, cols = len(rule), len(subject)
    reach = [[False] * (cols + 1) for _ in range(rows + 1)]
    reach[rows][cols] = True
    for i in range(rows, -1, -1):
        for j in range(cols, -1, -1):
            if i == rows and j == cols:
                continue
            a = rule[i] if i < rows else None
            b = subject[j] if j < cols else None
            ok = False
            if a == "ANY":
                ok = reach[i + 1][j] or (j < cols and reach[i][j + 1])
            if not ok and b == "ANY":
                ok = reach[i][j + 1] or (i < rows and reach[i + 1][j])
            if not ok and a is not None and b is not None and a != "ANY" and b != "ANY":
                ok = a == b and reach[i + 1][j + 1]
            reach[i][j] = ok
    return reach[0][0]


@dataclass(slots=True)
class _Compiled:
    pattern: BuiltinPattern
    rank: int
    tokens: list[str] = field(default_factory=list)
    regex: re.Pattern[str] | None = None
    prefix: str | None = None
    """For a rule of the form LITERAL* : the literal (a subject starting with it is surely matched)."""
    read_only: bool = False
    """Part of ``shell(@read-only)``: matches only a command with no caveat."""


class BuiltinMatcher:
    """The role's built-in rules, ready to answer "which rules match this access, and how strictly".

    Built from ``(pattern, rank)`` pairs (rank: 0 allow, 1 ask, 2 deny) plus the pane's directory and
    home, which anchor relative and ``~`` path patterns.
    """

    def __init__(self, patterns: Iterable[tuple[BuiltinPattern, int]]) -> None:
        self._rules: dict[str, list[tuple[BuiltinPattern, int]]] = {}
        self._tools: list[tuple[re.Pattern[str], BuiltinPattern, int]] = []
        for pattern, rank in patterns:
            if pattern.tool_name:
                regex = re.compile(".*".join(re.escape(part) for part in pattern.kind.split("*")))
                self._tools.append((regex, pattern, rank))
            else:
                self._rules.setdefault(pattern.kind, []).append((pattern, rank))
        self._compiled: dict[tuple[str, str, str], list[_Compiled]] = {}

    def has(self, kind: str) -> bool:
        return bool(self._rules.get(kind))

    def _for(self, kind: str, project: str, home: str) -> list[_Compiled]:
        key = (kind, project, home)
        compiled = self._compiled.get(key)
        if compiled is None:
            compiled = []
            for pattern, rank in self._rules.get(kind, ()):
                compiled += _compile(pattern, rank, project, home)
            if len(self._compiled) > 256:
                self._compiled.clear()
            self._compiled[key] = compiled
        return compiled

    def matches(self, access: Access, project: str, home: str) -> tuple[list[tuple[BuiltinPattern, int]], bool]:
        """The rules that match (or, for a dynamic subject, could match) ``access``, and whether one of them
        surely matches (so the default cannot apply)."""
        if access.kind not in BUILTIN_KINDS:
            tool_hits = [(pattern, rank) for regex, pattern, rank in self._tools if regex.fullmatch(access.kind)]
            return tool_hits, bool(tool_hits)
        rules = self._for(access.kind, project, home)
        hits: list[tuple[BuiltinPattern, int]] = []
        sure = False
        subjects = list(access.forms) if access.kind in PATH_KINDS and access.forms else [access.subject]
        for rule in rules:
            if rule.pattern.argument is None:
                hits.append((rule.pattern, rule.rank))
                sure = True
                continue
            if rule.read_only and access.caveat is not None:
                continue  # on the read-only list, but not read-only as spelled
            if access.kind == "web" and rule.pattern.argument.startswith("domain:"):
                if access.host is None:
                    continue
                subject_list = [access.host]
            else:
                subject_list = subjects + list(access.spellings) if rule.rank > 0 else subjects
            hit, surely = _rule_hits(rule, subject_list)
            if hit:
                hits.append((rule.pattern, rule.rank))
                sure = sure or surely
        return hits, sure


def _rule_hits(rule: _Compiled, subjects: list[str]) -> tuple[bool, bool]:
    """Whether ``rule`` matches one of the subjects (a path's forms, a command as written and by its
    program's name): (could, surely)."""
    if isinstance(rule, _Outside):
        return rule.hits(subjects)
    could = sure = False
    for subject in subjects:
        if HOLE not in subject:
            if rule.regex is not None and rule.regex.fullmatch(subject):
                return True, True
            continue
        if could_match(rule.tokens, _glob_tokens(subject, path=False)):
            could = True
            known = subject.split(HOLE, 1)[0]
            if rule.prefix is not None and known.startswith(rule.prefix):
                sure = True
    return could, sure


def _compile(pattern: BuiltinPattern, rank: int, project: str, home: str) -> list[_Compiled]:
    """A pattern as one or more matchable rules (a selector or path set expands to several)."""
    argument = pattern.argument
    if argument is None:
        return [_Compiled(pattern, rank)]
    if pattern.kind == "shell":
        if argument == "@read-only":
            return [replace(_glob_rule(pattern, rank, glob, path=False), read_only=True) for glob in READ_ONLY_COMMANDS]
        return [_glob_rule(pattern, rank, argument, path=False)]
    if pattern.kind in PATH_KINDS:
        if argument == "@project":
            return [
                _glob_rule(pattern, rank, project, path=True),
                _glob_rule(pattern, rank, project + "/**", path=True),
            ]
        if argument == "@outside":
            return [_Outside(pattern, rank, project)]
        return [_glob_rule(pattern, rank, _anchor(argument, project, home), path=True)]
    if pattern.kind == "web" and argument.startswith("domain:"):
        return [_glob_rule(pattern, rank, argument[len("domain:") :].lower(), path=False)]
    return [_glob_rule(pattern, rank, argument, path=False)]


def _glob_rule(pattern: BuiltinPattern, rank: int, glob: str, *, path: bool) -> _Compiled:
    """A glob as a rule; Claude Code's ``cmd:*`` means the command alone, or followed by a space and anything."""
    if not path and glob.endswith(":*"):
        stem = glob[:-2]
        tokens = _glob_tokens(stem, path=False)
        regex = re.compile(_regex(tokens).pattern + r"(?: .*)?", re.DOTALL)
        return _Compiled(pattern, rank, tokens + ["ANY"], regex, stem + " " if "*" not in stem else None)
    tokens = _glob_tokens(glob, path=path)
    prefix = glob[:-1] if glob.endswith("*") and "*" not in glob[:-1] and not path else None
    if path and glob.endswith("/**") and "*" not in glob[:-3]:
        prefix = glob[:-2]
    return _Compiled(pattern, rank, tokens, _regex(tokens), prefix)


class _Outside(_Compiled):
    """``@outside``: any path that is not the pane's directory or under it."""

    def __init__(self, pattern: BuiltinPattern, rank: int, project: str) -> None:
        super().__init__(pattern, rank, ["ANY"], None, None)
        self.project = project

    def inside(self, path: str) -> bool:
        return path == self.project or path.startswith(self.project.rstrip("/") + "/")

    def hits(self, subjects: list[str]) -> tuple[bool, bool]:
        """A form outside surely matches; a dynamic path could always leave (``$X`` may hold ``../..``)."""
        could = sure = False
        for subject in subjects:
            known = subject.split(HOLE, 1)[0]
            if HOLE not in subject:
                if not self.inside(subject):
                    return True, True
                continue
            could = True
            sure = sure or (known.startswith("/") and not self.inside(known) and not self.project.startswith(known))
        return could, sure


def _anchor(argument: str, project: str, home: str) -> str:
    """A path pattern as an absolute glob: ``~/`` → home, ``//x`` and ``/x`` absolute, else under the project."""
    if argument == "~" or argument.startswith("~/"):
        return home + argument[1:]
    if argument.startswith("//"):
        return argument[1:]
    if argument.startswith("/"):
        return argument
    relative = argument[2:] if argument.startswith("./") else argument
    return posixpath.join(project, relative) if relative else project
