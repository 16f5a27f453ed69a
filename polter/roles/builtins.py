"""The agent's built-in tools in a role: one vocabulary for every CLI, patterns, and what a call touches.

Every CLI's built-in tools are named by *kind*, the same for every CLI (each adapter maps its CLI's tool
names, see ``docs/adapters.md``):

- ``shell``: a command line (Bash, exec_command, run_shell_command, ...), split into simple commands;
- ``read``: reading files or listing folders, by path;
- ``write``: creating, editing, patching, deleting or moving files, by path;
- ``web``: fetching a URL or searching the web;
- ``agent``: starting a sub-agent;
- ``meta``: tools that act only on the agent's own session (todo lists, plans, questions to the human);
- anything else is its own kind, named by the CLI's tool name (``CronCreate``), and follows the default.

Patterns follow Claude Code's ``Tool(argument)`` syntax: ``shell`` (every command), ``shell(git push*)``
(a glob over the command's words joined by spaces), ``shell(git push:*)`` (``git push`` and anything
after a space), ``shell(@read-only)`` (the commands of :data:`READ_ONLY_COMMANDS`); ``read(src/**)``
(paths relative to the pane's directory; ``*`` is one path segment, ``**`` any number), ``write(~/.ssh/**)``,
``write(/etc/**)``, ``write(@outside)`` (anything outside the pane's directory), ``read(@project)``;
``web(domain:github.com)``, ``web(https://docs.python.org/*)``, ``web(search)``; ``agent(Explore)``.

A call can touch several things: a shell line runs several commands, redirects into files, names paths
in its arguments. Each is decided on its own and the strictest decision wins, so a denied command hidden
in a chain denies the whole line. A part known only when the line runs (``$VAR``) is decided by the
strictest rule that could match it. Pure: paths are normalised by the caller's resolver.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Literal

from polter.roles.shell import HOLE, CommandLine, SimpleCommand, split_command_line

__all__ = [
    "BUILTIN_KINDS",
    "DEFAULT_RESEARCH_BUILTINS",
    "READ_ONLY_COMMANDS",
    "Access",
    "BuiltinCall",
    "BuiltinMatcher",
    "BuiltinPattern",
    "Protected",
    "accesses",
    "check_builtin_pattern",
    "lexical_resolver",
    "parse_builtin_pattern",
]

BuiltinKind = Literal["shell", "read", "write", "web", "agent", "meta"]
BUILTIN_KINDS: tuple[BuiltinKind, ...] = ("shell", "read", "write", "web", "agent", "meta")
PATH_KINDS = ("read", "write")
DEFAULT_RESEARCH_BUILTINS = ("read", "shell(@read-only)", "web", "meta")
"""What the research phase permits of the built-in tools unless ``[phases] builtins`` says otherwise."""

READ_ONLY_COMMANDS: tuple[str, ...] = (
    *(
        f"{name}:*"
        for name in (
            "ls",
            "cat",
            "head",
            "tail",
            "less",
            "more",
            "wc",
            "grep",
            "egrep",
            "fgrep",
            "rg",
            "ag",
            "ack",
            "tree",
            "stat",
            "file",
            "du",
            "df",
            "pwd",
            "echo",
            "printf",
            "which",
            "whereis",
            "type",
            "whoami",
            "id",
            "uname",
            "printenv",
            "basename",
            "dirname",
            "realpath",
            "readlink",
            "uniq",
            "cut",
            "tr",
            "nl",
            "column",
            "diff",
            "cmp",
            "comm",
            "jq",
            "md5sum",
            "sha1sum",
            "sha256sum",
            "sha512sum",
            "true",
            "false",
            "test",
            "[",
            "cd",
            "od",
            "hexdump",
            "xxd",
            "strings",
            "find",
            "fd",
            "fdfind",
            "locate",
            "date",
            "git status",
            "git log",
            "git diff",
            "git show",
            "git blame",
            "git grep",
            "git ls-files",
            "git ls-tree",
            "git rev-parse",
            "git describe",
            "git shortlog",
            "git reflog",
            "git cat-file",
            "git config --get",
            "git config --list",
            "git config -l",
            "git remote -v",
            "git stash list",
            "git tag -l",
            "git tag --list",
            "git branch --list",
            "git merge-base",
            "git show-ref",
            "git for-each-ref",
            "git count-objects",
            "git name-rev",
            "git whatchanged",
            "git check-ignore",
            "git version",
        )
    ),
    "sort",
    "git branch",
    "git branch -a",
    "git branch -v",
    "git branch -vv",
    "git branch -r",
    "git remote",
    "git tag",
    "git help:*",
    "env",
)
"""``shell(@read-only)``: commands that only read (a seatbelt list: their redirections and the paths they
name are still checked, and ``find -exec``/``-delete`` are judged as the commands they run)."""

_PATH_SETS = ("@project", "@outside")
_UNSUPPORTED = set("?[]{}")


# -- patterns ----------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BuiltinPattern:
    """A parsed built-in pattern: a kind (or a CLI tool-name glob) and an optional argument."""

    text: str
    kind: str
    argument: str | None
    tool_name: bool = False
    """The kind part names a CLI tool (``CronCreate``, ``todo*``) rather than one of :data:`BUILTIN_KINDS`."""


_SHAPE = re.compile(r"^(?P<kind>[^()\s]+)(?:\((?P<argument>.*)\))?$", re.DOTALL)


def check_builtin_pattern(pattern: str) -> str | None:
    """Why ``pattern`` is not a valid built-in pattern, or None when it is."""
    shape = _SHAPE.match(pattern)
    if shape is None:
        return (
            f"{pattern!r}: a built-in pattern is a kind, or kind(argument) as in "
            '"shell(git push*)", "write(src/**)", "web(domain:github.com)"'
        )
    kind, argument = shape["kind"], shape["argument"]
    if kind not in BUILTIN_KINDS:
        if argument is not None:
            known = ", ".join(BUILTIN_KINDS)
            return f"{pattern!r}: unknown kind {kind!r} (known: {known}; a CLI tool's own name takes no argument)"
        bad = sorted(set(kind) & (_UNSUPPORTED | set("/\"'\\,;")))
        return f"{pattern!r}: only * is a wildcard ({' '.join(bad)} is not supported)" if bad else None
    if argument is None:
        return None
    if not argument.strip():
        return f"{pattern!r}: the argument is empty (write {kind!r} alone for every {kind} call)"
    if kind == "shell":
        if argument.startswith("@") and argument != "@read-only":
            return f"{pattern!r}: unknown selector {argument!r} (known: @read-only)"
        return None
    if kind in PATH_KINDS:
        if argument.startswith("@") and argument not in _PATH_SETS:
            return f"{pattern!r}: unknown path set {argument!r} (known: {', '.join(_PATH_SETS)})"
        bad = sorted(set(argument) & _UNSUPPORTED)
        if bad:
            return f"{pattern!r}: only * and ** are wildcards in a path ({' '.join(bad)} is not supported)"
        return None
    if kind == "web" and argument.startswith("domain:") and not argument[len("domain:") :]:
        return f"{pattern!r}: name a host after domain: (e.g. domain:github.com or domain:*.python.org)"
    return None


def parse_builtin_pattern(pattern: str) -> BuiltinPattern:
    """Parse a pattern that :func:`check_builtin_pattern` accepted."""
    if error := check_builtin_pattern(pattern):
        raise ValueError(error)
    shape = _SHAPE.match(pattern)
    assert shape is not None
    kind = shape["kind"]
    return BuiltinPattern(pattern, kind, shape["argument"], tool_name=kind not in BUILTIN_KINDS)


def is_builtin_pattern(pattern: str) -> bool:
    """Whether a gate's pattern is a built-in one (``shell(git push*)``, ``write``) rather than an MCP tool's."""
    return pattern.split("(", 1)[0] in BUILTIN_KINDS


# -- what a call touches -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BuiltinCall:
    """A call of one of the CLI's built-in tools, as the adapter read it from the hook payload."""

    cli_tool: str
    kind: str
    """One of :data:`BUILTIN_KINDS`, or the CLI's tool name when the adapter cannot classify it."""
    command: str | None = None
    paths: tuple[str, ...] = ()
    urls: tuple[str, ...] = ()
    query: str | None = None
    agent: str | None = None

    @property
    def argument(self) -> str:
        """The call's argument as people read it (the audit's and the ask's)."""
        if self.command is not None:
            return self.command
        if self.paths:
            return ", ".join(self.paths)
        return ", ".join(self.urls) or self.query or self.agent or ""


@dataclass(frozen=True, slots=True)
class Protected:
    """A path no role can open: ``writes_only`` for targets that are harmful to write, not to read."""

    path: str
    what: str
    writes_only: bool = False
    tree: bool = True
    """The path and everything under it (a folder); False for one file."""
    anywhere: bool = False
    """``path`` is a relative tail (``.git/hooks``) protected wherever it appears."""

    def covers(self, path: str) -> bool:
        if self.anywhere:
            tail = "/" + self.path.strip("/")
            return path.endswith(tail) or (self.tree and tail + "/" in path)
        return path == self.path or (self.tree and path.startswith(self.path.rstrip("/") + "/"))


Resolver = Callable[[str], tuple[str, ...]]
"""A path as written (relative to the call's cwd, ``~``, ``..``) → its normalised absolute forms: the
lexical one and, where symlinks lead elsewhere, the real one."""


def lexical_resolver(cwd: str, home: str) -> Resolver:
    """``~`` and ``..`` resolved without touching the disk (the gateway's resolver also follows symlinks)."""

    def resolve(path: str) -> tuple[str, ...]:
        if path == "~" or path.startswith("~/"):
            path = home + path[1:]
        return (posixpath.normpath(posixpath.join(cwd, path)),)

    return resolve


@dataclass(frozen=True, slots=True)
class Access:
    """One thing a call touches, decided on its own: a command, a path read or written, a URL, ..."""

    kind: str
    subject: str
    """What rules match: a command's text, an absolute path, a URL; may contain HOLE."""
    shown: str
    """How a reason names it."""
    forms: tuple[str, ...] = ()
    """For a path: every normalised form (lexical, real); rules match each, the strictest wins."""
    host: str | None = None


_WRITES_ALL = frozenset({"rm", "rmdir", "touch", "mkdir", "unlink", "shred", "mv", "tee", "truncate"})
_WRITES_AFTER_FIRST = frozenset({"chmod", "chown", "chgrp"})
_WRITES_LAST = frozenset({"cp", "ln", "install", "rsync", "scp"})
_PATHISH = re.compile(r"^(?:~|\.{1,2}(?:/|$)|/)|/")


@dataclass(frozen=True, slots=True)
class _Output:
    """How a command that otherwise only reads is told to write a file."""

    options: tuple[str, ...] = ()
    """Options whose value is the file written: ``-o FILE``, ``-oFILE``, ``--output=FILE``, ``-fprint FILE``."""
    short_values: str = ""
    """Its one-letter options that take a value, so that ``-ro FILE`` and ``-t, -o FILE`` are read as getopt does."""
    operand: int | None = None
    """Which operand (0-based) is the file written: ``uniq IN OUT``."""


_OUTPUTS: dict[str, _Output] = {
    "find": _Output(options=("-fprint", "-fprint0", "-fprintf", "-fls")),
    "git": _Output(options=("--output",)),
    "sort": _Output(options=("-o", "--output"), short_values="kotST"),
    "tree": _Output(options=("-o",), short_values="LPIoHT"),
    "uniq": _Output(short_values="fsw", operand=1),
    "xxd": _Output(short_values="cglosn", operand=1),
}
"""Read-only commands (:data:`READ_ONLY_COMMANDS`) that can still write a file, and how."""


def _shell_path_accesses(command: SimpleCommand) -> list[tuple[str, bool]]:
    """(path, written) for the paths a command names: all arguments of known writers, path-like ones of others."""
    words = command.words
    name = words[0].rsplit("/", 1)[-1]
    operands = [word for word in words[1:] if not word.startswith("-") or word == "-"]
    found: list[tuple[str, bool]] = []
    if name in _WRITES_ALL:
        found = [(word, True) for word in operands]
    elif name in _WRITES_AFTER_FIRST:
        found = [(word, True) for word in operands[1:]]
    elif name in _WRITES_LAST and operands:
        found = [(word, False) for word in operands[:-1]] + [(operands[-1], True)]
    elif name in ("sed", "perl") and any(word == "-i" or word.startswith(("-i", "--in-place")) for word in words[1:]):
        found = [(word, True) for word in operands[1:]]
    elif name == "dd":
        found = [(word[3:], word.startswith("of=")) for word in words[1:] if word.startswith(("if=", "of="))]
    elif name == "git" and words[1:2] == ("config",) and not _git_config_reads(words[2:]):
        found = [(".git/config", True)]
    else:
        written = _output_files(name, words[1:])
        found = [(word, True) for word in written]
        found += [
            (word, False) for word in operands if _PATHISH.search(word) and "://" not in word and word not in written
        ]
    return found


def _output_files(name: str, arguments: Sequence[str]) -> list[str]:
    """The files an otherwise read-only command writes (:data:`_OUTPUTS`)."""
    output = _OUTPUTS.get(name)
    if output is None:
        return []
    written: list[str] = []
    operands: list[str] = []
    index = 0
    while index < len(arguments):
        word = arguments[index]
        following = arguments[index + 1] if index + 1 < len(arguments) else None
        long_option = word.split("=", 1)[0]
        if word.startswith("--") or long_option in output.options:  # --output=F, --output F, find's -fprint F
            if long_option in output.options:
                value = word.split("=", 1)[1] if "=" in word else following
                written += [value] if value is not None else []
                index += "=" not in word
        elif word.startswith("-") and word != "-":  # a group of one-letter options: -r, -ro F, -oF, -t,
            for position, letter in enumerate(word[1:], start=1):
                if letter in output.short_values:
                    value = word[position + 1 :] or following
                    if f"-{letter}" in output.options and value is not None:
                        written.append(value)
                    index += not word[position + 1 :]
                    break
        else:
            operands.append(word)
        index += 1
    if output.operand is not None:
        written += operands[output.operand : output.operand + 1]
    return written


def _git_config_reads(options: Sequence[str]) -> bool:
    reading = ("--get", "--get-all", "--get-regexp", "--list", "-l", "--show-origin", "--show-scope", "--get-urlmatch")
    return (
        any(option.startswith(reading) for option in options)
        or len([word for word in options if not word.startswith("-")]) == 1
    )


def accesses(call: BuiltinCall, resolve: Resolver, line: CommandLine | None = None) -> tuple[list[Access], str | None]:
    """Everything ``call`` touches, and the reason part of it cannot be read (an unparsable shell line)."""
    found: list[Access] = []
    problem = None

    def path(path_text: str, write: bool, shown: str | None = None) -> None:
        kind = "write" if write else "read"
        forms: tuple[str, ...]
        if HOLE in path_text:
            known = path_text.split(HOLE, 1)[0]
            forms = (resolve(known)[0] + HOLE,) if known and not known.endswith("/") and known != "~" else (HOLE,)
            if known.endswith("/") or known in ("~", "~/"):
                forms = (resolve(known)[0].rstrip("/") + "/" + HOLE,) if known else (HOLE,)
        else:
            forms = resolve(path_text)
        found.append(Access(kind, forms[0], shown or path_text.replace(HOLE, "…"), forms=forms))

    if call.kind == "shell":
        line = line or split_command_line(call.command or "")
        problem = line.problem
        for command in line.commands:
            shown = "a command known only when the line runs" if command.text == HOLE else f"`{command}`"
            found.append(Access("shell", command.text, shown))
            if command.words and HOLE not in command.words[0]:
                for path_text, write in _shell_path_accesses(command):
                    path(path_text, write)
        for redirect in line.redirects:
            path(
                redirect.path,
                redirect.write,
                f"{redirect.path.replace(HOLE, '…')} (redirected {'to' if redirect.write else 'from'})",
            )
        if problem is not None:
            found.append(Access("shell", HOLE, "a part the shell parser cannot read"))
        if not found:  # nothing but blanks or comments: judged as written
            found.append(Access("shell", (call.command or "").strip(), f"`{(call.command or '').strip()}`"))
    elif call.kind in PATH_KINDS:
        for path_text in call.paths or (HOLE,):
            path(path_text, call.kind == "write")
    elif call.kind == "web":
        for url in call.urls:
            host = re.sub(r"^[a-z][a-z0-9+.-]*://", "", url, flags=re.I).split("/", 1)[0].rsplit("@", 1)[-1]
            found.append(Access("web", url, url, host=host.split(":", 1)[0].lower()))
        if call.query is not None:
            found.append(Access("web", "search", f"the web search {call.query!r}"))
        if not found:
            found.append(Access("web", HOLE, "a fetch whose URL is not known", host=HOLE))
    elif call.kind == "agent":
        found.append(
            Access("agent", call.agent or HOLE, f"the sub-agent {call.agent}" if call.agent else "a sub-agent")
        )
    else:
        found.append(Access(call.kind, call.cli_tool, call.cli_tool))
    return found, problem


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
        subjects = _subjects(access)
        for rule in rules:
            if rule.pattern.argument is None:
                hits.append((rule.pattern, rule.rank))
                sure = True
                continue
            if access.kind == "web" and rule.pattern.argument.startswith("domain:"):
                if access.host is None:
                    continue
                subject_list = [access.host]
            else:
                subject_list = subjects
            hit, surely = _rule_hits(rule, subject_list)
            if hit:
                hits.append((rule.pattern, rule.rank))
                sure = sure or surely
        return hits, sure


def _subjects(access: Access) -> list[str]:
    if access.kind in PATH_KINDS:
        return list(access.forms or (access.subject,))
    if access.kind == "shell" and access.subject and HOLE not in access.subject.split(" ", 1)[0]:
        words = access.subject.split(" ")
        base = words[0].rsplit("/", 1)[-1]
        if base != words[0]:
            return [access.subject, " ".join([base, *words[1:]])]
    return [access.subject]


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
        globs = list(READ_ONLY_COMMANDS) if argument == "@read-only" else [argument]
        return [_glob_rule(pattern, rank, glob, path=False) for glob in globs]
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
