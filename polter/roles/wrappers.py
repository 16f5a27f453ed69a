"""Programs that run the rest of their arguments as a command (``env``, ``sudo``, ``bash -c``, ``git``'s global
options), and where a program's name points: what the shell reading unwraps to find the command that runs.
Pure.
"""

from __future__ import annotations

import posixpath
import re
from enum import Enum

__all__ = [
    "ELEVATING",
    "HOLE",
    "SHELLS",
    "TRANSPARENT",
    "ShellScript",
    "after_assignments",
    "after_options",
    "git_global_options",
    "harmless_git_setting",
    "join_dir",
    "program_name",
    "shell_script",
]

HOLE = "\x00"
"""Stands for text known only when the line runs (a variable, a command's output, xargs' input)."""

SYSTEM_BIN_DIRS = frozenset({"/bin", "/sbin", "/usr/bin", "/usr/sbin", "/usr/local/bin", "/usr/local/sbin"})
"""Where the system's own commands live: ``/usr/bin/ls`` is ``ls``, but ``./ls`` or ``/tmp/x/ls`` is some other
program that happens to share the name, judged as an unknown program."""

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

_HARMLESS_GIT_CONFIG = re.compile(
    r"(color|log|advice|column|pretty|status|blame|grep|i18n)\..*"
    r"|core\.(quotepath|abbrev)|format\.pretty|init\.defaultbranch|user\.(name|email)"
    r"|diff\.(noprefix|renames|algorithm|colormoved|relative|mnemonicprefix|indentheuristic)",
    re.IGNORECASE,
)
"""``git -c`` settings that change how git prints; others (``core.fsmonitor``, ``diff.external``, ``core.pager``,
``alias.*``...) make git run a program, so ``git -c core.fsmonitor=x status`` is judged as more than a status."""


def join_dir(cwd: str | None, directory: str) -> str:
    """The directory ``cd directory`` leads to from ``cwd`` (None: the line's own directory), as written."""
    if not directory or directory == "~":
        return "~"
    if directory == "-":
        return HOLE
    if directory.startswith(("/", "~")) or cwd is None:
        return directory
    return posixpath.join(cwd, directory)


def program_name(word: str) -> str:
    """``/usr/bin/ls`` → ``ls``; any other path (``./ls``, ``/tmp/x/ls``) stays as written: another program."""
    directory, _, base = word.rpartition("/")
    return base if directory in SYSTEM_BIN_DIRS and HOLE not in word else word


class ShellScript(Enum):
    """What a shell runs when it is not given a ``-c`` script."""

    READS_STDIN = "stdin"
    FILE = "a script file"


def after_options(name: str, words: tuple[str, ...]) -> tuple[str, ...] | None:
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


def after_assignments(words: tuple[str, ...]) -> tuple[str, ...] | None:
    index = 0
    while index < len(words) and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[index], flags=re.DOTALL):
        index += 1
    return words[index:] or None


def shell_script(words: tuple[str, ...]) -> str | ShellScript:
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
        return ShellScript.FILE
    return ShellScript.READS_STDIN


def git_global_options(words: tuple[str, ...]) -> tuple[list[str], tuple[str, ...], str | None]:
    """``git -C dir -c k=v push`` → ``(["k=v"], ("push",), "dir")``: the ``key=value`` settings of git's global
    ``-c`` and ``--config-env`` options, the subcommand with its arguments (rules name git's subcommands, whatever
    options come first), and the directory ``-C`` moves to."""
    settings: list[str] = []
    directory: str | None = None
    index = 0
    while index < len(words) and words[index].startswith("-"):
        option, _, attached = words[index].partition("=")
        value = attached or (words[index + 1] if index + 1 < len(words) else "")
        if option in ("-c", "--config-env"):
            settings.append(value)
        elif option == "-C":
            directory = join_dir(directory, value)
        elif option == "--exec-path" and attached:
            settings.append(f"--exec-path={attached}")  # git runs its subcommands from there
        index += 2 if option in _GIT_OPTIONS_WITH_VALUE and not attached else 1
    return settings, words[index:], directory


def harmless_git_setting(setting: str) -> bool:
    """Whether a ``git -c key=value`` setting only changes how git prints."""
    return _HARMLESS_GIT_CONFIG.fullmatch(setting.split("=", 1)[0]) is not None
