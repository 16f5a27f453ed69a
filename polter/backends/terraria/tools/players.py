"""Acting on players: items, kicks, bans, mutes, kills, healing, god mode, buffs, teleports, spawns."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Annotated, Literal

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from polter.backends.terraria.tools._common import ACTS, DESTRUCTIVE, quote
from polter.backends.terraria.tools.research import PlayerName
from polter.errors import TShockError

if TYPE_CHECKING:
    from polter.backends.terraria.server import Backend, TerrariaServer

DURATION = re.compile(r"^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")
BAN_PREFIX = {"account": "acc", "name": "name", "ip": "ip", "uuid": "uuid"}


def parse_duration(text: str) -> timedelta:
    """``7d``, ``12h``, ``1d12h``, ``30m``, ``90s`` → a timedelta."""
    found = DURATION.match(text.strip().lower())
    if not text.strip() or found is None or not any(found.groups()):
        raise ToolError(f"duration {text!r} is not like 7d, 12h, 1d12h, 30m or 90s")
    days, hours, minutes, seconds = (int(part or 0) for part in found.groups())
    return timedelta(days=days, hours=hours, minutes=minutes, seconds=seconds)


def register(server: TerrariaServer, backend: Backend) -> None:
    tshock = backend.tshock

    async def online_player(query: str) -> dict[str, object] | None:
        try:
            return await tshock.get("/v4/players/read", player=query)
        except TShockError:
            return None

    @server.tool(annotations=ACTS, structured_output=False)
    async def give_item(
        player: PlayerName,
        item: Annotated[str, Field(min_length=1, max_length=100, description="item name or id")],
        amount: Annotated[int | None, Field(ge=1, le=9999, description="default: a full stack")] = None,
        prefix: Annotated[str | None, Field(max_length=32, description="prefix name or id, e.g. Legendary")] = None,
    ) -> str:
        """Give an item to an online player (names in English, internal or Chinese are resolved offline)."""
        matches = backend.items.find(item)
        item_arg = str(matches[0].id) if len(matches) == 1 else item  # an id is unambiguous for TShock
        command = f"/give {quote(item_arg)} {quote(player)}"
        if amount is not None or prefix is not None:
            command += f" {amount or 0}"
        if prefix is not None:
            command += f" {quote(prefix)}"
        return (await tshock.command(command, expect=r"^Gave "))[0]

    @server.tool(annotations=DESTRUCTIVE, structured_output=False)
    async def player_kick(player: PlayerName, reason: Annotated[str | None, Field(max_length=200)] = None) -> str:
        """Disconnect a player from the server (they may rejoin)."""
        return (await tshock.get("/v2/players/kick", player=player, reason=reason))["response"]

    @server.tool(annotations=DESTRUCTIVE, structured_output=False)
    async def player_ban(
        target: Annotated[
            str, Field(min_length=1, max_length=100, description="online player, account name, IP or UUID")
        ],
        kind: Literal["account", "name", "ip", "uuid"] = "account",
        reason: Annotated[str | None, Field(max_length=200)] = None,
        duration: Annotated[str | None, Field(description="e.g. 7d, 12h, 1d12h; omit for permanent")] = None,
    ) -> str:
        """Ban by account, character name, IP or UUID, permanently or for a duration; an online player
        matching the ban is kicked. An online player's name (or name prefix) is resolved to their account,
        full name or IP; otherwise the target is taken as the account, name, IP or UUID itself."""
        value = target
        if kind == "account":
            try:
                await tshock.get("/v2/users/read", user=target)  # an account of that name wins
            except TShockError as missing:
                online = await online_player(target)
                if online is None:
                    raise missing
                value = str(online["username"] or "")
                if not value:
                    raise ToolError(f"{online['nickname']} is not logged in to an account; ban by name or ip") from None
        elif kind in ("ip", "name"):  # an online player's full name or address; else taken as given
            online = await online_player(target)
            if online is not None:
                value = str(online["ip"] if kind == "ip" else online["nickname"])
        end = None
        if duration is not None:
            end = (datetime.now(UTC) + parse_duration(duration)).strftime("%Y-%m-%dT%H:%M:%SZ")
        reply = await tshock.get("/v3/bans/create", identifier=f"{BAN_PREFIX[kind]}:{value}", reason=reason, end=end)
        return f"{reply['response']} ({BAN_PREFIX[kind]}:{value}, {'until ' + end if end else 'permanent'})"

    @server.tool(annotations=ACTS, structured_output=False)
    async def player_unban(
        ticket: Annotated[int, Field(ge=1)],
        full_delete: Annotated[bool, Field(description="erase the record instead of expiring it")] = False,
    ) -> str:
        """Lift a ban by its ticket number (see ban_list)."""
        return (await tshock.get("/v3/bans/destroy", ticketNumber=ticket, fullDelete=full_delete))["response"]

    @server.tool(annotations=ACTS, structured_output=False)
    async def player_mute(player: PlayerName, muted: bool = True) -> str:
        """Mute or unmute a player's chat."""
        path = "/v2/players/mute" if muted else "/v2/players/unmute"
        return (await tshock.get(path, player=player))["response"]

    @server.tool(annotations=DESTRUCTIVE, structured_output=False)
    async def player_kill(
        player: PlayerName,
        from_name: Annotated[str | None, Field(max_length=64, description="shown as the killer")] = None,
    ) -> str:
        """Kill a player (they drop coins, and items in mediumcore or hardcore)."""
        return (await tshock.get("/v2/players/kill", player=player, **{"from": from_name}))["response"]

    @server.tool(annotations=ACTS, structured_output=False)
    async def player_heal(
        player: PlayerName, amount: Annotated[int | None, Field(ge=1, le=10000, description="default: full")] = None
    ) -> str:
        """Heal a player fully, or by an amount of HP."""
        command = f".heal {quote(player)}{f' {amount}' if amount else ''}"
        return (await tshock.command(command, expect=r"^You healed "))[0].replace("You healed", "Healed", 1)

    @server.tool(annotations=ACTS, structured_output=False)
    async def player_godmode(
        player: PlayerName,
        enabled: Annotated[bool | None, Field(description="the state you want; omit to toggle")] = None,
    ) -> str:
        """Turn god mode (no damage) on or off for a player."""
        pattern = r"^(.+) is (now|no longer) in god mode\.$"
        line = (await tshock.command(f"/godmode {quote(player)}", expect=pattern))[0]
        state = re.match(pattern, line)  # the command waited for a line that matches
        if enabled is not None and state is not None and (state[2] == "now") != enabled:
            line = (await tshock.command(f"/godmode {quote(player)}", expect=pattern))[0]
        return line

    @server.tool(annotations=ACTS, structured_output=False)
    async def player_buff(
        player: PlayerName,
        buff: Annotated[str, Field(min_length=1, max_length=64, description="buff name or id")],
        seconds: Annotated[int | None, Field(ge=1, le=35791394)] = None,
    ) -> str:
        """Give a player a buff for some seconds (default 60)."""
        command = f"/gbuff {quote(player)} {quote(buff)}{f' {seconds}' if seconds else ''}"
        return (await tshock.command(command, expect=r"^You have buffed "))[0]

    @server.tool(annotations=ACTS, structured_output=False)
    async def player_teleport(player: PlayerName, warp: Annotated[str, Field(min_length=1, max_length=64)]) -> str:
        """Teleport a player to a named warp (see warp_list): the only teleport TShock allows over REST."""
        return (await tshock.command(f"/warp send {quote(player)} {quote(warp)}", expect=r"^You warped "))[0]

    @server.tool(annotations=ACTS, structured_output=False)
    async def npc_spawn(
        npc: Annotated[str, Field(min_length=1, max_length=64, description="mob or boss name")],
        amount: Annotated[int, Field(ge=1, le=200)] = 1,
        boss: bool = False,
    ) -> str:
        """Spawn mobs or a boss. Vanilla TShock refuses this over REST ("You must use this command in-game");
        it works only with a plugin that allows it. The error says so."""
        command = "/spawnboss" if boss else "/spawnmob"
        await tshock.command(f"{command} {quote(npc)} {amount}", silent_ok=True)
        return f"Spawned {amount} × {npc}."
