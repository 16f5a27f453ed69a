"""``polter servers``: the gateway's servers file — list, check, and import from the user's CLIs."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from polter.cli._admin import add_state_dir, list_by_default, print_json, print_table, with_admin
from polter.errors import PolterError

if TYPE_CHECKING:
    from polter.gateway.models import UpstreamInfo


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("servers", help="list, check and import the MCP servers the gateway manages")
    commands = parser.add_subparsers(dest="servers_command", metavar="COMMAND", required=True)

    listing = commands.add_parser("list", help="the servers in the servers file")
    listing.add_argument("--json", action="store_true")
    listing.set_defaults(handler=_list)

    check = commands.add_parser("check", help="validate the servers file (exit 1 on problems)")
    check.set_defaults(handler=_check)

    found = commands.add_parser(
        "import",
        help="find servers configured in Claude Code, Codex and Gemini CLI",
        description="Show the MCP servers your CLIs are configured with (Claude Code ~/.claude.json and "
        ".mcp.json, Codex config.toml, Gemini CLI settings.json). Nothing is written without --write.",
    )
    found.add_argument(
        "--from",
        dest="clients",
        action="append",
        choices=("claude-code", "codex", "gemini-cli"),
        help="only this CLI's servers (repeatable; default all)",
    )
    found.add_argument("--write", action="store_true", help="append the new ones to the servers file")
    found.add_argument("--home", type=Path, help=argparse.SUPPRESS)
    found.add_argument("--project", type=Path, metavar="DIR", help="the project whose servers to read (default: .)")
    found.add_argument("--json", action="store_true")
    found.set_defaults(handler=_import)

    reload = commands.add_parser(
        "reload",
        help="make the running gateway apply the servers file now (it also does when the file changes)",
        description="Start new servers, stop removed ones and restart changed ones in the running gateway. "
        "A file with problems changes nothing (exit 1).",
    )
    reload.add_argument("--json", action="store_true")
    reload.set_defaults(handler=_reload)
    add_state_dir(reload)

    for sub in (listing, check, found):
        sub.add_argument(
            "--servers",
            type=Path,
            metavar="FILE",
            help="the servers file (default: servers.toml in Polter's config dir)",
        )
    add_state_dir(listing)
    list_by_default(parser, commands, listing)


def _path(args: argparse.Namespace) -> Path:
    from polter.servers import default_servers_path

    return args.servers or default_servers_path()


def _live(args: argparse.Namespace) -> dict[str, UpstreamInfo]:
    """The running gateway's view of its upstreams (state, tools, restarts, error), if one runs."""

    try:
        status = with_admin(args, lambda client: client.status())
    except PolterError:
        return {}
    return {info.name: info for info in status.servers}


def _list(args: argparse.Namespace) -> int:
    from polter.servers import check_servers

    path = _path(args)
    servers, problems = check_servers(path, expand=False) if path.exists() else ({}, [])
    live = _live(args)
    if args.json:
        print_json(
            {
                name: {
                    "transport": server.transport,
                    **server.model_dump(),
                    "running": live[name].model_dump() if name in live else None,
                }
                for name, server in servers.items()
            }
        )
    elif not servers:
        print(f"no servers in {path}" if path.exists() else f"no servers file at {path} (try `polter servers import`)")
    else:
        rows = []
        for name, server in servers.items():
            info = live.get(name)
            state = (
                (
                    f"{info.state}, {info.tools} tools, {info.restarts} restarts"
                    + (f": {info.error}" if info.error else "")
                )
                if info
                else "-"
            )
            rows.append([name, server.transport, "yes" if server.enabled else "no", server.describe(), state])
        print_table(["NAME", "TRANSPORT", "ENABLED", "COMMAND / URL", "GATEWAY"], rows)
    for problem in problems:
        print(f"problem: {problem}")
    return 1 if problems else 0


def _check(args: argparse.Namespace) -> int:
    from polter.servers import check_servers

    path = _path(args)
    servers, problems = check_servers(path)
    for problem in problems:
        print(problem)
    if not problems:
        print(f"{path}: {len(servers)} server(s), all valid")
    return 1 if problems else 0


def _import(args: argparse.Namespace) -> int:
    from polter.gateway.importers import SOURCES, append_servers, find_servers

    found, skipped = find_servers(
        home=args.home, project=args.project, clients=tuple(args.clients) if args.clients else SOURCES
    )
    if args.json:
        print_json(
            {
                "found": [
                    {
                        "name": s.name,
                        "client": s.client,
                        "source": str(s.source),
                        "transport": s.config.transport,
                        **s.config.model_dump(),
                    }
                    for s in found
                ],
                "skipped": [
                    {"name": s.name, "client": s.client, "source": str(s.source), "why": s.why} for s in skipped
                ],
            }
        )
    else:
        if found:
            print_table(
                ["NAME", "FROM", "TRANSPORT", "COMMAND / URL", "FILE"],
                [[s.name, s.client, s.config.transport, s.config.describe(), s.source] for s in found],
            )
        else:
            print("no MCP servers found in Claude Code, Codex or Gemini CLI configs")
        for skip in skipped:
            print(f"skipped {skip.name} ({skip.client}, {skip.source}): {skip.why}")
    path = _path(args)
    if args.write:
        added = append_servers(path, found)
        print(f"wrote {len(added)} new server(s) to {path}" + (f": {', '.join(added)}" if added else ""))
    elif found and not args.json:
        print(f"\nnothing written; run again with --write to add them to {path}")
    return 0


def _reload(args: argparse.Namespace) -> int:

    report = with_admin(args, lambda client: client.reload_servers())
    if args.json:
        print_json(report.model_dump(mode="json"))
    else:
        for problem in report.problems:
            print(f"problem: {problem}")
        if not report.applied:
            print(f"{report.file}: nothing changed; fix the problems above")
        else:
            changes = [
                f"{verb}: {', '.join(names)}"
                for verb, names in (
                    ("added", report.added),
                    ("removed", report.removed),
                    ("restarted", report.reconfigured),
                    ("unchanged", report.unchanged),
                )
                if names
            ]
            print(f"{report.file}: " + ("; ".join(changes) if changes else "no servers"))
    return 0 if report.applied else 1
