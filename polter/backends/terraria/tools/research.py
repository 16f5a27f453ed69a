"""The 17 read-only tools: status, world, players, accounts, bans, groups, regions, warps, wiki, items."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated, Any, Literal

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from polter.backends.terraria.text import game_time_to_clock, strip_colour_tags, ticks_to_datetime
from polter.backends.terraria.tools._common import READ_ONLY, parse_page, quote
from polter.errors import BackendError, TShockError

if TYPE_CHECKING:
    from polter.backends.terraria.server import Backend, TerrariaServer

Json = dict[str, Any]
PlayerName = Annotated[str, Field(min_length=1, max_length=64, description="Player name, name prefix, or tsi:<slot>")]
GAME_MODES = {0: "normal", 1: "expert", 2: "master", 3: "journey"}
ACCOUNT_LINE = re.compile(
    r"^.+?'s (?P<what>last login occurred|group is|last known IP is|register date is) "
    r"(?P<value>.+?)\.?$"
)
ACCOUNT_FIELDS = {"last login occurred": "last_login", "last known IP is": "last_ip", "register date is": "registered"}


def body_of(reply: Json) -> Json:
    return {k: v for k, v in reply.items() if k != "status"}


def key_values(lines: list[str]) -> Json:
    """``Memory usage: 123`` lines → ``{"memory_usage": "123"}``."""
    found: Json = {}
    for line in lines:
        key, sep, value = line.partition(": ")
        if sep:
            found[re.sub(r"\W+", "_", key.strip().lower()).strip("_")] = value.strip()
    return found


async def companion_state(backend: Backend) -> Json | None:
    """The companion plugin's world state (hardmode, weather), or ``None`` on vanilla TShock."""
    try:
        return body_of(await backend.tshock.get("/polter/v1/world"))
    except TShockError as exc:
        if exc.status == 404:
            return None
        raise


def ban_view(ban: Json) -> Json:
    start = ticks_to_datetime(int(ban["start_date_ticks"]))
    end = ticks_to_datetime(int(ban["end_date_ticks"]))
    return {
        "ticket": ban["ticket_number"],
        "identifier": ban["identifier"],
        "reason": ban["reason"],
        "banned_by": ban["banning_user"],
        "start": start.isoformat() if start else None,
        "end": end.isoformat() if end else "never (permanent)",
        "active": end is None or end > datetime.now(UTC),
    }


def register(server: TerrariaServer, backend: Backend) -> None:
    tshock = backend.tshock

    @server.tool(annotations=READ_ONLY)
    async def server_status(include_players: bool = True, include_rules: bool = False) -> Json:
        """Server name, TShock and Terraria versions, uptime, player count and limit, password flag;
        optionally the online players and the server's rules settings."""
        return body_of(await tshock.get("/v2/server/status", players=include_players, rules=include_rules))

    @server.tool(annotations=READ_ONLY)
    async def server_info() -> Json:
        """Host diagnostics (memory, processor time, OS, CPU count, machine) and the TShock version."""
        info = key_values(await tshock.rawcmd("/serverinfo"))
        version = await tshock.rawcmd("/version")
        info["tshock"] = version[0].removeprefix("TShock: ").rstrip(".") if version else None
        return info

    @server.tool(annotations=READ_ONLY)
    async def server_motd() -> Json:
        """The message of the day and the server rules text players see."""
        result: Json = {}
        for key, path in (("motd", "/v3/server/motd"), ("rules", "/v3/server/rules")):
            try:
                result[key] = [strip_colour_tags(str(line)) for line in (await tshock.get(path))[key]]
            except TShockError as exc:
                if exc.status != 500:  # 500: TShock has no motd.txt / rules.txt
                    raise
                result[key] = None
                result[f"{key}_missing"] = str(exc)
        return result

    @server.tool(annotations=READ_ONLY)
    async def world_info() -> Json:
        """World name, size, in-game time (hh:mm), day or night, blood moon, invasion size, seed, id and
        difficulty mode; with the Polter companion plugin also hardmode and the weather."""
        world = body_of(await tshock.get("/world/read"))
        hour, minute = game_time_to_clock(float(world["time"]), bool(world["daytime"]))
        details = key_values(await tshock.rawcmd("/worldinfo"))
        mode = int(details["mode"]) if details.get("mode", "").isdigit() else None
        info: Json = {
            "name": world["name"],
            "size": world["size"].replace("*", "x"),
            "time": f"{hour:02d}:{minute:02d}",
            "daytime": world["daytime"],
            "bloodmoon": world["bloodmoon"],
            "invasion_size": world["invasionsize"],
            "seed": details.get("seed"),
            "id": details.get("id"),
            "mode": GAME_MODES.get(mode, details.get("mode")) if mode is not None else None,
        }
        state = await companion_state(backend)
        if state is None:
            info["hardmode"] = None
            info["hardmode_note"] = "unknown: vanilla TShock's REST API does not report hardmode"
        else:
            info.update(state)
        return info

    @server.tool(annotations=READ_ONLY)
    async def player_list(group: Annotated[str | None, Field(description="only players in this group")] = None) -> Json:
        """Online players with their account, group and team."""
        players = (await tshock.get("/v2/players/list", group=group))["players"]
        return {"count": len(players), "players": players}

    @server.tool(annotations=READ_ONLY)
    async def player_info(player: PlayerName) -> Json:
        """One online player's details: IP, account, group, mute, position, inventory, equipment and buffs."""
        data = body_of(await tshock.get("/v4/players/read", player=player))
        items = data.pop("items", {})

        def named(slots: list[Json]) -> list[Json]:
            found = []
            for slot in slots:
                if slot.get("netID"):
                    item = backend.items.by_id(int(slot["netID"]))
                    found.append(
                        {
                            "item": item.name if item else slot["netID"],
                            "id": slot["netID"],
                            "stack": slot["stack"],
                            "prefix": slot["prefix"],
                        }
                    )
            return found

        data["inventory"] = named(items.get("inventory", []))
        data["equipment"] = named(items.get("equipment", []))
        data["dyes"] = named(items.get("dyes", []))
        data["buffs"] = [int(b) for b in str(data.get("buffs", "")).split(", ") if b.strip().isdigit() and int(b)]
        return data

    @server.tool(annotations=READ_ONLY)
    async def user_list() -> Json:
        """Every registered account (id, name, group) and which are online now."""
        users = (await tshock.get("/v2/users/list"))["users"]
        online = [name for name in (await tshock.get("/v2/users/activelist"))["activeusers"].split("\t") if name]
        return {
            "count": len(users),
            "online": online,
            "users": [{**user, "online": user["name"] in online} for user in users],
        }

    @server.tool(annotations=READ_ONLY)
    async def user_info(
        user: Annotated[str, Field(min_length=1, max_length=64)], by: Literal["name", "id"] = "name"
    ) -> Json:
        """One account: id, name, group, plus last login, last IP and registration date."""
        data = body_of(await tshock.get("/v2/users/read", user=user, type=by))
        try:
            lines = await tshock.rawcmd(f"/accountinfo {quote(data['name'])}")
        except TShockError as exc:
            data["account_details_unavailable"] = str(exc)
            return data
        for line in lines:
            found = ACCOUNT_LINE.match(line)
            if found and found["what"] != "group is":
                data[ACCOUNT_FIELDS[found["what"]]] = found["value"]
        return data

    @server.tool(annotations=READ_ONLY)
    async def ban_list(active_only: bool = False) -> Json:
        """All bans: ticket, identifier (acc:/name:/ip:/uuid:), reason, who banned, start and end (ISO)."""
        bans = [ban_view(ban) for ban in (await tshock.get("/v3/bans/list"))["bans"]]
        if active_only:
            bans = [ban for ban in bans if ban["active"]]
        return {"count": len(bans), "bans": bans}

    @server.tool(annotations=READ_ONLY)
    async def ban_info(ticket: Annotated[int, Field(ge=1, description="the ban's ticket number")]) -> Json:
        """One ban by its ticket number."""
        data = await tshock.get("/v3/bans/read", ticketNumber=ticket)
        if "ticket_number" not in data:
            raise ToolError(f"there is no ban with ticket number {ticket}")
        return ban_view(data)

    @server.tool(annotations=READ_ONLY)
    async def group_list() -> Json:
        """Every group with its parent and chat colour."""
        return body_of(await tshock.get("/v2/groups/list"))

    @server.tool(annotations=READ_ONLY)
    async def group_info(group: Annotated[str, Field(min_length=1, max_length=64)]) -> Json:
        """A group's own, negated and total (inherited) permissions."""
        return body_of(await tshock.get("/v2/groups/read", group=group))

    @server.tool(annotations=READ_ONLY)
    async def region_list(page: Annotated[int, Field(ge=1, le=1000)] = 1) -> Json:
        """Region names in the current world, one page at a time."""
        found = parse_page(await tshock.rawcmd(f"/region list {page}"), "There are currently no regions defined.")
        return {"page": found["page"], "pages": found["pages"], "regions": found["items"]}

    @server.tool(annotations=READ_ONLY)
    async def region_info(region: Annotated[str, Field(min_length=1, max_length=64)]) -> Json:
        """A region's bounds, owner, protection and the users and groups it is shared with."""
        lines = await tshock.command(f"/region info {quote(region)}", expect=r"^Information About Region")
        info: Json = {"name": region, "users": [], "groups": []}
        for line in lines[1:]:
            bounds = re.match(r"X: (-?\d+); Y: (-?\d+); W: (\d+); H: (\d+), Z: (-?\d+)", line)
            if bounds:
                info.update(zip(("x", "y", "width", "height", "z"), map(int, bounds.groups()), strict=True))
            elif line.startswith("Region owner: "):
                info["owner"] = line.removeprefix("Region owner: ").rstrip(".")
            elif line.startswith("Protected: "):
                info["protected"] = line.removeprefix("Protected: ").rstrip(".") == "True"
            elif line.startswith("Shared with groups: "):
                info["groups"] = line.removeprefix("Shared with groups: ").rstrip(".").split(", ")
            elif line.startswith("Shared with: "):
                info["users"] = line.removeprefix("Shared with: ").rstrip(".").split(", ")
        return info

    @server.tool(annotations=READ_ONLY)
    async def warp_list(page: Annotated[int, Field(ge=1, le=1000)] = 1) -> Json:
        """Public warp names: the places player_teleport can send a player."""
        found = parse_page(await tshock.rawcmd(f"/warp list {page}"), "There are currently no warps defined.")
        return {"page": found["page"], "pages": found["pages"], "warps": found["items"]}

    @server.tool(annotations=READ_ONLY.model_copy(update={"open_world_hint": True}))
    async def wiki_search(
        query: Annotated[str, Field(min_length=1, max_length=200)],
        limit: Annotated[int, Field(ge=1, le=20)] = 5,
        lang: Literal["en", "zh"] = "en",
        summary: Annotated[bool, Field(description="also fetch the best hit's intro")] = False,
    ) -> Json:
        """Search the Terraria wiki (terraria.wiki.gg): titles, snippets and URLs; optionally the first
        result's introduction. Says so clearly when the wiki cannot be reached."""
        total, hits = await backend.wiki.search(query, limit, lang)
        result: Json = {"query": query, "total_hits": total, "results": hits}
        if summary and hits:
            result["summary"] = {"title": hits[0]["title"], "text": await backend.wiki.summary(hits[0]["title"], lang)}
        return result

    @server.tool(annotations=READ_ONLY)
    async def item_lookup(
        name_or_id: Annotated[
            str, Field(min_length=1, max_length=100, description="item id, or English/internal/Chinese name")
        ],
        limit: Annotated[int, Field(ge=1, le=50)] = 10,
        stats: Annotated[bool, Field(description="also fetch stats from the wiki")] = False,
    ) -> Json:
        """Resolve an item name (English, internal or Chinese) or id to its id and names, offline from
        the bundled table (Terraria 1.4.4.9); optionally basic stats from the wiki's Cargo table."""
        items = backend.items.find(name_or_id)
        result: Json = {
            "query": name_or_id,
            "matches": len(items),
            "game_version": backend.items.game_version,
            "items": [
                {"id": i.id, "name": i.name, "internal_name": i.internal_name, "name_zh": i.name_zh}
                for i in items[:limit]
            ],
        }
        if not items:
            result["note"] = "no item has that id or a name containing it"
        if stats and len(items) == 1:
            try:
                result["stats"] = await backend.wiki.item_stats(items[0].id)
            except BackendError as exc:  # the offline answer stands; say why the stats are missing
                result["stats_unavailable"] = str(exc)
        return result
