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
from functools import cache
from typing import Any

from polter.roles.executing import Runs, programs_run
from polter.roles.wrappers import (
    ELEVATING,
    HOLE,
    SHELLS,
    TRANSPARENT,
    ShellScript,
    after_assignments,
    after_options,
    git_global_options,
    harmless_git_setting,
    join_dir,
    program_name,
    shell_script,
)

__all__ = ["HOLE", "CommandLine", "Redirect", "SimpleCommand", "split_command_line"]


MAX_DEPTH = 8
"""How deep ``bash -c``/``eval``/``sudo`` nesting is followed before the line counts as unreadable."""
MAX_LINE_CHARS = 16 * 1024
"""A longer line is not parsed: it is asked about. Reading a line costs time in proportion to its length (a
100 KB line took 20-45 s), agents' real command lines are far shorter, and a decision must come back fast."""
MAX_COMMANDS = 512
"""How many simple commands a line may run before the rest counts as unreadable (bounds the work per line)."""
MAX_NESTING = 96
"""How deep the parse tree is followed (``$($($(...)))``, long ``&&`` chains) before the rest counts as
unreadable: each level costs Python stack frames."""
_WRITE_REDIRECTS = frozenset({">", ">>", "&>", "&>>", ">|", "<>"})
_READ_REDIRECTS = frozenset({"<"})
_DUPLICATIONS = frozenset({">&", "<&", ">&-", "<&-"})
"""``2>&1`` duplicates a descriptor, but ``>& file`` (a word, not a number) writes the file."""
_ALL_REDIRECTS = _WRITE_REDIRECTS | _READ_REDIRECTS | _DUPLICATIONS
_NOT_FILES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "-"})
"""Streams, not files (exactly these: ``/dev/fd/../cwd/x`` is a file in the working directory)."""
_ENVIRONMENT_NAME = re.compile(r"[A-Z_][A-Z0-9_]*")
"""An environment variable's name by convention (programs read these; a lower-case name stays in the shell)."""
_HARMLESS_VARIABLES = re.compile(
    r"LANG|LANGUAGE|LC_[A-Z]+|TZ|TERM|COLUMNS|LINES|NO_COLOR|FORCE_COLOR|CLICOLOR|CLICOLOR_FORCE|GREP_COLORS?|LS_COLORS"
)
"""Environment variables that change how a program prints, never what it runs or reads as its configuration."""


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One program run with its arguments, quotes removed; :data:`HOLE` where a part is dynamic."""

    words: tuple[str, ...]
    cwd: str | None = None
    """The directory it runs in as the line changed it (``cd x && ...``, ``git -C x``); None when unchanged,
    :data:`HOLE` (or a path with one) when it is known only when the line runs."""
    why: str = ""
    """For a command that is only :data:`HOLE`: what the line does that runs it (``rg --pre``, arithmetic)."""

    @property
    def text(self) -> str:
        """The command as rules match it: its words joined by single spaces."""
        return " ".join(self.words)

    @property
    def dynamic(self) -> bool:
        return any(HOLE in word for word in self.words)

    def __str__(self) -> str:
        return self.why or self.text.replace(HOLE, "…")


@dataclass(frozen=True, slots=True)
class Redirect:
    """A file the line opens through a redirection: ``> path`` writes, ``< path`` reads."""

    path: str
    write: bool
    cwd: str | None = None
    """The directory it is opened from, as the line changed it (see :attr:`SimpleCommand.cwd`)."""


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
    # lazy: the shell parser loads with the first shell command a role decides
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def split_command_line(line: str) -> CommandLine:
    """The simple commands ``line`` runs and the files it redirects to, in the order written."""
    if len(line) > MAX_LINE_CHARS:
        problem = f"the line is {len(line)} characters long, over the {MAX_LINE_CHARS} the shell reading parses"
        return CommandLine(line, problem=problem)
    walker = _Walker()
    walker.script(line, 0)
    return CommandLine(line, tuple(walker.commands), tuple(walker.redirects), walker.problem)


_SUBSHELLS = frozenset({"subshell", "pipeline", "command_substitution", "process_substitution"})
"""Nodes whose ``cd`` does not outlive them (a pipeline's parts each run in a subshell)."""
_BRANCHES = frozenset(
    {
        "if_statement",
        "while_statement",
        "for_statement",
        "c_style_for_statement",
        "case_statement",
        "function_definition",
    }
)
"""Nodes whose body may run or not: a ``cd`` inside leaves the directory after them uncertain."""
_ARITHMETIC = frozenset({"arithmetic_expansion", "compound_statement", "c_style_for_statement", "subscript"})
_ARITHMETIC_TESTS = frozenset({"-eq", "-ne", "-lt", "-le", "-gt", "-ge"})
_NUMERIC_SPECIALS = frozenset(
    {"RANDOM", "SECONDS", "LINENO", "BASHPID", "PPID", "UID", "EUID", "EPOCHSECONDS", "OPTIND", "#", "?", "$", "!"}
)
"""Variables bash itself keeps numeric: safe to use in arithmetic."""
_NAME_TAKERS = frozenset(
    {
        "printf",
        "read",
        "unset",
        "mapfile",
        "readarray",
        "getopts",
        "wait",
        "test",
        "[",
        "declare",
        "typeset",
        "local",
        "export",
        "readonly",
        "let",
    }
)
"""Builtins that take a variable's name: a name like ``a[$(cmd)]`` runs ``cmd`` when its subscript is evaluated."""
_NAME_AFTER_OPTION = frozenset({"printf", "test", "[", "wait"})
"""Of those, the ones whose name follows an option (``printf -v NAME``, ``test -v NAME``, ``wait -p NAME``)."""
_CHDIR_OPTIONS = {
    "env": ("-C", "--chdir"),
    "sudo": ("-D", "--chdir"),
    "make": ("-C", "--directory"),
    "tar": ("-C", "--directory"),
}
"""Options that run a command (or the program itself) in another directory."""


@dataclass
class _Walker:
    commands: list[SimpleCommand] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    problem: str | None = None
    sources: list[bytes] = field(default_factory=list)
    """The bytes of the scripts being walked, innermost last (a node's text is read from them)."""
    cwd: str | None = None
    """The directory the next command runs in, as the line changed it so far."""
    level: int = 0
    numeric: set[str] = field(default_factory=set)
    """Variables the line set to numbers (safe in arithmetic); other values may hold ``a[$(cmd)]``."""

    def fail(self, problem: str) -> None:
        if self.problem is None:
            self.problem = problem

    def record(self, command: SimpleCommand) -> None:
        if len(self.commands) >= MAX_COMMANDS:
            self.fail(f"the line runs more than {MAX_COMMANDS} commands")
            return
        self.commands.append(command)

    def runs_unknown(self, why: str) -> None:
        """Record a command known only when the line runs, and what the line does that runs it."""
        self.record(SimpleCommand((HOLE,), why=why))

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
        if self.level >= MAX_NESTING or len(self.commands) >= MAX_COMMANDS:
            self.fail(f"the line nests more than {MAX_NESTING} levels deep or runs more than {MAX_COMMANDS} commands")
            return
        self.level += 1
        try:
            self.statement(node, depth)
        finally:
            self.level -= 1

    def statement(self, node: Any, depth: int) -> None:
        kind = node.type
        if kind == "ERROR" or node.is_missing:
            self.fail("the shell parser cannot read the line")
        if kind in _ARITHMETIC or kind == "test_command":
            self.arithmetic(node)
        if kind == "command":
            self.command(node, depth)
        elif kind == "variable_assignment":
            self.assignment(node, depth)
        elif kind == "declaration_command":
            self.declaration(node, depth)
        elif kind == "file_redirect":
            self.file_redirect(node, depth)
        elif kind == "list":
            self.command_list(node, depth)
        elif kind in _SUBSHELLS:
            before = self.cwd
            for child in node.children:
                self.node(child, depth)
                if kind == "pipeline":
                    self.cwd = before
            self.cwd = before
        elif kind in _BRANCHES or kind in ("elif_clause", "else_clause"):
            if kind == "for_statement":
                self.loop_variable(node)
            before = self.cwd
            for child in node.children:
                start = self.cwd
                self.node(child, depth)
                if child.type in ("elif_clause", "else_clause"):
                    self.cwd = _merge(start, self.cwd)
            self.cwd = _merge(before, self.cwd)
        else:
            for child in node.children:
                self.node(child, depth)

    def command_list(self, node: Any, depth: int) -> None:
        """``a && b`` runs b only where a succeeded (in a's directory); ``a || b`` where a failed."""
        before = self.cwd
        operator = next((child.type for child in node.children if child.type in ("&&", "||")), "&&")
        parts = [child for child in node.children if child.type not in ("&&", "||")]
        for position, child in enumerate(parts):
            if position and operator == "||":
                self.cwd = _merge(before, self.cwd)
            self.node(child, depth)
        if len(parts) > 1:
            self.cwd = _merge(self.cwd, before) if operator == "||" else self.cwd

    def file_redirect(self, node: Any, depth: int) -> None:
        operator = next((child.type for child in node.children if child.type in _ALL_REDIRECTS), None)
        destination = node.child_by_field_name("destination")
        if destination is None or operator is None:
            return
        path = self.word(destination, depth)
        if operator in _DUPLICATIONS and (path.isdigit() or path == "-" or operator == "<&"):
            return  # a descriptor duplication (2>&1); ``>& file`` is a write to file
        if path not in _NOT_FILES and not re.fullmatch(r"/dev/fd/[0-9]+", path):
            self.redirects.append(Redirect(path, write=operator in _WRITE_REDIRECTS | _DUPLICATIONS, cwd=self.cwd))

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
            name_text = self.text(name)
            value_text = self.text(value) if value is not None else ""
            self.environment(name_text, value_text)
            self.remember(name_text, value is None or value.type in ("number", "arithmetic_expansion"))
        for child in node.children:
            self.node(child, depth)

    def loop_variable(self, node: Any) -> None:
        """``for i in 1 2 3``: the variable holds numbers when every value is one."""
        variable = node.child_by_field_name("variable")
        values = node.children_by_field_name("value")
        if variable is not None:
            self.remember(self.text(variable), bool(values) and all(self.text(v).isdigit() for v in values))

    def remember(self, name: str, numeric: bool) -> None:
        self.numeric.add(name) if numeric else self.numeric.discard(name)

    def declaration(self, node: Any, depth: int) -> None:
        """``export``/``declare -x``/``local``/``readonly``: assignments however they are quoted
        (``export "GIT_EXTERNAL_DIFF=cmd"``), and a function exported or a name made a reference is judged as the
        declaration itself (it changes what later commands run)."""
        words = [self.text(node.children[0])]
        for child in node.children[1:]:
            if child.type == "variable_assignment":
                self.assignment(child, depth)
                words.append(self.text(child))
                continue
            word = self.word(child, depth)
            words.append(word)
            if word.startswith(("-", "+")):
                if set(word[1:]) & set("fnF"):
                    self.record(SimpleCommand(tuple(words) + (HOLE,), cwd=self.cwd))
            elif "=" in word:
                name, value = word.split("=", 1)
                self.environment(name, value)
                self.remember(name, value.isdigit())
            self.names_evaluated(word)

    def names_evaluated(self, word: str) -> None:
        """A variable's name with a subscript that runs code (``a[$(cmd)]``, or one known only when it runs)."""
        if "[" in word.split("=", 1)[0] and any(mark in word for mark in ("$", "`", HOLE)):
            self.runs_unknown(f"the name `{word.replace(HOLE, '…')}`, whose subscript bash evaluates as code")

    def arithmetic(self, node: Any) -> None:
        """Bash evaluates a variable's value as an expression in arithmetic (``$((x))``, ``((x))``, ``[[ x -eq y ]]``,
        subscripts): a value like ``a[$(cmd)]`` runs ``cmd``. Only variables the line set to numbers are safe."""
        if node.type == "test_command":
            operands = [
                part
                for binary in node.children
                if binary.type == "binary_expression"
                and any(self.text(op) in _ARITHMETIC_TESTS for op in binary.children if op.type == "test_operator")
                for part in binary.children
                if part.type != "test_operator"
            ]
        elif node.type == "c_style_for_statement":
            operands = [
                child for name in ("initializer", "condition", "update") for child in node.children_by_field_name(name)
            ]
        elif node.type == "compound_statement":
            operands = node.children if node.children and node.children[0].type == "((" else []
        elif node.type == "subscript":
            operands = node.children_by_field_name("index")
        else:
            operands = [node]
        for operand in operands:
            for name, assigned in self.arithmetic_names(operand):
                if assigned:
                    self.numeric.add(name)
                elif name not in self.numeric and name not in _NUMERIC_SPECIALS and not name.isdigit():
                    self.runs_unknown(f"`{self.text(node)}`, where bash evaluates the value of `{name}` as code")
                    return

    def arithmetic_names(self, node: Any) -> list[tuple[str, bool]]:
        """The variables an arithmetic expression reads (False) or sets (True), in order; bounded in size."""
        found: list[tuple[str, bool]] = []
        pending = [node]
        while pending and len(found) < 64:
            current = pending.pop()
            kind = current.type
            if kind in ("variable_name", "special_variable_name") or (
                kind == "word" and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", self.text(current))
            ):
                parent = current.parent
                assigned = parent is not None and parent.type == "variable_assignment" and current == parent.children[0]
                found.append((self.text(current), assigned))
            elif kind in ("command_substitution", "string", "raw_string", "expansion") or (
                kind == "word" and not self.text(current).isdigit()
            ):
                found.append((self.text(current), False))  # a value known only when it runs
            else:
                pending.extend(reversed(current.children))
        return found

    def environment(self, name: str, value: str) -> None:
        if HOLE in name:
            self.runs_unknown("an assignment to a variable whose name is known only when the line runs")
        elif _ENVIRONMENT_NAME.fullmatch(name) and not _HARMLESS_VARIABLES.fullmatch(name):
            self.record(SimpleCommand((f"{name}={value}",), cwd=self.cwd))

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
            self.record(SimpleCommand((HOLE,)))
            return
        words = (program_name(words[0]), *words[1:])
        name, rest = words[0], words[1:]
        if name in _NAME_TAKERS:
            after = ("-v", "-p") if name in _NAME_AFTER_OPTION else None
            for previous, word in zip(("", *rest), rest, strict=False):
                if after is None or previous in after:
                    self.names_evaluated(word)
        if name == "let":
            self.runs_unknown(f"`{' '.join(words)}`, whose expressions bash evaluates as code")
            return
        if name in ("cd", "pushd", "popd"):
            operands = [word for word in rest if not word.startswith("-") or word == "-"]
            self.cwd = HOLE if name == "popd" else join_dir(self.cwd, operands[0] if operands else "")
        runs = programs_run(name, rest)
        self.unwrap(words, depth, stdin, runs)
        for inner in runs.commands:
            self.run(inner, depth + 1)
        for text in runs.scripts:
            self.inline_script(words, text, depth, record=False)
        for why in runs.unknown:
            self.runs_unknown(why)

    def unwrap(self, words: tuple[str, ...], depth: int, stdin: str | None, runs: Runs) -> None:
        """Record the command, or what a wrapper (``env``, ``sudo``, ``bash -c``, ``xargs``, ``eval``) runs."""
        name, rest = words[0], words[1:]
        if name in TRANSPARENT or name in ELEVATING:
            if name in ELEVATING:
                self.record(SimpleCommand(words, cwd=self.cwd))
            inner = after_options(name, rest)
            if name == "command" and rest[:1] and rest[0] in ("-v", "-V"):
                inner = None  # a lookup, not a run
            if name == "env":
                assigned = inner or ()
                inner = after_assignments(assigned)
                for word in assigned[: len(assigned) - len(inner or ())]:
                    self.environment(*word.split("=", 1))
            if name == "timeout" and inner:
                inner = inner[1:]  # the duration
            if inner:
                saved = self.cwd
                self.cwd = self.directory_option(name, rest)
                self.run(inner, depth + 1, stdin)
                self.cwd = saved
                return
            if name in ELEVATING:
                return
        elif name == "xargs":
            self.record(SimpleCommand(words, cwd=self.cwd))
            inner = after_options(name, rest)
            self.run((*(inner or ("echo",)), HOLE), depth + 1)
            return
        elif name == "eval":
            self.inline_script(words, " ".join(rest), depth)
            return
        elif name in SHELLS:
            script = shell_script(rest)
            if any(re.fullmatch(r"-[a-zA-Z]*i[a-zA-Z]*", word) for word in rest[:4]):
                self.runs_unknown(f"`{name} -i`: an interactive shell first runs its startup files")
            if script is ShellScript.FILE:
                self.record(SimpleCommand(words, cwd=self.cwd))  # the script's content is not the line's to judge
            elif not runs.unknown:
                self.inline_script(words, stdin if script is ShellScript.READS_STDIN else script, depth)
            return
        elif name == "git":
            settings, subcommand, directory = git_global_options(rest)
            for setting in settings:
                if not harmless_git_setting(setting):
                    self.record(SimpleCommand(("git", "-c", setting), cwd=self.cwd))
            words = ("git", *subcommand)
            cwd = join_dir(self.cwd, directory) if directory is not None else self.cwd
            self.record(SimpleCommand(words, cwd=cwd))
            git_runs = programs_run(f"git {subcommand[0]}", subcommand[1:]) if subcommand else Runs()
            runs.scripts += git_runs.scripts
            runs.unknown += git_runs.unknown
            return
        self.record(SimpleCommand(words, cwd=self.directory_option(name, rest)))

    def directory_option(self, name: str, arguments: tuple[str, ...]) -> str | None:
        """The directory ``env -C dir``, ``make -C dir``, ``tar -C dir`` run in (the last one given)."""
        directory = None
        options = _CHDIR_OPTIONS.get(name, ())
        for index, word in enumerate(arguments):
            option, equals, value = word.partition("=")
            if option in options:
                directory = value if equals else (arguments[index + 1] if index + 1 < len(arguments) else HOLE)
            elif any(len(o) == 2 and word.startswith(o) and len(word) > 2 for o in options):
                directory = word[2:]
        return self.cwd if directory is None else join_dir(self.cwd, directory)

    def inline_script(self, words: tuple[str, ...], script: str | None, depth: int, *, record: bool = True) -> None:
        """A shell (or eval, or an option's program) running ``script``: judged by the script's own commands when
        its text is known here, else by the command and a command that could be anything."""
        if script is not None and HOLE not in script:
            self.script(script, depth + 1)
            return
        if record:
            self.record(SimpleCommand(words, cwd=self.cwd))
        self.runs_unknown(f"what `{' '.join(words).replace(HOLE, '…')}` runs (known only when the line runs)")

    # -- words -----------------------------------------------------------------------------------------

    def word(self, node: Any, depth: int) -> str:
        """A word's value with quotes removed; dynamic parts become :data:`HOLE` (their commands are walked).
        ``$HOME`` and ``${HOME}`` at a word's start read as ``~`` (the home folder is a path like any other)."""
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
        if kind == "arithmetic_expansion":
            self.arithmetic(node)
        if kind in ("simple_expansion", "expansion") and self.text(node) in ("$HOME", "${HOME}"):
            return "~"
        if kind == "expansion" and re.search(r"@P\}$|^\$\{!", self.text(node)):
            self.runs_unknown(f"`{self.text(node)}`, which bash expands by evaluating a value as code")
        # $VAR, ${VAR...}, $((...)), arrays: known only when the line runs (their $(...) still run)
        for child in node.children:
            self.node(child, depth)
        return HOLE if kind != "brace_expression" else self.text(node)


def _merge(first: str | None, second: str | None) -> str | None:
    """The directory after one of two paths ran: known only when they agree."""
    return first if first == second else HOLE


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text, flags=re.DOTALL)


def _ansi_c(body: str) -> str:
    try:
        return codecs.decode(body.encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return HOLE
