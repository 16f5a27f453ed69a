"""Shared plumbing for the admin commands (``panes``, ``asks``, ``audit``, ``gateway status``).

Each finds the running gateway through ``gateway.json`` in the state dir (``--state-dir``, default
Polter's) and talks to its control API with the admin token stored there.
"""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from polter.errors import HumanOnly

if TYPE_CHECKING:
    from polter.gateway.client import GatewayClient

T = TypeVar("T")


def add_state_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--state-dir",
        type=Path,
        metavar="DIR",
        help="the gateway's state dir (default: Polter's state dir, or $POLTER_STATE_DIR)",
    )


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def refuse_inside_pane(what: str) -> None:
    """The controls are the human's: from inside a pane's sandbox they are refused, whatever was copied there."""

    from polter.paths import ENV_SANDBOX

    if os.environ.get(ENV_SANDBOX):
        raise HumanOnly(
            f"{what} is the human's, and this runs inside a pane's sandbox: a pane cannot reach Polter's controls "
            "(the control API, the sessions' sockets). `polter tools` shows what this pane may do."
        )


def with_admin(args: argparse.Namespace, action: Callable[[GatewayClient], Awaitable[T]]) -> T:
    """Run ``action`` with a control-API client for the gateway of ``args.state_dir`` (never from a pane)."""
    from polter.gateway.client import GatewayClient

    refuse_inside_pane(f"`polter {getattr(args, 'command', None) or 'admin'}` (the control API)")

    async def run() -> T:
        async with GatewayClient.from_state(args.state_dir) as client:
            return await action(client)

    import asyncio  # lazy: `polter relay NAME`, which checks it is not in a pane, starts without asyncio

    return asyncio.run(run())


def print_json(value: Any) -> None:
    from pydantic import BaseModel

    if isinstance(value, BaseModel):
        print(value.model_dump_json(indent=2))
    elif isinstance(value, list):
        print(
            json.dumps(
                [item.model_dump(mode="json") if isinstance(item, BaseModel) else item for item in value],
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        print(json.dumps(value, indent=2, ensure_ascii=False))


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> None:
    """A plain aligned table (no colours: these commands are read by scripts and humans alike)."""
    cells = [
        [str(header) for header in headers],
        *[["" if cell is None else str(cell) for cell in row] for row in rows],
    ]
    widths = [max(len(row[index]) for row in cells) for index in range(len(headers))]
    for row in cells:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
