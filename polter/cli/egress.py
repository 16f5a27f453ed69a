"""``polter egress``: the egress proxy of the sandboxed panes, driven by the session host over stdin.

The handler replaces this process with :mod:`polter.sandbox.egress` (``exec``): the command line imports every
command module to build its parser, which alone would cost more than the proxy's whole memory budget (10 MB).
"""

from __future__ import annotations

import argparse
import os
import sys

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "egress",
        help="the sandboxed panes' egress proxy (run by the session host; JSON-line commands on stdin)",
        description="Listen on one Unix socket per pane and let each connection through only as the pane's role "
        "allows (the gateway decides). Prints 'egress ready', then takes JSON lines on stdin "
        '({"op": "add" | "remove" | "gateway" | "stats", ...}); stops when stdin closes.',
    )
    parser.add_argument(
        "--test-host",
        action="append",
        default=[],
        metavar="NAME=ADDRESS",
        help="tests only: resolve NAME to ADDRESS and exempt it from the loopback refusal",
    )
    parser.set_defaults(handler=_handle)


def _handle(args: argparse.Namespace) -> int:

    argv = [sys.executable, "-m", "polter.sandbox.egress"]
    for mapping in args.test_host:
        argv += ["--test-host", mapping]
    sys.stdout.flush()
    os.execv(sys.executable, argv)
