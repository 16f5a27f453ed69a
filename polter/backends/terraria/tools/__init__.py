"""The 46 tools, grouped by what they touch. Each module's ``register(server, backend)`` adds its tools.

Annotations follow the catalogue in ``docs/terraria.md``: 17 read-only tools, 29 acting ones, of
which the irreversible or disruptive are marked destructive. They are hints for clients and
policies; a role's deny list is still the way to be sure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from polter.backends.terraria.tools import admin, events, players, research, world
from polter.backends.terraria.tools._common import ACTS, DESTRUCTIVE, READ_ONLY, parse_page, quote

if TYPE_CHECKING:
    from polter.backends.terraria.server import Backend, TerrariaServer

__all__ = ["ACTS", "DESTRUCTIVE", "READ_ONLY", "parse_page", "quote", "register_all"]


def register_all(server: TerrariaServer, backend: Backend) -> None:
    for module in (research, world, players, admin, events):
        module.register(server, backend)
