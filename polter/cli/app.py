"""``polter`` with no command: start a session (agent panes under roles, the gateway behind them) and
show it in this window. The session runs in a host process of its own and outlives the window
(prefix then ``d`` detaches, ``polter attach`` comes back); where a detached session exists, ``polter``
says so and offers to attach to it instead of starting a second one."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from polter.errors import SessionError

if TYPE_CHECKING:
    from polter.adapters.plugins import AdapterRegistry
    from polter.launch.planning import Launch, LaunchOptions
    from polter.wire.messages import SessionInfo


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
        "--session",
        "-s",
        metavar="NAME",
        default=None,
        help="the new session's name (default: main, else the first free of main-2, main-3, ...)",
    )
    parser.add_argument(
        "--host",
        metavar="HOST",
        default=None,
        help="start the session on HOST over ssh (its panes, gateway and roles run there; docs/remote.md); "
        "default: polter.toml's host, else here",
    )
    parser.add_argument(
        "--palette-key",
        default=None,
        metavar="KEY",
        help="a key that opens the command palette directly, e.g. ctrl+p (default: none; the "
        "prefix key then : or p opens it, and ctrl+p goes to the program)",
    )


def launch_options(args: argparse.Namespace) -> LaunchOptions:
    """The launch ``args`` ask for, as plain data."""
    from polter.launch.planning import LaunchOptions

    return LaunchOptions(
        config=args.config,
        panes=list(args.pane or ()),
        restore=args.restore,
        preset="demo" if args.demo else None,
        count=args.panes,
        layout=args.layout,
        prefix=args.prefix,
        palette_key=args.palette_key,
    )


def plan(args: argparse.Namespace, registry: AdapterRegistry | None = None) -> Launch:
    """The session ``polter ARGS`` starts (the demo is the one preset the command line knows)."""
    from polter.demo.launch import demo_launch
    from polter.launch.planning import plan_launch

    return plan_launch(launch_options(args), registry, presets={"demo": demo_launch})


def run(args: argparse.Namespace) -> int:
    from polter.cli._remote import configured_hosts, start_remote
    from polter.cli.sessions import attach_window, describe, print_notes, survey
    from polter.host.daemon import start_host
    from polter.wire.registry import check_name

    host = args.host or configured_hosts(args.config)[0]
    if host:
        return start_remote(host, args)
    plan(args)  # a mistake in the options or the config is reported before anything starts
    live, notes = asyncio.run(survey())
    print_notes(notes)
    names = {info.name for info in live}
    if args.session is not None:
        if check_name(args.session) in names:
            raise SessionError(f"a session named {args.session} is already running: `polter attach {args.session}`")
        name = args.session
    else:
        detached = [info for info in live if not info.clients]
        if detached and _offer_attach(max(detached, key=lambda info: info.started), describe):
            return attach_window(max(detached, key=lambda info: info.started).name)
        name = free_name(names)
    start_host(name, sys.argv[1:] if args.argv is None else args.argv)
    return attach_window(name)


def free_name(taken: set[str]) -> str:
    """The first of main, main-2, main-3, ... that no running session has."""
    from polter.wire.registry import DEFAULT_NAME

    name, number = DEFAULT_NAME, 1
    while name in taken:
        number += 1
        name = f"{DEFAULT_NAME}-{number}"
    return name


def _offer_attach(info: SessionInfo, describe: Callable[[SessionInfo], str]) -> bool:
    """Tell the human a session is running detached and ask whether to attach to it (yes by default);
    with no terminal to ask on, say so and start a new session. Any other answer than yes or no asks again:
    words typed ahead for the agent must not start a second session."""
    print(f"polter: a session is running detached: {describe(info)}", file=sys.stderr)
    if not sys.stdin.isatty():
        print(f"polter: starting a new session (`polter attach {info.name}` shows that one)", file=sys.stderr)
        return False
    while True:
        try:
            answer = input(f"Attach to {info.name} instead of starting a new session? [Y/n] ").strip().lower()
        except EOFError:
            return False
        if answer in ("", "y", "yes", "n", "no"):
            return answer in ("", "y", "yes")
        print(f"polter: {answer!r} is neither yes nor no", file=sys.stderr)
