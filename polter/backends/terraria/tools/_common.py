"""What the tools' modules share: their annotations, quoting a TShock command's argument, reading a paged reply."""

from __future__ import annotations

import re

from mcp.types import ToolAnnotations

__all__ = ["ACTS", "DESTRUCTIVE", "READ_ONLY", "parse_page", "quote"]

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
ACTS = ToolAnnotations(read_only_hint=False, destructive_hint=False, open_world_hint=False)
DESTRUCTIVE = ToolAnnotations(read_only_hint=False, destructive_hint=True, open_world_hint=False)


def quote(argument: str) -> str:
    """One command argument for TShock's parser: double quotes, ``\\"`` inside."""
    return '"' + argument.replace('"', '\\"') + '"'


_PAGE_HEADER = re.compile(r"^(?P<what>.+) \((?P<page>\d+)/(?P<pages>\d+)\):$")


def parse_page(lines: list[str], empty: str) -> dict[str, object]:
    """A ``PaginationTools`` reply (``Regions (1/2):``, packed lines, ``Type … for more.``) as data."""
    if not lines or lines[0] == empty:
        return {"page": 1, "pages": 1, "items": []}
    header = _PAGE_HEADER.match(lines[0])
    if header is None:
        raise ValueError(f"unexpected reply from TShock: {' / '.join(lines)}")
    body = [line for line in lines[1:] if not line.startswith("Type ")]
    items = [term.strip() for line in body for term in line.split(",") if term.strip()]
    return {"page": int(header["page"]), "pages": int(header["pages"]), "items": items}
