"""The bundled Terraria item table: id ↔ English, internal and (where known) Chinese names, offline.

TShock has no item-lookup route, and ``/give`` does its own matching, so both ``item_lookup`` and the
simulator's ``/give`` resolve names here. Matching follows TShock's ``GetItemByIdOrName``: a numeric
id, then an exact name (case-insensitive), then a single "starts with" match, then "starts with"
plus "contains" candidates.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources

__all__ = ["Item", "ItemTable", "item_table"]


@dataclass(frozen=True, slots=True)
class Item:
    id: int
    name: str
    internal_name: str
    name_zh: str | None

    def names(self) -> tuple[str, ...]:
        return tuple(name for name in (self.name, self.internal_name, self.name_zh) if name)


class ItemTable:
    """All items of one game version, indexed by id and by every name."""

    def __init__(self, items: list[Item], game_version: str) -> None:
        self.game_version = game_version
        self._by_id = {item.id: item for item in items}
        self._items = items

    def __len__(self) -> int:
        return len(self._items)

    def by_id(self, item_id: int) -> Item | None:
        return self._by_id.get(item_id)

    def find(self, query: str) -> list[Item]:
        """Candidates for ``query`` in TShock's order; one element means an unambiguous match."""
        text = query.strip()
        if text.lstrip("-").isdigit():
            item = self.by_id(int(text))
            return [item] if item else []
        folded = text.casefold()
        exact = [item for item in self._items if any(name.casefold() == folded for name in item.names())]
        if exact:
            return exact[:1]  # TShock takes the first exact match (e.g. the many "Treasure Bag"s)
        starts = [item for item in self._items if any(n.casefold().startswith(folded) for n in item.names())]
        if len(starts) == 1:
            return starts
        contains = [item for item in self._items if any(folded in n.casefold() for n in item.names())]
        seen: dict[int, Item] = {item.id: item for item in starts}
        for item in contains:
            seen.setdefault(item.id, item)
        return list(seen.values())


@cache
def item_table() -> ItemTable:
    """The table shipped in ``data/items.json`` (loaded once per process)."""
    raw = json.loads(resources.files(__package__).joinpath("data/items.json").read_text(encoding="utf-8"))
    items = [Item(id=row[0], name=row[1], internal_name=row[2], name_zh=row[3]) for row in raw["items"]]
    return ItemTable(items, raw["game_version"])
