"""``polter`` with no command: start the multiplexer app."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--panes", type=int, default=4, metavar="N", help="number of panes (default 4)")
    parser.add_argument(
        "--layout",
        choices=("grid", "columns", "rows"),
        default="grid",
        help="how panes are arranged (default grid)",
    )
    parser.add_argument("--prefix", default="ctrl+b", metavar="KEY", help="the prefix key (default ctrl+b)")


def run(args: argparse.Namespace) -> int:
    from polter.ui.app import PolterApp

    PolterApp.from_args(args).run()
    return 0
