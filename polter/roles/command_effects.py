"""What one simple command does besides running: the files it writes and reads, the network it reaches, and
why a command on the read-only list is not read-only as spelled (``git remote -v add``, ``sort -o f``).

Options are read as getopt reads them (``-Ei``, ``-t DIR``, ``--target-directory=DIR``, options after operands),
so a file written is found however its option is spelled. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from polter.roles.shell import HOLE

__all__ = ["Options", "PathUse", "command_paths", "git_network", "network_targets", "read_only_caveat", "read_options"]


@dataclass(frozen=True, slots=True)
class PathUse:
    """A path a command names: read or written, and whether all of a folder's tree is meant (``grep -r``)."""

    path: str
    write: bool
    tree: bool = False
    unsure: str | None = None
    """Set for a path a program that can write anything merely mentions (``python3 -c '...hooks...'``)."""


@dataclass(slots=True)
class Options:
    """A command's arguments as getopt reads them: ``(option, value)`` pairs and operands."""

    pairs: list[tuple[str, str | None]] = field(default_factory=list)
    operands: list[str] = field(default_factory=list)

    def has(self, *names: str) -> bool:
        return any(option in names for option, _ in self.pairs)

    def values(self, *names: str) -> list[str]:
        return [value for option, value in self.pairs if option in names and value is not None]


def read_options(
    arguments: Sequence[str], short_values: str = "", long_values: Sequence[str] = (), optional_short: str = ""
) -> Options:
    """Read ``arguments``: ``short_values`` letters take a value (attached or the next word), ``optional_short``
    letters take only an attached one (``sed -i.bak``), ``long_values`` options take one (``--x=v`` or ``--x v``)."""
    options = Options()
    index = 0
    while index < len(arguments):
        word = arguments[index]
        following = arguments[index + 1] if index + 1 < len(arguments) else None
        if word == "--":
            options.operands += arguments[index + 1 :]
            break
        if word.startswith("--"):
            name, equals, value = word.partition("=")
            if equals:
                options.pairs.append((name, value))
            elif name in long_values:
                options.pairs.append((name, following))
                index += 1
            else:
                options.pairs.append((name, None))
        elif word.startswith("-") and len(word) > 1:
            for position, letter in enumerate(word[1:], start=1):
                attached = word[position + 1 :]
                if letter in short_values:
                    options.pairs.append((f"-{letter}", attached or following))
                    index += not attached
                    break
                if letter in optional_short:
                    options.pairs.append((f"-{letter}", attached))
                    break
                options.pairs.append((f"-{letter}", None))
        else:
            options.operands.append(word)
        index += 1
    return options


_PATHISH = re.compile(r"^(?:~|\.{1,2}(?:/|$)|/)|/")
_WRITES_ALL = frozenset({"rm", "rmdir", "touch", "mkdir", "unlink", "shred", "tee", "truncate"})
_WRITES_AFTER_FIRST = frozenset({"chmod", "chown", "chgrp"})
_COPIERS = {
    "cp": "tSf",
    "mv": "tS",
    "ln": "tS",
    "install": "tSmogf",
    "rsync": "eBfT",
    "scp": "cFiJloPS",
}
"""Programs that write their last operand (or ``-t DIR``), with the short options that take a value."""
_RECURSIVE_READERS = {"grep": "rR", "egrep": "rR", "fgrep": "rR", "cp": "rRa", "diff": "r", "zip": "r", "scp": "r"}
"""Programs that read a folder's whole tree given one of these letters."""
_WRITE_ANYTHING = frozenset(
    {
        "php",
        "lua",
        "awk",
        "gawk",
        "mawk",
        "sed",
        "make",
        "gmake",
        "vim",
        "vi",
        "nvim",
        "nano",
        "emacs",
        "ed",
        "ex",
        "deno",
        "bun",
        "tclsh",
        "Rscript",
        "julia",
        "osascript",
        "pwsh",
    }
)
"""Programs whose code or script (``-c``, ``-e``, a Makefile) can write any file: a protected path that their
arguments mention is asked about, never allowed."""
_NEAR_PROTECTED = re.compile(r"[^\s'\"(),;=]*(?:\.git\b|\bhooks\b|polter)[^\s'\"(),;=]*")
"""A path-like part of a word that mentions git's folder, hooks, or Polter's own files."""
_ALWAYS_RECURSIVE = frozenset({"rg", "ag", "ack", "rsync", "tar", "find", "fd", "fdfind", "du", "git grep"})


@dataclass(frozen=True, slots=True)
class _Output:
    """How a command that otherwise only reads is told to write a file."""

    options: tuple[str, ...] = ()
    """Options whose value is the file written: ``-o FILE``, ``--output=FILE``, ``-fprint FILE``."""
    short_values: str = ""
    """Its one-letter options that take a value, so that ``-ro FILE`` is read as getopt does."""
    operand: int | None = None
    """Which operand (0-based) is the file written: ``uniq IN OUT``."""


_OUTPUTS: dict[str, _Output] = {
    "git": _Output(options=("--output",)),
    "sort": _Output(options=("-o", "--output"), short_values="kotST"),
    "tree": _Output(options=("-o",), short_values="LPIoHT"),
    "uniq": _Output(short_values="fsw", operand=1),
    "xxd": _Output(short_values="cglosn", operand=1),
    "curl": _Output(
        options=(
            "-o",
            "--output",
            "-D",
            "--dump-header",
            "-c",
            "--cookie-jar",
            "--trace",
            "--trace-ascii",
            "--stderr",
            "--libcurl",
            "--etag-save",
            "--hsts",
            "--alt-svc",
        ),
        short_values="oDcdHuXAeEKTxrwYyzmbCFtUQ",
    ),
    "wget": _Output(
        options=("-O", "--output-document", "-o", "--output-file", "-a", "--append-output", "-P", "--directory-prefix"),
        short_values="OoaPeUtTwlADRIXQiB",
    ),
}
"""Commands that write a file named by an option (or an operand)."""
_FIND_OUTPUTS = ("-fprint", "-fprint0", "-fprintf", "-fls")


def command_paths(words: tuple[str, ...]) -> list[PathUse]:
    """The paths a command names: every operand of a known writer, the files output options name, and the
    path-like operands of others (read); a recursive reader's folders as whole trees."""
    name = words[0].rsplit("/", 1)[-1]
    arguments = words[1:]
    if name == "git" and arguments:
        return _git_paths(arguments)
    found: list[PathUse] = []
    if name in _WRITES_ALL:
        found = [PathUse(word, True) for word in read_options(arguments).operands]
    elif name in _WRITES_AFTER_FIRST:
        found = [PathUse(word, True) for word in read_options(arguments).operands[1:]]
    elif name in _COPIERS:
        options = read_options(arguments, _COPIERS[name], ("--target-directory", "--suffix", "--backup"))
        targets = options.values("-t", "--target-directory")
        sources = options.operands if targets else options.operands[:-1]
        targets = targets or options.operands[-1:]
        tree = name in ("rsync", "scp") or bool(set(_RECURSIVE_READERS.get(name, "")) & _letters(options))
        found = [PathUse(word, name == "mv", tree) for word in sources] + [PathUse(word, True) for word in targets]
    elif name in ("sed", "perl"):
        options = read_options(arguments, "efl" if name == "sed" else "eEIMmx", ("--expression", "--file"), "i")
        if options.has("-i", "--in-place"):
            scripts = options.values("-e", "--expression", "-f", "--file", "-E")
            files = options.operands if scripts else options.operands[1:]
            found = [PathUse(word, True) for word in files]
    elif name == "dd":
        found = [PathUse(word[3:], word.startswith("of=")) for word in arguments if word.startswith(("if=", "of="))]
    elif name == "tar":
        found = _tar_paths(arguments)
    if not found:
        found = _output_paths(name, arguments)
    if name in _WRITE_ANYTHING or re.fullmatch(r"python[0-9.]*|pypy[0-9.]*|node(js)?|perl[0-9.]*|ruby[0-9.]*", name):
        found += [
            PathUse(mention, True, unsure=f"`{name}` can write any file, and its arguments name this path")
            for word in arguments
            for mention in _NEAR_PROTECTED.findall(word)
        ]
    if name == "curl" and "O" in _letters(read_options(arguments, _OUTPUTS["curl"].short_values)):
        for url in network_targets(words):  # -O names the file after the URL's last segment
            found.append(PathUse(url.split("?", 1)[0].split("#", 1)[0].rstrip("/").rsplit("/", 1)[-1] or HOLE, True))
    recursive = (
        name in _ALWAYS_RECURSIVE
        or bool(set(_RECURSIVE_READERS.get(name, "")) & _letters(read_options(arguments)))
        or "--recursive" in arguments
    )
    if recursive and not any(use.tree for use in found):
        operands = read_options(arguments, "efmABCd" if "grep" in name else "").operands
        folders = [word for word in operands[1 if name in ("grep", "egrep", "fgrep", "rg", "ag", "ack") else 0 :]]
        found += [PathUse(word, False, tree=True) for word in folders or ["."]]
    return found


def _letters(options: Options) -> set[str]:
    return {option[1] for option, _ in options.pairs if len(option) == 2}


def _output_paths(name: str, arguments: Sequence[str]) -> list[PathUse]:
    """The files an otherwise read-only command writes, and its other path-like operands as reads."""
    output = _OUTPUTS.get(name)
    written: list[str] = []
    if name == "find":
        written = [arguments[i + 1] for i, word in enumerate(arguments[:-1]) if word in _FIND_OUTPUTS]
    elif output is not None:
        options = read_options(arguments, output.short_values, [o for o in output.options if o.startswith("--")])
        written = options.values(*output.options)
        if output.operand is not None:
            written += options.operands[output.operand : output.operand + 1]
    reads = [
        word
        for word in arguments
        if (not word.startswith("-") or word == "-") and _PATHISH.search(word) and "://" not in word
    ]
    return [PathUse(word, True) for word in written] + [PathUse(word, False) for word in reads if word not in written]


def _tar_paths(arguments: Sequence[str]) -> list[PathUse]:
    """``tar -x`` writes the archive's members under ``-C DIR`` (or the current folder): that whole tree."""
    first = arguments[0] if arguments and not arguments[0].startswith("-") else None
    letters = set(first or "")
    options = read_options(arguments[1:] if first else arguments, "fCbHIKLNTVX", ("--file", "--directory"))
    letters |= _letters(options)
    extracting = "x" in letters or options.has("--extract", "--get")
    archives = options.values("-f", "--file")
    uses = [PathUse(word, not extracting and ("c" in letters or "r" in letters or "u" in letters)) for word in archives]
    if extracting:
        uses.append(PathUse(".", True, tree=True))  # the command's directory already follows -C
    elif "c" in letters:
        uses += [PathUse(word, False, tree=True) for word in options.operands]
    return uses


# -- git ---------------------------------------------------------------------------------------------

_GIT_NETWORK = frozenset({"fetch", "pull", "push", "clone", "ls-remote", "fetch-pack", "send-pack", "archive"})
_GIT_READS = {
    "reflog": ("show", "exists"),
    "stash": ("list", "show"),
    "remote": ("get-url",),
    "notes": ("list", "show"),
    "worktree": ("list",),
    "submodule": ("status", "summary", "foreach"),
}
"""For git subcommands with actions of their own: the actions that only read (the first operand)."""
_GIT_REF_WRITERS = frozenset(
    {
        "update-ref",
        "symbolic-ref",
        "gc",
        "prune",
        "repack",
        "pack-refs",
        "replace",
        "commit",
        "merge",
        "rebase",
        "reset",
        "checkout",
        "switch",
        "restore",
        "cherry-pick",
        "revert",
        "am",
        "apply",
        "add",
        "rm",
        "mv",
        "init",
        "clean",
        "fsck",
        "maintenance",
        "filter-branch",
        "update-index",
        "write-tree",
        "commit-tree",
        "hash-object",
    }
)


def read_only_caveat(words: tuple[str, ...]) -> str | None:
    """Why a command that the read-only list names does not only read as spelled; None when it does."""
    if words[:1] != ("git",) or len(words) < 2:
        return None
    subcommand, arguments = words[1], words[2:]
    options = read_options(arguments)
    operands = options.operands
    if subcommand in _GIT_NETWORK:
        return f"`git {subcommand}` reaches the network"
    if subcommand in _GIT_READS:
        action = operands[0] if operands else None
        if subcommand == "remote":
            if action in ("update", "prune") or (action == "show" and not options.has("-n")):
                return f"`git remote {action}` reaches the network"
            if action is not None and action not in _GIT_READS["remote"] + ("show",):
                return f"`git remote {action}` writes the repository's config"
            return None
        if action is not None and action not in _GIT_READS[subcommand]:
            return f"`git {subcommand} {action}` changes the repository"
        if action is None and subcommand == "stash":
            return "`git stash` saves and resets the working tree"
        return None
    if subcommand == "branch":
        writing = options.has(
            "-d",
            "-D",
            "-m",
            "-M",
            "-c",
            "-C",
            "-f",
            "-u",
            "--delete",
            "--move",
            "--copy",
            "--force",
            "--set-upstream-to",
            "--unset-upstream",
            "--edit-description",
            "--track",
        )
        listing = options.has(
            "-l",
            "--list",
            "-a",
            "--all",
            "-r",
            "--remotes",
            "--contains",
            "--merged",
            "--no-merged",
            "--points-at",
            "--show-current",
        )
        return "`git branch` with these arguments changes branches" if writing or (operands and not listing) else None
    if subcommand == "tag":
        writing = options.has(
            "-d",
            "--delete",
            "-a",
            "--annotate",
            "-s",
            "--sign",
            "-u",
            "--local-user",
            "-f",
            "--force",
            "-m",
            "--message",
            "-F",
            "--file",
            "-e",
            "--edit",
        )
        listing = options.has("-l", "--list", "--contains", "--merged", "--no-merged", "--points-at", "-n")
        return "`git tag` with these arguments changes tags" if writing or (operands and not listing) else None
    if subcommand == "config" and not _git_config_reads(arguments):
        return "`git config` with a value writes git's config"
    if subcommand in _GIT_REF_WRITERS:
        return f"`git {subcommand}` changes the repository"
    return None


def git_network(words: tuple[str, ...]) -> list[str]:
    """The remotes a git command reaches: URLs it names, else a hole (a remote's name stands for a URL)."""
    if words[:1] != ("git",) or len(words) < 2:
        return []
    caveat = read_only_caveat(words)
    if caveat is None or "network" not in caveat:
        if words[1] == "submodule" and read_options(words[2:]).operands[:1] in (["update"], ["add"], ["sync"]):
            return [HOLE]
        return []
    urls = [word for word in words[2:] if "://" in word or re.match(r"^[\w.-]+@[\w.-]+:", word)]
    return urls or [HOLE]


_FETCHERS = frozenset({"curl", "wget", "http", "https", "xh", "aria2c", "lynx", "w3m", "links"})
"""Programs whose URL operands are fetched."""


def network_targets(words: tuple[str, ...]) -> list[str]:
    """The URLs (or a hole for a remote known only by name) a command reaches: fetchers' URLs, git's remotes."""
    name = words[0].rsplit("/", 1)[-1]
    if name in _FETCHERS:
        return [word for word in words[1:] if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*://", word) or HOLE in word[:1]]
    return git_network(words)


def _git_config_reads(arguments: Sequence[str]) -> bool:
    """Whether ``git config ARGUMENTS`` only reads: a get or list action, or a single key (``--show-scope``,
    ``--show-origin`` and ``--type`` only change how a value prints)."""
    options = read_options(arguments, "f", ("--file", "--type", "--default", "--blob", "--comment", "--value"))
    if options.has(
        "--get", "--get-all", "--get-regexp", "--get-urlmatch", "--get-color", "--get-colorbool", "--list", "-l"
    ):
        return not options.has(
            "--add", "--replace-all", "--unset", "--unset-all", "--rename-section", "--remove-section", "-e", "--edit"
        )
    if options.operands[:1] in (["get"], ["list"]):
        return True
    writing = options.has(
        "--add", "--replace-all", "--unset", "--unset-all", "--rename-section", "--remove-section", "-e", "--edit"
    )
    return not writing and len(options.operands) == 1


def _git_paths(arguments: tuple[str, ...]) -> list[PathUse]:
    """``git config`` writes a config file; ``git init/clone --template`` copies hooks into the new repository."""
    subcommand, rest = arguments[0], arguments[1:]
    if subcommand == "config" and not _git_config_reads(rest):
        options = read_options(rest, "f", ("--file",))
        files = options.values("-f", "--file")
        if options.has("--global"):
            files.append("~/.gitconfig")
        return [PathUse(path, True) for path in files or [".git/config"]]
    if subcommand in ("init", "clone"):
        options = read_options(
            rest,
            "obcj",
            (
                "--template",
                "--separate-git-dir",
                "--origin",
                "--branch",
                "--config",
                "--reference",
                "--depth",
                "--jobs",
            ),
        )
        if options.has("--template") or options.values("-c", "--config"):
            if subcommand == "init":
                target = options.operands[-1] if options.operands else "."
            else:
                target = options.operands[1] if len(options.operands) > 1 else HOLE
            return [PathUse(f"{target.rstrip('/')}/.git/hooks", True, tree=True)]
    return _output_paths("git", rest)
