"""Polter's command line: ``polter`` starts the app, ``polter COMMAND`` runs one tool.

Every public module in this package that defines ``register(subparsers)`` contributes commands; the
app's own options come from :mod:`polter.cli.app`. A handler returns an exit code; a
:class:`~polter.errors.PolterError` becomes a one-line message.

The rule of this package: a command module imports at its top only what every command can afford (the
standard library, :mod:`polter.errors`, the other command modules), and what only its handlers need
(pydantic models, the gateway, the session, Textual) inside them. A command line whose first word is a
command imports that command's module alone (:func:`build_parser`); any other (``polter --help``, the app's
own options) imports every command's module, and what a module imports at its top is paid by its own command
and by the modules that import it: by each ``polter tools`` and ``polter call`` an agent runs in a pane; the
cost of each is measured in docs/architecture.md ("Imports inside functions"). The entry
points of the host's process (:mod:`polter.cli._host_process`) and of the gateway's (``polter gateway``)
live here too: this package is where a process starts, so it may import anything.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from polter import __version__
from polter.cli import relay
from polter.errors import PolterError

if TYPE_CHECKING:
    import argparse

__all__ = ["COMMANDS_ELSEWHERE", "app_parser", "build_parser", "main"]


COMMANDS_ELSEWHERE = {"attach": "sessions", "ls": "sessions", "kill": "sessions", "call": "tools"}
"""The commands that the module of their own name does not define, and the module that does."""


def app_parser() -> argparse.ArgumentParser:
    """The parser of the app's own options, without the commands (the session host reads its options with it)."""
    import argparse  # lazy: `polter relay NAME` (every window over ssh) builds no parser

    from polter.cli import app

    parser = argparse.ArgumentParser(
        prog="polter",
        description="A terminal multiplexer for AI coding agents, with a role per pane.",
    )
    parser.add_argument("--version", action="version", version=f"polter {__version__}")
    app.add_arguments(parser)
    parser.set_defaults(handler=app.run)
    return parser


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line, or, when ``command`` (the first word of one) names a command, the app's options
    and that command alone: its module is imported first and the others only until the command is found, so
    ``polter attach`` (every window) and ``polter gateway`` pay for no other command's module."""
    import importlib  # lazy: as in app_parser
    import pkgutil  # lazy: as in app_parser

    parser = app_parser()
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    names = sorted(info.name for info in pkgutil.iter_modules(__path__) if not info.name.startswith("_"))
    own = COMMANDS_ELSEWHERE.get(command, command) if command is not None else None
    for name in sorted((name for name in names if name != "app"), key=lambda name: name != own):
        importlib.import_module(f"{__name__}.{name}").register(commands)
        if command is not None and command in commands.choices:
            break
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    if len(words) == 2 and words[0] == "relay" and not words[1].startswith("-"):
        return _run(lambda: relay.run_named_relay(words[1]))  # every window over ssh: no parser to build
    args = build_parser(words[0] if words else None).parse_args(argv)
    args.argv = None if argv is None else list(argv)
    return _run(lambda: args.handler(args))


def _run(handler: Callable[[], int | None]) -> int:
    try:
        return int(handler() or 0)
    except PolterError as exc:
        print(f"polter: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        return 130
