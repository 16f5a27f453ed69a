"""``polter asks``: see and answer the gateway's asks without the app (headless, scripts, CI)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import TYPE_CHECKING, Any

from polter.cli._admin import add_json, add_state_dir, list_by_default, print_json, print_table, with_admin
from polter.printable import printable

if TYPE_CHECKING:
    from polter.gateway.models import AskAnswer

ANSWERS: dict[str, AskAnswer] = {
    "allow": "allow_once",
    "allow-once": "allow_once",
    "allow-pane": "allow_pane",
    "deny": "deny",
}


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "asks",
        help="list and answer pending asks",
        description="Calls a role says to ask about wait for a human. While no "
        "controller listens (the app, or `polter asks watch`), asks are "
        "denied at once.",
    )
    commands = parser.add_subparsers(dest="asks_command", metavar="COMMAND", required=True)
    listing = commands.add_parser("list", help="the pending asks")
    listing.add_argument("--pane", help="only this pane's")
    listing.set_defaults(handler=_list)
    answer = commands.add_parser("answer", help="answer one ask")
    answer.add_argument("ask_id", metavar="ID")
    answer.add_argument("answer", choices=sorted(ANSWERS), help="allow (once), allow-pane (for this pane), deny")
    answer.set_defaults(handler=_answer)
    watch = commands.add_parser(
        "watch",
        help="be the controller: print asks as they come (answer them with `polter asks answer` from another terminal)",
    )
    watch.set_defaults(handler=_watch)
    for sub in (listing, answer, watch):
        add_state_dir(sub)
        add_json(sub)
    list_by_default(parser, commands, listing)


def _describe(ask: Any) -> list[Any]:
    target = f"{ask.server}/{ask.name}" if ask.server else ask.name
    return [ask.id, ask.pane_title or ask.pane, ask.role, ask.kind, target, ask.expires_at.strftime("%H:%M:%S")]


def _list(args: argparse.Namespace) -> int:
    asks = with_admin(args, lambda c: c.asks(args.pane))
    if args.json:
        print_json(asks)
    elif not asks:
        print("no pending asks")
    else:
        print_table(["ID", "PANE", "ROLE", "KIND", "WHAT", "EXPIRES"], [_describe(ask) for ask in asks])
    return 0


def _answer(args: argparse.Namespace) -> int:
    ask = with_admin(args, lambda c: c.answer(args.ask_id, ANSWERS[args.answer]))
    if args.json:
        print_json(ask)
    else:
        print(f"{ask.id}: {args.answer}")
    return 0


def _watch(args: argparse.Namespace) -> int:
    from polter.gateway.models import AskInfo

    async def follow(client: Any) -> None:
        async for event in client.events():
            if event.type not in ("ask", "ask_resolved"):
                continue
            if args.json:
                print(event.model_dump_json(), flush=True)
                continue
            ask = AskInfo.model_validate(event.data)
            target = f"{ask.server}/{ask.name}" if ask.server else ask.name
            if event.type == "ask":
                line = (
                    f"ASK {ask.id}: pane {ask.pane_title or ask.pane} ({ask.role}) wants {ask.kind} {target} "
                    f"{ask.arguments} — {ask.reason}"
                )
                print(printable(line), flush=True)
            else:
                print(f"    {ask.id}: {ask.state} ({ask.answered_by})", flush=True)

    try:
        with_admin(args, follow)
    except KeyboardInterrupt:
        pass
    except asyncio.CancelledError:
        print("stopped", file=sys.stderr)
    return 0
