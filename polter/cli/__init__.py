"""Polter's command line: ``polter`` starts the app, ``polter COMMAND`` runs one tool.

Every public module in this package that defines ``register(subparsers)`` contributes commands; the
app's own options come from :mod:`polter.cli.app`. A handler returns an exit code; a
:class:`~polter.errors.PolterError` becomes a one-line message.

The rule of this package: a command module imports at its top only what every command can afford (the
standard library, :mod:`polter.errors`, the other command modules), and what only its handlers need
(pydantic models, the gateway, the session, Textual) inside them. Building the parser imports every
command's module, so an import at the top is paid by each ``polter tools`` and ``polter call`` an agent runs
in a pane; the cost of each is measured in docs/architecture.md ("Imports inside functions"). The entry
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

__all__ = ["build_parser", "main"]


def build_parser() -> argparse.ArgumentParser:
    import argparse  # lazy: `polter relay NAME` (every window over ssh) builds no parser
    import importlib  # lazy: as above
    import pkgutil  # lazy: as above

    from polter.cli import app

    parser = argparse.ArgumentParser(
        prog="polter",
        description="A terminal multiplexer for AI coding agents, with a role per pane.",
    )
    parser.add_argument("--version", action="version", version=f"polter {__version__}")
    app.add_arguments(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", title="commands")
    for module_info in sorted(pkgutil.iter_modules(__path__), key=lambda info: info.name):
        if module_info.name.startswith("_") or module_info.name == "app":
            continue
        module = importlib.import_module(f"{__name__}.{module_info.name}")
        module.register(commands)
    parser.set_defaults(handler=app.run)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    words = sys.argv[1:] if argv is None else list(argv)
    if len(words) == 2 and words[0] == "relay" and not words[1].startswith("-"):
        return _run(lambda: relay.run_named_relay(words[1]))  # every window over ssh: no parser to build
    args = build_parser().parse_args(argv)
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
