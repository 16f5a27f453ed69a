"""``polter adapters``: the CLI adapters Polter found, with the versions installed; ``show`` one adapter with
the skills it would load; ``new NAME`` scaffolds a plugin for another CLI."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "adapters",
        help="list the AI CLI adapters and the CLI versions installed",
        description="List the adapter plugins (bundled, from entry points, and from the user's plugin folder), "
        "whether each CLI is installed and which version. Plugins that fail to load are reported with the "
        "reason (exit code 1).",
    )
    parser.add_argument("--json", action="store_true", help="one JSON object with adapters and errors")
    parser.set_defaults(handler=_list)
    commands = parser.add_subparsers(dest="adapters_command", metavar="COMMAND")

    show = commands.add_parser("show", help="one adapter: what it does, what bypasses Polter, the skills it sees")
    show.add_argument("name")
    show.add_argument("--cwd", type=Path, default=None, help="project folder whose skills to list (default: here)")
    show.add_argument("--json", action="store_true")
    show.set_defaults(handler=_show)

    new = commands.add_parser("new", help="scaffold an adapter plugin for another CLI, with a test")
    new.add_argument("name", help="the adapter's name, e.g. my-cli")
    new.add_argument("--dir", type=Path, default=None, help="where to write it (default: the user's plugin folder)")
    new.add_argument("--force", action="store_true", help="overwrite an existing plugin of that name")
    new.set_defaults(handler=_new)


def _registry() -> Any:
    from polter.adapters.plugins import discover

    return discover()


def _list(args: argparse.Namespace) -> int:
    from concurrent.futures import ThreadPoolExecutor

    registry = _registry()
    loaded = list(registry)
    with ThreadPoolExecutor(max_workers=8) as pool:
        detections = list(pool.map(lambda item: item.adapter.detect(), loaded))
    if args.json:
        rows = [
            {
                "name": item.adapter.name,
                "display_name": item.adapter.display_name,
                "source": item.source,
                "origin": item.origin,
                "installed": detection.installed,
                "version": detection.version,
                "path": str(detection.path) if detection.path else None,
                "error": detection.error,
                "mcp_liveness": item.adapter.info.mcp_liveness.value,
                "skills_liveness": item.adapter.info.skills_liveness.value,
                "tested_versions": list(item.adapter.info.tested_versions),
            }
            for item, detection in zip(loaded, detections, strict=True)
        ]
        errors = [{"path": error.path, "error": str(error)} for error in registry.errors]
        print(json.dumps({"adapters": rows, "errors": errors}, indent=2))
    else:
        table = [("NAME", "CLI", "VERSION", "MCP", "SKILLS", "SOURCE")]
        for item, detection in zip(loaded, detections, strict=True):
            if not detection.installed:
                version = "not installed"
            else:
                version = detection.version or f"? ({detection.error})"
            info = item.adapter.info
            table.append(
                (
                    info.name,
                    info.display_name,
                    version,
                    info.mcp_liveness.value,
                    info.skills_liveness.value,
                    item.source,
                )
            )
        widths = [max(len(row[column]) for row in table) for column in range(len(table[0]))]
        for row in table:
            print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
        for error in registry.errors:
            print(f"polter: plugin not loaded: {error}", file=sys.stderr)
    return 1 if registry.errors else 0


def _show(args: argparse.Namespace) -> int:
    registry = _registry()
    adapter = registry.get(args.name)
    origin = registry.loaded[args.name]
    cwd = (args.cwd or Path.cwd()).resolve()
    detection = adapter.detect()
    skills = adapter.skills(cwd)
    if args.json:
        print(
            json.dumps(
                {
                    "info": adapter.info.model_dump(mode="json"),
                    "source": origin.source,
                    "origin": origin.origin,
                    "detection": detection.model_dump(mode="json"),
                    "skills": [skill.model_dump(mode="json") for skill in skills],
                },
                indent=2,
            )
        )
        return 0
    info = adapter.info
    version = detection.version if detection.installed else "not installed"
    print(f"{info.display_name} ({info.name}) — {info.description}".rstrip(" —"))
    print(f"  plugin:     {origin.origin} ({origin.source})")
    print(f"  installed:  {version}" + (f" at {detection.path}" if detection.path else ""))
    print(f"  proven on:  {', '.join(info.tested_versions) or 'no version'}")
    print(f"  role changes reach it: MCP {info.mcp_liveness.value}, skills {info.skills_liveness.value}")
    print(f"  veto hook:  {'tool calls' if info.tool_veto else 'none'}{' and skills' if info.skill_veto else ''}")
    print("  still bypasses Polter:")
    for limitation in info.limitations:
        print(f"    - {limitation}")
    print(f"  skills it would load in {cwd}:" if skills else f"  no skills found for {cwd}")
    for skill in skills:
        print(f"    {skill.name:<28} {skill.scope:<9} {skill.path or skill.origin}")
    return 0


def _new(args: argparse.Namespace) -> int:
    from polter.adapters.plugins import scaffold_adapter, user_plugins_dir

    directory = args.dir or user_plugins_dir()
    written = scaffold_adapter(args.name, directory, force=args.force)
    for path in written:
        print(f"wrote {path}")
    print(
        f"next: fill in the TODOs, then run `pytest {written[0].parent}`; `polter adapters` lists it"
        + ("" if args.dir is None else f" once it is in {user_plugins_dir()}")
    )
    return 0
