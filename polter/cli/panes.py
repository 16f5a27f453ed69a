"""``polter panes``: register panes with a running gateway and steer them (admin token)."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from polter.cli._admin import add_json, add_state_dir, list_by_default, print_json, print_table, with_admin
from polter.cli.tools import print_capabilities

if TYPE_CHECKING:
    from polter.gateway.client import GatewayClient
    from polter.gateway.models import PaneInfo


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "panes",
        help="register, list, steer and remove the gateway's panes",
        description="Manage the panes of a running gateway (found via gateway.json).",
    )
    commands = parser.add_subparsers(dest="panes_command", metavar="COMMAND", required=True)

    new = commands.add_parser("register", help="register a pane and print its id and token")
    new.add_argument("--role", required=True, help="the role the pane starts under")
    new.add_argument("--title", help="a human name for the pane")
    new.add_argument("--id", dest="pane_id", help="the pane id to use (default: the gateway picks)")
    new.add_argument("--token", help="re-register with this token (after a gateway restart)")
    new.set_defaults(handler=_register)

    role = commands.add_parser("set-role", help="switch a pane's role (its sessions get list_changed)")
    role.add_argument("pane_id", metavar="ID")
    role.add_argument("role", metavar="ROLE")
    role.set_defaults(handler=lambda args: _show(args, lambda c: c.set_role(args.pane_id, args.role)))

    line = commands.add_parser("input", help="record a line the human typed (keyword gates, new research phase)")
    line.add_argument("pane_id", metavar="ID")
    line.add_argument("text", metavar="TEXT")
    line.set_defaults(handler=lambda args: _show(args, lambda c: c.input(args.pane_id, args.text)))

    escalate = commands.add_parser("escalate", help="move a pane with phases to the action phase")
    escalate.add_argument("pane_id", metavar="ID")
    escalate.add_argument("--reason", default="", help="why, for the audit log")
    escalate.set_defaults(handler=lambda args: _show(args, lambda c: c.set_phase(args.pane_id, "action", args.reason)))

    reset = commands.add_parser("reset-phase", help="move a pane with phases back to the research phase")
    reset.add_argument("pane_id", metavar="ID")
    reset.set_defaults(handler=lambda args: _show(args, lambda c: c.set_phase(args.pane_id, "research")))

    listing = commands.add_parser("list", help="list the panes")
    listing.set_defaults(handler=_list)

    show = commands.add_parser("show", help="a pane's capabilities: what its whoami answers")
    show.add_argument("pane_id", metavar="ID")
    show.set_defaults(handler=_capabilities)

    remove = commands.add_parser("remove", help="remove a pane (its token stops working)")
    remove.add_argument("pane_id", metavar="ID")
    remove.set_defaults(handler=lambda args: _show(args, lambda c: c.remove(args.pane_id)))

    for sub in (new, role, line, escalate, reset, listing, show, remove):
        add_state_dir(sub)
        add_json(sub)
    list_by_default(parser, commands, listing)


def _register(args: argparse.Namespace) -> int:
    created = with_admin(
        args, lambda c: c.register(args.role, title=args.title, pane_id=args.pane_id, token=args.token)
    )
    if args.json:
        print_json(created)
    else:
        print(f"pane {created.pane.id} (role {created.pane.role})")
        print(f"POLTER_TOKEN={created.token}")
    return 0


def _show(args: argparse.Namespace, action: Callable[[GatewayClient], Awaitable[PaneInfo]]) -> int:
    info = with_admin(args, action)
    if args.json:
        print_json(info)
    else:
        _print_panes([info])
    return 0


def _list(args: argparse.Namespace) -> int:
    panes = with_admin(args, lambda c: c.panes())
    if args.json:
        print_json(panes)
    elif not panes:
        print("no panes registered")
    else:
        _print_panes(panes)
    return 0


def _print_panes(panes: list[PaneInfo]) -> None:
    print_table(
        ["ID", "TITLE", "ROLE", "PHASE", "SESSIONS", "ASKS", "LAST INPUT"],
        [
            [
                p.id,
                p.title or "",
                p.role + ("" if p.role_found else " (missing!)"),
                p.phase or "-",
                p.sessions,
                p.pending_asks,
                p.last_input_at.strftime("%H:%M:%S") if p.last_input_at else "-",
            ]
            for p in panes
        ],
    )


def _capabilities(args: argparse.Namespace) -> int:

    capabilities = with_admin(args, lambda c: c.capabilities(args.pane_id))
    if args.json:
        print_json(capabilities)
    else:
        print_capabilities(capabilities)
    return 0
