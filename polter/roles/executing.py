"""Options that make a program run another program: ``find -exec``, ``rg --pre``, ``git grep -O``, ``less -k``...

Many commands that only read can be told to run something. A rule that allows ``rg`` must not allow
``rg --pre rm``, so the shell reading asks this module what a command runs besides itself, and judges that
too: a command given as words (``find -exec rm {} ;``), a script or program name given as an option's value
(``rg --pre rm``, ``git grep -O'cmd;'``), or code read from a file or stdin the line does not show
(``less --lesskey-src=/dev/stdin``, ``bash --rcfile f``), which is a command known only when it runs.
Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["Runs", "programs_run"]


@dataclass(slots=True)
class Runs:
    """What a command runs because of its options."""

    commands: list[tuple[str, ...]] = field(default_factory=list)
    """Commands given as words, ``{}`` already a hole (``find -exec CMD {} ;``)."""
    scripts: list[str] = field(default_factory=list)
    """Shell text or a program's name given as an option's value (``rg --pre X``)."""
    unknown: list[str] = field(default_factory=list)
    """What runs code the line does not show, as a reason names it."""


_ARGV_UNTIL_SEMICOLON = {
    "find": ("-exec", "-execdir", "-ok", "-okdir"),
    "fd": ("-x", "--exec", "-X", "--exec-batch"),
    "fdfind": ("-x", "--exec", "-X", "--exec-batch"),
}
"""Options followed by a command's words, up to ``;`` (or ``+``), run once per file found."""

_SCRIPT_OPTIONS = {
    "rg": ("--pre",),
    "git grep": ("-O", "--open-files-in-pager"),
    "sort": ("--compress-program",),
    "tar": ("-I", "--use-compress-program", "--to-command", "--info-script", "--new-volume-script", "-F"),
    "rsync": ("-e", "--rsh", "--rsync-path"),
    "zip": ("-TT", "--unzip-command"),
    "git difftool": ("-x", "--extcmd"),
    "git rebase": ("-x", "--exec"),
    "ssh": ("-o",),
}
"""Options whose value is a program (or shell text) the command runs; a short one may be attached (``-Ocmd``)."""

_FILE_OF_CODE = {
    "less": ("-k", "--lesskey-file", "--lesskey-src", "--lesskey-content"),
    "bash": ("--rcfile", "--init-file"),
    "sh": ("--rcfile", "--init-file"),
    "zsh": ("--rcfile",),
}
"""Options whose value names a file of commands or key bindings the program runs (less binds keys to ``!cmd``)."""

_BARE_RUNS = {
    "git grep": ("-O", "--open-files-in-pager"),
    "less": (),
}
"""Options that run a program even without a value (``git grep -O`` opens the pager)."""


def programs_run(name: str, arguments: tuple[str, ...]) -> Runs:
    """What ``name arguments`` runs besides itself (``name`` is ``git grep`` for a git subcommand)."""
    runs = Runs()
    argv_options = _ARGV_UNTIL_SEMICOLON.get(name, ())
    script_options = _SCRIPT_OPTIONS.get(name, ())
    file_options = _FILE_OF_CODE.get(name, ())
    index = 0
    while index < len(arguments):
        word = arguments[index]
        following = arguments[index + 1] if index + 1 < len(arguments) else None
        option, equals, attached = word.partition("=")
        if word in argv_options:
            end = index + 1
            while end < len(arguments) and arguments[end] not in (";", "+", "\\;"):
                end += 1
            inner = tuple(
                "\x00" if part in ("{}", "{/}", "{//}", "{.}", "{/.}") else part for part in arguments[index + 1 : end]
            )
            if inner:
                runs.commands.append(inner)
            index = end
        elif name == "find" and word == "-delete":
            runs.commands.append(("rm", "\x00"))
        elif name == "less" and word.startswith("+") and len(word) > 1:
            runs.unknown.append(f"`less {word}` runs less commands at start (`!` runs a shell command)")
        elif option in script_options or _attached_short(word, script_options):
            value = attached if equals else _attached_short(word, script_options) or following
            if option == "-o" and name == "ssh":  # ssh -o ProxyCommand=... / LocalCommand=...
                value = value if value and value.split("=", 1)[0].lower() in ("proxycommand", "localcommand") else None
                if value:
                    runs.scripts.append(value.split("=", 1)[1])
            elif value:
                runs.scripts.append(value)
            elif word in _BARE_RUNS.get(name, ()):
                runs.unknown.append(f"`{name} {word}` runs a pager on the files found")
            index += not equals and not _attached_short(word, script_options)
        elif option in file_options or _attached_short(word, file_options):
            runs.unknown.append(f"`{name} {word}` runs code from a file the line does not show")
        index += 1
    return runs


def _attached_short(word: str, options: tuple[str, ...]) -> str | None:
    """``-Ocmd`` for the short option ``-O``: the attached value, else None."""
    for option in options:
        if len(option) == 2 and option.startswith("-") and word.startswith(option) and len(word) > 2:
            return word[2:]
    return None
