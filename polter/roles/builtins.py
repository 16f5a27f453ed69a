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
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from polter.roles.command_effects import command_paths, network_targets, read_only_caveat
from polter.roles.shell import HOLE, CommandLine, split_command_line
from polter.roles.spellings import strict_spellings
from polter.roles.urls import parse_url

__all__ = [
    "BUILTIN_KINDS",
    "DEFAULT_RESEARCH_BUILTINS",
    "READ_ONLY_COMMANDS",
    "Access",
    "BuiltinCall",
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
        if self.anywhere and "**" in self.path:  # .git/modules/**/hooks: a submodule's, however deep
            inner = "/(?:[^/]+/)*?".join(re.escape(part.strip("/")) for part in self.path.split("**"))
            return re.search(f"/{inner}{'(?:/|$)' if self.tree else '$'}", path) is not None
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
        elif path.startswith("~"):
            path = posixpath.expanduser(path)  # ~user
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
    spellings: tuple[str, ...] = ()
    """For a command: its other spellings, which ask and deny rules match too (never an allow)."""
    caveat: str | None = None
    """For a command: why it is not read-only as spelled, though the read-only list names it."""
    unsure: str | None = None
    """Why this part cannot be read for sure: it is never allowed, at most asked about."""
    tree: bool = False
    """For a path: the folder and everything under it (``grep -r``, ``tar -x``)."""


_PROCESS_PATHS = re.compile(r"^/(?:proc/|dev/fd/(?![0-9]+$)|dev/std(?:in|out|err)/)")
"""Paths through a process's own view (``/proc/self/cwd``, ``/dev/fd/../cwd``): where they lead depends on the
process that opens them, not on the gateway, so they are known only when the line runs."""
_NETWORK_DEVICES = re.compile(r"^/dev/(tcp|udp)/([^/]+)/([^/]+)$")
"""bash's own sockets: ``cat < /dev/tcp/HOST/PORT``."""


def accesses(call: BuiltinCall, resolve: Resolver, line: CommandLine | None = None) -> tuple[list[Access], str | None]:
    """Everything ``call`` touches, and the reason part of it cannot be read (an unparsable shell line)."""
    found: list[Access] = []
    problem = None

    def path(
        path_text: str,
        write: bool,
        shown: str | None = None,
        cwd: str | None = None,
        tree: bool = False,
        unsure: str | None = None,
    ) -> None:
        kind = "write" if write else "read"
        shown = shown or path_text.replace(HOLE, "…")
        device = _NETWORK_DEVICES.match(path_text)
        if device is not None:
            web(f"{device[1]}://{device[2]}:{device[3]}")
            return
        if cwd is not None and not path_text.startswith(("/", "~")):
            path_text = posixpath.join(cwd, path_text)
        if _PROCESS_PATHS.match(path_text):
            path_text = HOLE  # where it leads is the process's, not the gateway's
        forms: tuple[str, ...]
        if HOLE in path_text:
            known = path_text.split(HOLE, 1)[0]
            tail = path_text[len(known) :]
            head = resolve(known)[0] if known and known not in ("~", "~/") else ""
            if known.endswith("/") or known in ("~", "~/"):
                head = (resolve(known)[0].rstrip("/") + "/") if known else ""
            forms = (head + tail,)
        else:
            forms = resolve(path_text)
        found.append(Access(kind, forms[0], shown, forms=forms, tree=tree, unsure=unsure))

    def web(url: str, shown: str | None = None) -> None:
        parsed = parse_url(url) if HOLE not in url else None
        if parsed is None:
            unsure = None if HOLE in url else "its host cannot be read for sure"
            found.append(Access("web", HOLE, shown or f"fetching {url.replace(HOLE, '…')}", host=HOLE, unsure=unsure))
        else:
            found.append(Access("web", parsed[0], shown or url, host=parsed[1]))

    if call.kind == "shell":
        line = line or split_command_line(call.command or "")
        problem = line.problem
        for command in line.commands:
            if command.text == HOLE:
                shown = command.why or "a command known only when the line runs"
                found.append(Access("shell", HOLE, shown, unsure=command.why or None))
                continue
            found.append(
                Access(
                    "shell",
                    command.text,
                    f"`{command}`",
                    spellings=tuple(strict_spellings(command.words)),
                    caveat=read_only_caveat(command.words),
                )
            )
            if command.words and HOLE not in command.words[0]:
                for use in command_paths(command.words):
                    path(use.path, use.write, cwd=command.cwd, tree=use.tree, unsure=use.unsure)
                for url in network_targets(command.words):
                    web(url, f"`{command}` reaching {url.replace(HOLE, 'a remote')}")
        for redirect in line.redirects:
            path(
                redirect.path,
                redirect.write,
                f"{redirect.path.replace(HOLE, '…')} (redirected {'to' if redirect.write else 'from'})",
                cwd=redirect.cwd,
            )
        if problem is not None:
            found.append(Access("shell", HOLE, f"a part the shell reading cannot follow ({problem})", unsure=problem))
        if not found:  # nothing but blanks or comments: judged as written
            found.append(Access("shell", (call.command or "").strip(), f"`{(call.command or '').strip()}`"))
    elif call.kind in PATH_KINDS:
        for path_text in call.paths or (HOLE,):
            path(path_text, call.kind == "write")
    elif call.kind == "web":
        for url in call.urls:
            web(url)
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
