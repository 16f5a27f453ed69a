"""Shared plumbing for the admin commands (``panes``, ``asks``, ``audit``, ``gateway status``).

Each finds the running gateway through ``gateway.json`` in the state dir (``--state-dir``, default
Polter's) and talks to its control API with the admin token stored there.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import textwrap
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from polter.errors import HumanOnly
from polter.printable import printable

if TYPE_CHECKING:
    from polter.gateway.client import GatewayClient

T = TypeVar("T")

MIN_WRAPPED = 16
"""The narrowest the last column wraps to; a terminal with less room for it than this lets the lines run on."""


def add_state_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--state-dir",
        type=Path,
        metavar="DIR",
        help="the gateway's state dir (default: Polter's state dir, or $POLTER_STATE_DIR)",
    )


def add_json(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def list_by_default(
    group: argparse.ArgumentParser,
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    listing: argparse.ArgumentParser,
) -> None:
    """``polter GROUP`` alone runs ``polter GROUP list`` with its defaults (as ``git remote`` lists), instead of
    an error that a command is required; call it once ``listing`` has all its options."""
    commands.required = False
    group.set_defaults(**vars(listing.parse_args([])))
    group.description = " ".join(filter(None, [group.description, "Alone, it lists (`list`)."]))


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


def print_table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, width: int | None = None) -> None:
    """A plain aligned table (no colours: these commands are read by scripts and humans alike). On a terminal
    (or given ``width``), the last column's text wraps under itself to fit: a pane is often narrower than a
    table of reasons, and the terminal's own wrapping would run it into the first column. Piped, a row stays
    one line, for scripts."""
    cells = [
        [str(header) for header in headers],
        *[["" if cell is None else printable(str(cell), one_line=True) for cell in row] for row in rows],
    ]
    widths = [max(len(row[index]) for row in cells) for index in range(len(headers))]
    if width is None and sys.stdout.isatty():
        width = shutil.get_terminal_size().columns
    last_column = sum(widths[:-1]) + 2 * (len(widths) - 1)
    room = (width or 0) - last_column
    for row in cells:
        leading = [cell.ljust(column) for cell, column in zip(row[:-1], widths[:-1], strict=True)]
        pieces = [row[-1]]
        if room >= MIN_WRAPPED and len(row[-1]) > room:  # words only: a path or a URL is never cut
            pieces = textwrap.wrap(row[-1], room, break_long_words=False, break_on_hyphens=False) or pieces
        print("  ".join([*leading, pieces[0]]).rstrip())
        for piece in pieces[1:]:
            print(" " * last_column + piece)
