"""``polter tools`` and ``polter call``: from inside a pane, see and use what the pane's role allows.

Both talk to the gateway exactly as the pane's agent does: the official MCP client, the pane's token
(``$POLTER_TOKEN``) and URL (``$POLTER_GATEWAY_URL``). ``polter tools`` asks the floor server's
``whoami``; ``polter call`` goes through the same policy as any agent call.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import Any

from polter.cli._admin import print_table
from polter.errors import ConfigError
from polter.printable import printable


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    tools = subparsers.add_parser(
        "tools",
        help="list what this pane can see and call, with reasons",
        description="Run inside a Polter pane: this pane's role, phase, and every "
        "server, tool and skill with its decision and the reason.",
    )
    tools.add_argument("--json", action="store_true", help="print whoami's JSON")
    tools.set_defaults(handler=_tools)

    call = subparsers.add_parser(
        "call",
        help="call SERVER/TOOL through the gateway, as this pane",
        description="Run inside a Polter pane: call one tool through the gateway (the role decides, asks are asked).",
    )
    call.add_argument("target", metavar="SERVER/TOOL")
    call.add_argument("arguments", metavar="JSON", nargs="?", default="{}", help="the arguments as a JSON object")
    call.add_argument("--json", action="store_true", help="print the whole result as JSON")
    call.set_defaults(handler=_call)


def _run(coroutine: Any) -> Any:

    return asyncio.run(coroutine)


def _tools(args: argparse.Namespace) -> int:
    from polter.gateway.client import pane_client
    from polter.gateway.models import Capabilities

    async def whoami() -> Capabilities:
        async with pane_client("polter") as client:
            result = await client.call_tool("whoami", {})
        return Capabilities.model_validate(result.structured_content)

    capabilities = _run(whoami())
    if args.json:
        print(capabilities.model_dump_json(indent=2))
    else:
        print_capabilities(capabilities)
    return 0


def print_capabilities(capabilities: Any) -> None:
    """Human-readable whoami: one line per server and tool, decision first, then why."""

    title = f' "{capabilities.title}"' if capabilities.title else ""
    phase = f", phase {capabilities.phase}" if capabilities.phase else ""
    print(printable(f"pane {capabilities.pane}{title}: role {capabilities.role}{phase}"))
    if capabilities.description:
        print(printable(f"  {capabilities.description.splitlines()[0]}"))
    for note in capabilities.notes:
        print(printable(f"  note: {note}"))
    rows: list[list[str]] = []
    for server in capabilities.servers:
        state = "" if server.state == "running" else f" ({server.state})"
        rows.append([f"{server.name}{state}", server.decision, "", server.reason])
        for tool in server.tools:
            rows.append([f"  {server.name}/{tool.name}", tool.decision, "yes" if tool.visible else "no", tool.reason])
    if capabilities.skills:
        rows.append(["skills", "", "", ""])
        rows.extend([f"  {skill.name}", skill.decision, "", skill.reason] for skill in capabilities.skills)
    print()
    print_table(["SERVER/TOOL", "DECISION", "LISTED", "WHY"], rows)


def _call(args: argparse.Namespace) -> int:
    from polter.gateway.client import pane_client

    server, _, tool = args.target.partition("/")
    if not server or not tool:
        raise ConfigError("name the tool as SERVER/TOOL, e.g. time/get_current_time", field="SERVER/TOOL")
    try:
        arguments = json.loads(args.arguments)
    except json.JSONDecodeError as exc:
        raise ConfigError(f"not JSON: {exc.msg} (column {exc.colno})", field="JSON") from None
    if not isinstance(arguments, dict):
        raise ConfigError("the arguments must be a JSON object", field="JSON")

    async def call() -> Any:
        async with pane_client(server) as client:
            return await client.call_tool(tool, arguments)

    result = _run(call())
    if args.json:
        print(result.model_dump_json(by_alias=True, exclude_none=True, indent=2))
    else:
        for block in result.content:
            print(getattr(block, "text", None) or block.model_dump_json(by_alias=True, exclude_none=True))
    if result.is_error:
        print(f"polter: {args.target} returned an error", file=sys.stderr)
        return 1
    return 0
