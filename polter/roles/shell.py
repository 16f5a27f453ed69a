"""A shell command line split into the simple commands it runs, with a real parser (tree-sitter-bash).

A role's shell rules match *simple commands* (``git push origin main``), not whole lines, so that a
command hidden in a chain is still seen: ``ls && git push``, ``ls | xargs rm``, ``echo $(rm -rf x)``,
backticks, subshells, ``bash -c '...'``, ``env X=1 cmd``, ``sudo cmd``, ``find -exec``, functions, loops
and conditionals are all walked. What the line writes through redirections (``> file``) is reported
too, so write rules and protected targets apply to it.

A part whose value is known only when the line runs (``$VAR``, ``$(...)``, a word fed by ``xargs``) is
a :data:`HOLE` in the command's text: the engine treats a command with holes by the strictest rule that
could match it. A line the parser cannot read, or one that nests too deep, is reported with a
``problem``: the engine then applies the strictest shell rule there is.

This is a seatbelt, not a sandbox: a program can still do anything its arguments let it (``python -c``,
``make``). Pure: no I/O (paths are resolved by the caller).
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass, field
from enum import Enum
from functools import cache
from typing import Any

__all__ = ["HOLE", "CommandLine", "Redirect", "SimpleCommand", "split_command_line"]

HOLE = "\x00"
"""Stands for text known only when the line runs (a variable, a command's output, xargs' input)."""

MAX_DEPTH = 8
"""How deep ``bash -c``/``eval``/``sudo`` nesting is followed before the line counts as unreadable."""

SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "mksh", "ash", "busybox"})
"""Programs that run a script given with ``-c`` (or read from stdin)."""
TRANSPARENT = frozenset({"env", "command", "builtin", "exec", "nohup", "time", "nice", "timeout", "stdbuf", "setsid"})
"""Wrappers that run the rest of their arguments as a command: decided by that command alone."""
ELEVATING = frozenset({"sudo", "doas"})
"""Wrappers that run a command as someone else: decided by both the wrapper and the command."""
_OPTIONS_WITH_VALUE = {
    "env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
    "exec": {"-a"},
    "nice": {"-n", "--adjustment"},
    "timeout": {"-s", "--signal", "-k", "--kill-after"},
    "stdbuf": {"-i", "-o", "-e", "--input", "--output", "--error"},
    "sudo": {
        "-u",
        "--user",
        "-g",
        "--group",
        "-C",
        "--close-from",
        "-D",
        "--chdir",
        "-h",
        "--host",
        "-p",
        "--prompt",
        "-r",
        "--role",
        "-t",
        "--type",
        "-T",
        "--command-timeout",
        "-U",
        "--other-user",
    },
    "doas": {"-u", "-C"},
    "xargs": {
        "-a",
        "--arg-file",
        "-d",
        "--delimiter",
        "-E",
        "-e",
        "-I",
        "-i",
        "-L",
        "-l",
        "-n",
        "--max-args",
        "-P",
        "--max-procs",
        "-s",
        "--max-chars",
    },
}
_GIT_OPTIONS_WITH_VALUE = {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"}
_WRITE_REDIRECTS = frozenset({">", ">>", "&>", "&>>", ">|", "<>"})
_READ_REDIRECTS = frozenset({"<"})
_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "-"})
_ENVIRONMENT_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
"""An environment variable's name by convention (programs read these; a lower-case name stays in the shell)."""
_HARMLESS_VARIABLES = re.compile(
    r"LANG|LANGUAGE|LC_[A-Z]+|TZ|TERM|COLUMNS|LINES|NO_COLOR|FORCE_COLOR|CLICOLOR|CLICOLOR_FORCE|GREP_COLORS?|LS_COLORS"
)
"""Environment variables that change how a program prints, never what it runs or reads as its configuration."""
_HARMLESS_GIT_CONFIG = re.compile(
    r"(color|log|advice|column|pretty|status|blame|grep|i18n)\..*"
    r"|core\.(quotepath|abbrev)|format\.pretty|init\.defaultbranch|user\.(name|email)"
    r"|diff\.(noprefix|renames|algorithm|colormoved|relative|mnemonicprefix|indentheuristic)",
    re.IGNORECASE,
)
"""``git -c`` settings that change how git prints; others (``core.fsmonitor``, ``diff.external``, ``core.pager``,
``alias.*``...) make git run a program, so ``git -c core.fsmonitor=x status`` is judged as more than a status."""


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One program run with its arguments, quotes removed; :data:`HOLE` where a part is dynamic."""

    words: tuple[str, ...]

    @property
    def text(self) -> str:
        """The command as rules match it: its words joined by single spaces."""
        return " ".join(self.words)

    @property
    def dynamic(self) -> bool:
        return any(HOLE in word for word in self.words)

    def __str__(self) -> str:
        return self.text.replace(HOLE, "…")


@dataclass(frozen=True, slots=True)
class Redirect:
    """A file the line opens through a redirection: ``> path`` writes, ``< path`` reads."""

    path: str
    write: bool


@dataclass(frozen=True, slots=True)
class CommandLine:
    """What a command line runs and which files its redirections open."""

    source: str
    commands: tuple[SimpleCommand, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    problem: str | None = None
    """Why (part of) the line could not be understood; None when it was read completely."""


_ASCII_STAND_IN = bytes(byte if byte < 0x80 else ord("Z") for byte in range(256))
"""Every byte of a non-ASCII character becomes ``Z`` before parsing. tree-sitter-bash 0.25.1's scanner calls C's
``isalpha`` on the lookahead character, which reads outside its table for a code point above 255: a ``{`` followed
by some 4-byte character segfaults the process (tree-sitter/tree-sitter-bash#337), others read garbage. Bash never
treats a non-ASCII character as syntax, so a letter parses the same; the byte offsets do not move, and words are
read from the line's own bytes."""


@cache
def _parser() -> Any:
    """tree-sitter's parser for bash, built once (the import costs a few ms)."""
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def split_command_line(line: str) -> CommandLine:
    """The simple commands ``line`` runs and the files it redirects to, in the order written."""
    walker = _Walker()
    walker.script(line, 0)
    return CommandLine(line, tuple(walker.commands), tuple(walker.redirects), walker.problem)


@dataclass
class _Walker:
    commands: list[SimpleCommand] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    problem: str | None = None
    sources: list[bytes] = field(default_factory=list)
    """The bytes of the scripts being walked, innermost last (a node's text is read from them)."""

    def fail(self, problem: str) -> None:
        if self.problem is None:
            self.problem = problem

    def script(self, text: str, depth: int) -> None:
        if depth > MAX_DEPTH:
            self.fail(f"shell scripts nested more than {MAX_DEPTH} deep")
            return
        if "\x00" in text:
            self.fail("the line contains a NUL character")
            return
        source = text.encode("utf-8", "surrogatepass")
        tree = _parser().parse(source.translate(_ASCII_STAND_IN))
        root = tree.root_node
        if root.has_error:
            self.fail("the shell parser cannot read the line")
        self.sources.append(source)
        try:
            self.node(root, depth)
        finally:
            self.sources.pop()

    def text(self, node: Any) -> str:
        """The node's text in the line as written (the parser saw ASCII stand-ins)."""
        return self.sources[-1][node.start_byte : node.end_byte].decode("utf-8", "replace")

    # -- statements ------------------------------------------------------------------------------

    def node(self, node: Any, depth: int) -> None:
        kind = node.type
        if kind == "ERROR" or node.is_missing:
            self.fail("the shell parser cannot read the line")
        if kind == "command":
            self.command(node, depth)
        elif kind == "variable_assignment":
            self.assignment(node, depth)
        elif kind == "file_redirect":
            self.file_redirect(node, depth)
        elif kind in ("heredoc_redirect", "herestring_redirect"):
            for child in node.children:  # an unquoted heredoc may hold $(...)
                self.node(child, depth)
        else:
            for child in node.children:
                self.node(child, depth)

    def file_redirect(self, node: Any, depth: int) -> None:
        operator = next(
            (child.type for child in node.children if child.type in _WRITE_REDIRECTS | _READ_REDIRECTS), None
        )
        destination = node.child_by_field_name("destination")
        if destination is None or operator is None:
            return  # a descriptor duplication (2>&1)
        path = self.word(destination, depth)
        if path not in _NOT_FILES and not path.startswith("/dev/fd/"):
            self.redirects.append(Redirect(path, write=operator in _WRITE_REDIRECTS))

    def command(self, node: Any, depth: int) -> None:
        words: list[str] = []
        stdin_scripts: list[str] = []
        for child in node.children:
            if child.type == "command_name":
                words.append(self.word(child.children[0] if child.children else child, depth))
            elif child.type == "variable_assignment":
                self.assignment(child, depth)
            elif child.type in ("file_redirect",):
                self.file_redirect(child, depth)
            elif child.type in ("heredoc_redirect", "herestring_redirect"):
                self.node(child, depth)
                stdin_scripts.append(self.stdin_text(child, depth))
            elif words:
                words.append(self.word(child, depth))
        if not words:
            return
        parent = node.parent
        if parent is not None and parent.type == "redirected_statement":
            for redirect in parent.children_by_field_name("redirect"):
                if redirect.type in ("heredoc_redirect", "herestring_redirect"):
                    stdin_scripts.append(self.stdin_text(redirect, depth))
        self.run(tuple(words), depth, stdin_scripts[-1] if stdin_scripts else None)

    def assignment(self, node: Any, depth: int) -> None:
        """``X=$(rm)`` runs rm; and setting an environment variable programs read to run or configure things
        (``GIT_EXTERNAL_DIFF=x git diff``, ``PATH=. ls``) is judged as a command of its own, ``NAME=value``."""
        name = node.child_by_field_name("name")
        value = node.child_by_field_name("value")
        if name is not None:  # the value as written: its substitutions are walked below, once
            self.environment(self.text(name), self.text(value) if value is not None else "")
        for child in node.children:
            self.node(child, depth)

    def environment(self, name: str, value: str) -> None:
        if _ENVIRONMENT_NAME.fullmatch(name) and not _HARMLESS_VARIABLES.fullmatch(name):
            self.commands.append(SimpleCommand((f"{name}={value}",)))

    def stdin_text(self, redirect: Any, depth: int) -> str:
        if redirect.type == "herestring_redirect":
            parts = [child for child in redirect.children if child.type != "<<<"]
            return self.word(parts[0], depth) if parts else HOLE
        body = next((child for child in redirect.children if child.type == "heredoc_body"), None)
        if body is None:
            return ""
        if any(child.type != "heredoc_content" for child in body.children):
            return HOLE  # expansions inside: the script is known only when it runs
        return self.text(body)

    # -- what a command runs -------------------------------------------------------------------------

    def run(self, words: tuple[str, ...], depth: int, stdin: str | None = None) -> None:
        """Record ``words`` as a command, unwrapping wrappers that run another command."""
        if depth > MAX_DEPTH:
            self.fail(f"commands nested more than {MAX_DEPTH} deep")
            self.commands.append(SimpleCommand((HOLE,)))
            return
        name = words[0].rsplit("/", 1)[-1] if HOLE not in words[0] else words[0]
        rest = words[1:]
        if name in TRANSPARENT:
            inner = _after_options(name, rest)
            if name == "command" and rest[:1] and rest[0] in ("-v", "-V"):
                inner = None  # a lookup, not a run
            if name == "env":
                assigned = inner or ()
                inner = _after_assignments(assigned)
                for word in assigned[: len(assigned) - len(inner or ())]:
                    self.environment(*word.split("=", 1))
            if name == "timeout" and inner:
                inner = inner[1:]  # the duration
            if inner:
                self.run(inner, depth + 1, stdin)
                return
        elif name in ELEVATING:
            self.commands.append(SimpleCommand(words))
            inner = _after_options(name, rest)
            if inner:
                self.run(inner, depth + 1, stdin)
            return
        elif name == "xargs":
            self.commands.append(SimpleCommand(words))
            inner = _after_options(name, rest)
            self.run((*(inner or ("echo",)), HOLE), depth + 1)
            return
        elif name in ("find", "fd"):
            self.commands.append(SimpleCommand(words))
            for inner in _find_exec(rest):
                self.run(inner, depth + 1)
            return
        elif name == "eval":
            self.inline_script(words, " ".join(rest), depth)
            return
        elif name in SHELLS:
            script = _shell_script(rest)
            if script is _Script.FILE:
                self.commands.append(SimpleCommand(words))  # the script's content is not the line's to judge
            else:
                self.inline_script(words, stdin if script is _Script.READS_STDIN else script, depth)
            return
        elif name == "git":
            settings, subcommand = _git_global_options(rest)
            for setting in settings:
                if not _HARMLESS_GIT_CONFIG.fullmatch(setting.split("=", 1)[0]):
                    self.commands.append(SimpleCommand(("git", "-c", setting)))
            words = ("git", *subcommand)
        self.commands.append(SimpleCommand(words))

    def inline_script(self, words: tuple[str, ...], script: str | None, depth: int) -> None:
        """A shell (or eval) running ``script``: judged by the script's own commands when its text is known
        here, else by the shell command and a command that could be anything."""
        if script is not None and HOLE not in script:
            self.script(script, depth + 1)
            return
        self.commands.append(SimpleCommand(words))
        self.commands.append(SimpleCommand((HOLE,)))

    # -- words -----------------------------------------------------------------------------------------

    def word(self, node: Any, depth: int) -> str:
        """A word's value with quotes removed; dynamic parts become :data:`HOLE` (their commands are walked)."""
        kind = node.type
        if kind == "word":
            return _unescape(self.text(node))
        if kind == "raw_string":
            return self.text(node)[1:-1]
        if kind == "ansi_c_string":
            return _ansi_c(self.text(node)[2:-1])
        if kind in ("number", "string_content", "heredoc_content"):
            return self.text(node)
        if kind in ("string", "concatenation", "translated_string"):
            parts = [
                self.word(child, depth)
                for child in node.children
                if child.type not in ('"', "$")  # quotes; the $ of a $"..." string
            ]
            return "".join(parts)
        if kind in ("command_substitution", "process_substitution"):
            for child in node.children:
                self.node(child, depth)
            return HOLE
        # $VAR, ${VAR...}, $((...)), arrays: known only when the line runs (their $(...) still run)
        for child in node.children:
            self.node(child, depth)
        return HOLE if kind != "brace_expression" else self.text(node)


class _Script(Enum):
    """What a shell runs when it is not given a ``-c`` script."""

    READS_STDIN = "stdin"
    FILE = "a script file"


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text, flags=re.DOTALL)


def _ansi_c(body: str) -> str:
    try:
        return codecs.decode(body.encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return HOLE


def _after_options(name: str, words: tuple[str, ...]) -> tuple[str, ...] | None:
    """The command a wrapper runs: its arguments after the wrapper's own options."""
    with_value = _OPTIONS_WITH_VALUE.get(name, set())
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--":
            index += 1
            break
        if not word.startswith("-") or word == "-":
            break
        if word in with_value:
            index += 2
            continue
        index += 1
    inner = words[index:]
    return inner or None


def _after_assignments(words: tuple[str, ...]) -> tuple[str, ...] | None:
    index = 0
    while index < len(words) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[index], flags=re.DOTALL):
        index += 1
    return words[index:] or None


def _find_exec(words: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The commands of ``find ... -exec CMD ... ;`` (and -execdir, -ok, -okdir); ``{}`` is a file found."""
    found = []
    index = 0
    while index < len(words):
        if words[index] in ("-exec", "-execdir", "-ok", "-okdir", "-x", "--exec", "-X", "--exec-batch"):
            end = index + 1
            while end < len(words) and words[end] not in (";", "+", "\\;"):
                end += 1
            inner = tuple(HOLE if word == "{}" else word for word in words[index + 1 : end])
            if inner:
                found.append(inner)
            index = end
        elif words[index] == "-delete":
            found.append(("rm", HOLE))
        index += 1
    return found


def _shell_script(words: tuple[str, ...]) -> str | _Script:
    """What a shell runs: the ``-c`` script, a script file (its content is not the line's), or stdin."""
    index = 0
    while index < len(words):
        word = words[index]
        if word == "--":
            index += 1
            break
        if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
            return words[index + 1] if index + 1 < len(words) else HOLE
        if word in ("-o", "+o", "-O", "+O", "--rcfile", "--init-file"):
            index += 2
            continue
        if not word.startswith(("-", "+")):
            break
        index += 1
    if index < len(words) and words[index] != "-" and words[index] != "-s":
        return _Script.FILE
    return _Script.READS_STDIN


def _git_global_options(words: tuple[str, ...]) -> tuple[list[str], tuple[str, ...]]:
    """``git -C dir -c k=v push`` → ``(["k=v"], ("push",))``: the ``key=value`` settings of git's global ``-c``
    and ``--config-env`` options, and the subcommand with its arguments (rules name git's subcommands,
    whatever options come first)."""
    settings, index = [], 0
    while index < len(words) and words[index].startswith("-"):
        option, _, attached = words[index].partition("=")
        if option in ("-c", "--config-env"):
            settings.append(attached or (words[index + 1] if index + 1 < len(words) else ""))
        index += 2 if option in _GIT_OPTIONS_WITH_VALUE and not attached else 1
    return settings, words[index:]
