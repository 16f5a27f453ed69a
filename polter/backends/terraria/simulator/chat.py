"""What every simulated chat command shares: the caller's context, the command record, paging.

A handler writes lines for the REST caller to ``ctx.reply`` and announcements to
``world.broadcast`` (which rawcmd never returns: that is why many commands answer ``[]``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from polter.backends.terraria.simulator.world import Player, World

__all__ = ["MULTIPLE_MATCH", "Command", "CommandFailed", "Context", "Handler", "paginate"]

MULTIPLE_MATCH = [
    'Use "my query" for items with spaces.',
    "Use tsi:[number] or tsn:[username] to distinguish between user IDs and usernames.",
]


class CommandFailed(Exception):
    """A handler crashed the way TShock's does (e.g. ``/ban add`` from REST); rawcmd says "check logs"."""


@dataclass
class Context:
    world: World
    name: str
    """The REST caller's name (the token's username) as announcements show it."""
    group: str
    silent: bool
    args: list[str]
    reply: list[str] = field(default_factory=list)

    def allowed(self, permission: str) -> bool:
        return self.world.has_permission(self.group, permission)

    def announce(self, message: str) -> None:
        """Broadcast unless silent; a silent command tells only its caller."""
        if self.silent:
            self.reply.append(message)
        else:
            self.world.broadcast(message)

    def player_arg(self, needed: int, syntax: str) -> Player | None:
        """The common start of a player command: at least ``needed`` arguments, the first a player."""
        if len(self.args) < needed:
            self.reply.append(f"Invalid syntax. Proper syntax: {syntax}")
            return None
        return self.one_player(self.args[0])

    def one_player(self, query: str, not_found: str = "Invalid player!") -> Player | None:
        players = self.world.find_players(query)
        if not players:
            self.reply.append(not_found)
            return None
        if len(players) > 1:
            self.reply.append("More than one match found -- unable to decide which is correct: ")
            self.reply.append(", ".join(p.name for p in players))
            self.reply.extend(MULTIPLE_MATCH)
            return None
        return players[0]


Handler = Callable[[Context], None]


@dataclass(frozen=True)
class Command:
    names: tuple[str, ...]
    permission: str | None
    handler: Handler
    allow_server: bool = True


def paginate(ctx: Context, terms: list[str], page_arg: str | None, header: str, footer: str, nothing: str) -> None:
    """``PaginationTools.SendPage`` to a non-player: terms packed into ~80-char lines, 4 lines a page."""
    if not terms:
        ctx.reply.append(nothing)
        return
    page = int(page_arg) if page_arg and page_arg.isdigit() and int(page_arg) > 0 else 1
    lines: list[str] = []
    current = ""
    for term in terms:
        piece = f"{term}, "
        if current and len(current) + len(piece) > 80:
            lines.append(current)
            current = ""
        current += piece
    lines.append(current.removesuffix(", "))
    pages = (len(lines) + 3) // 4
    page = min(page, pages)
    ctx.reply.append(header.format(page, pages))
    ctx.reply.extend(lines[(page - 1) * 4 : page * 4])
    if page < pages:
        ctx.reply.append(footer.format(page + 1))
