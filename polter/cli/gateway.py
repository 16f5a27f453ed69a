"""``polter gateway``: run the MCP gateway in the foreground (headless; the app starts it for you)."""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import asyncio

    from polter.gateway.hook_payloads import HookTranslator


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "gateway",
        help="run the MCP gateway (per-pane tokens, roles enforced, asks, audit)",
        description="Run Polter's MCP gateway in the foreground on 127.0.0.1. It prints its URL and writes "
        "gateway.json (url, pid, admin token; mode 0600) into the state dir for `polter panes` & co.",
    )
    parser.add_argument(
        "--servers",
        type=Path,
        metavar="FILE",
        help="the servers file (default: servers.toml in Polter's config dir, if present); "
        "changes to it are applied while the gateway runs",
    )
    parser.add_argument(
        "--roles-dir",
        type=Path,
        action="append",
        default=[],
        metavar="DIR",
        help="an extra role folder, overriding the bundled, user and project roles (repeatable)",
    )
    parser.add_argument(
        "--state-dir",
        type=Path,
        metavar="DIR",
        help="where gateway.json and the audit log go (default: Polter's state dir)",
    )
    parser.add_argument("--port", type=int, default=0, metavar="N", help="port on 127.0.0.1 (default: a free one)")
    parser.add_argument(
        "--ask-timeout",
        type=float,
        default=None,
        metavar="SECONDS",
        help="how long an ask waits for a human before it is denied (default 120)",
    )
    parser.add_argument(
        "--audit-arguments",
        action="store_true",
        help="keep raw call arguments in the audit log (default: only a digest)",
    )
    parser.add_argument(
        "--pane-socket",
        type=Path,
        metavar="PATH",
        help="also listen on this Unix socket for the panes' sandboxes (it never serves the control API)",
    )
    parser.add_argument("--verbose", "-v", action="store_true", help="log upstream starts and failures")
    parser.add_argument(
        "--stop-with-stdin",
        action="store_true",
        help="also stop when standard input closes (how the app ties its gateway to its own life)",
    )
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:

    from polter.gateway.sdk_imports import import_sdk_lazily

    import_sdk_lazily()  # before the gateway's first import of the SDK: only the parts it uses load
    import logging

    from polter.gateway.app import default_roles_dirs
    from polter.gateway.config import GatewayConfig
    from polter.gateway.serve import serve_forever
    from polter.paths import state_dir
    from polter.servers import default_servers_path, load_servers

    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    options = {"ask_timeout": args.ask_timeout} if args.ask_timeout is not None else {}
    config = GatewayConfig(
        state_dir=args.state_dir or state_dir(),
        servers=load_servers(args.servers, required=args.servers is not None),
        servers_file=args.servers or default_servers_path(),
        roles_dirs=[*default_roles_dirs(), *args.roles_dir],
        port=args.port,
        pane_socket=args.pane_socket,
        audit_arguments=args.audit_arguments,
        **options,
    )
    try:
        with asyncio.Runner(loop_factory=_fast_loop_factory()) as runner:
            runner.run(serve_forever(config, stop_with_stdin=args.stop_with_stdin, adapters=_find_adapter))
    except KeyboardInterrupt:
        pass
    return 0


def _find_adapter(name: str) -> HookTranslator:
    """The CLI adapter ``name``'s hook translator, the adapters' package imported at the first hook payload: a
    gateway whose panes send none (shells) never loads it."""
    from polter.adapters.plugins import find_adapter

    return find_adapter(name)


def _fast_loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """uvloop when installed (a dependency on Linux/macOS): a faster event loop for every request."""

    if os.environ.get("POLTER_GATEWAY_LOOP") == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        return None
    return uvloop.new_event_loop
