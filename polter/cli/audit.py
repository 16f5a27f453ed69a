"""``polter audit``: read the gateway's audit log (straight from its SQLite file; works while it is down)."""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING

from polter.cli._admin import add_json, add_state_dir, print_table, refuse_inside_pane
from polter.printable import printable

if TYPE_CHECKING:
    from polter.gateway.models import AuditRow

FOLLOW_INTERVAL = 0.25


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "audit",
        help="show the audit log (every listing, call, hook and ask)",
        description="Show the gateway's audit log: time, pane, role, layer, server, "
        "tool or skill, decision, rule, reason, latency.",
    )
    parser.add_argument("--pane", metavar="ID", help="only this pane's rows")
    parser.add_argument("--follow", "-f", action="store_true", help="keep printing new rows as they are written")
    parser.add_argument("--limit", "-n", type=int, default=50, metavar="N", help="how many recent rows (default 50)")
    add_json(parser)
    add_state_dir(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from polter.gateway.audit import AUDIT_FILE, read_rows
    from polter.paths import state_dir

    refuse_inside_pane("`polter audit` (every pane's decisions)")
    path = (args.state_dir or state_dir()) / AUDIT_FILE
    rows = read_rows(path, pane=args.pane, limit=args.limit, newest=True)
    if not rows and not args.follow:
        # With --json, stdout carries JSON lines only: an empty log is no lines, and the note goes to stderr.
        print(
            f"no audit rows in {path}" if path.exists() else f"no audit log at {path} yet",
            file=sys.stderr if args.json else sys.stdout,
        )
        return 0
    _print(rows, args.json, header=True)
    last = rows[-1].id if rows else 0
    try:
        while args.follow:
            time.sleep(FOLLOW_INTERVAL)
            rows = read_rows(path, pane=args.pane, after_id=last or 0)
            if rows:
                _print(rows, args.json, header=False)
                last = rows[-1].id
    except KeyboardInterrupt:
        pass
    return 0


def _print(rows: list[AuditRow], as_json: bool, *, header: bool) -> None:
    if as_json:
        for row in rows:
            print(row.model_dump_json(), flush=True)
        return
    table = [
        [
            row.id,
            row.time.astimezone().strftime("%H:%M:%S"),
            row.pane or "-",
            row.role or "-",
            row.layer,
            row.what,
            row.decision,
            f"{row.latency_ms:.1f}",
            row.rule or "-",
            row.reason,
        ]
        for row in rows
    ]
    headers = ["ID", "TIME", "PANE", "ROLE", "LAYER", "WHAT", "DECISION", "MS", "RULE", "REASON"]
    if header:
        print_table(headers, table)
    else:
        for line in table:
            print(printable("  ".join(str(cell) for cell in line)), flush=True)
