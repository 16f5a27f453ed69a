"""``polter`` with no command: start the app (agent panes under roles, with the gateway behind them)."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--config",
        type=Path,
        metavar="PATH",
        help="the config file (default: polter.toml in Polter's config dir, if present)",
    )
    parser.add_argument(
        "--pane",
        action="append",
        metavar="ADAPTER[:ROLE][,worktree]",
        help="a pane running ADAPTER under ROLE, e.g. claude-code:coder (repeatable; replaces the config's panes); "
        "',worktree' gives it a git worktree of its own (',branch=NAME', ',base=REF' optional; docs/worktrees.md)",
    )
    parser.add_argument(
        "--restore",
        action="store_true",
        help="reopen the panes of the last session (layout, CLI, role, directory), resuming each "
        "CLI's conversation where its adapter can",
    )
    parser.add_argument(
        "--demo",
        action="store_true",
        help="a TShock simulator, the Terraria server and panes under the Terraria roles: roles, a "
        "keyword gate and an ask, with no game server and no API key",
    )
    parser.add_argument("--panes", type=int, default=None, metavar="N", help="number of default panes (default 4)")
    parser.add_argument(
        "--layout", choices=("grid", "columns", "rows"), default=None, help="how panes are arranged (default grid)"
    )
    parser.add_argument("--prefix", default=None, metavar="KEY", help="the prefix key (default ctrl+b)")
    parser.add_argument(
        "--palette-key",
        default=None,
        metavar="KEY",
        help="a key that opens the command palette directly, e.g. ctrl+p (default: none; the "
        "prefix key then : or p opens it, and ctrl+p goes to the program)",
    )


def run(args: argparse.Namespace) -> int:
    from polter.ui.app import PolterApp

    app = PolterApp.from_args(args)
    app.run()
    return app.return_code or 0
