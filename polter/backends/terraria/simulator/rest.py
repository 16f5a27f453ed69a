"""TShock 5.2's REST API over a :class:`World`: routes, tokens, the login rate limit and the envelope.

Faithful where a client can tell: any HTTP method, query-string or form parameters, a string
``"status"`` equal to the HTTP status, pretty-printed JSON, TShock's exact error texts, redirects with
``upgrade`` fields, and the known quirks (read-only ``/v3/world/bloodmoon``, ``killfriendly``
effectively required, no player-ban route).
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from polter.backends.terraria.items import item_table
from polter.backends.terraria.simulator.commands import run_command
from polter.backends.terraria.simulator.world import SUPERADMIN, Ban, Group, ItemStack, Player, Token, World
from polter.backends.terraria.text import DOTNET_MAX_TICKS, datetime_to_ticks

__all__ = ["create_app"]

log = logging.getLogger("polter.terraria.sim")

Body = dict[str, Any]

NOT_FOUND = "Specified API endpoint doesn't exist. Refer to the documentation for a list of valid endpoints."
NO_TOKEN = "Not authorized. The specified API endpoint requires a token."
BAD_TOKEN = "Not authorized. The specified API endpoint requires a token, but the provided token was not valid."
GROUP_GONE = "Not authorized. The provided token became invalid due to group changes, please create a new token."
BAD_LOGIN = ("Username or password may be incorrect or this account may not have sufficient privileges.")


def ok(response: Any = None, **fields: Any) -> Body:
    body: Body = {"status": "200"}
    if response is not None:
        body["response"] = response
    body.update(fields)
    return body


def error(status: int, message: str) -> Body:
    return {"status": str(status), "error": message}


def missing(*names: str) -> Body:
    return error(400, f"Missing or empty {', '.join(names)} parameter")


def invalid(name: str) -> Body:
    return error(400, f"Missing or invalid {name} parameter")


def parse_bool(value: str | None) -> bool | None:
    """.NET ``bool.TryParse``: ``true``/``false`` in any case, anything else fails."""
    if value is None:
        return None
    return {"true": True, "false": False}.get(value.strip().lower())


@dataclass
class Call:
    world: World
    params: dict[str, str]
    verbs: dict[str, str]
    token: Token | None
    ip: str

    def param(self, name: str) -> str | None:
        value = self.params.get(name)
        return value if value else None


@dataclass(frozen=True)
class Endpoint:
    path: str
    handler: Callable[[Call], Body]
    permissions: tuple[str, ...] = ()
    token: bool = True
    status_route: bool = False
    """Needs a token only when ``EnableTokenEndpointAuthentication`` is on."""

    @property
    def pattern(self) -> re.Pattern[str] | None:
        if "{" not in self.path:
            return None
        return re.compile("^" + re.sub(r"\{(\w+)\}", r"(?P<\1>[^/]*)", self.path) + "$")


# tokens ------------------------------------------------------------------------------------------

def token_create(call: Call) -> Body:
    world, ip = call.world, call.ip
    world.drain_rate_buckets()
    bucket = world.rate_buckets.get(ip, 0.0)
    if bucket >= world.config.rest_max_requests:
        world.rate_buckets[ip] = bucket + 1
        return error(403, BAD_LOGIN)
    world.rate_buckets[ip] = bucket + 1
    try:
        username, password = call.params.get("username"), call.params.get("password")
        if username is None or password is None:
            return {"status": "500", "error": "Internal server error.",
                    "errormsg": "Value cannot be null. (Parameter 'stringToUnescape')",
                    "stacktrace": "   at System.Uri.UnescapeDataString(String stringToUnescape)\n"
                                  "   at TShockAPI.Rest.SecureRest.NewToken(RestRequestArgs args)"}
        account = world.account(username)
        if (account is None or account.password_hash != world.hash_password(password)
                or not (account.group == SUPERADMIN or world.has_permission(account.group, "tshock.rest.useapi"))):
            return error(403, BAD_LOGIN)
        token = world.new_token_string()
        world.tokens[token] = Token(account.name, account.group)
        return ok("Successful login", token=token)
    finally:
        world.rate_buckets[ip] = world.rate_buckets.get(ip, 0.0) + 1


def token_destroy(call: Call) -> Body:
    call.world.tokens.pop(call.verbs["token"], None)
    return ok("Requested token was successfully destroyed.")


def token_destroy_all(call: Call) -> Body:
    application = {k: v for k, v in call.world.tokens.items() if k == call.world.application_token}
    call.world.tokens = application
    return ok("All tokens were successfully destroyed.")


def token_test(call: Call) -> Body:
    assert call.token is not None
    return ok("Token is valid and was passed through correctly.", associateduser=call.token.username)


# server ------------------------------------------------------------------------------------------

def player_summary(world: World, player: Player, with_ip: bool) -> Body:
    summary: Body = {"nickname": player.name, "username": player.account or "", "group": player.group,
                     "active": True, "state": 10, "team": player.team}
    if with_ip:
        summary["ip"] = player.ip
    return summary


def filtered_players(call: Call, with_ip: bool) -> list[Body]:
    players = []
    for player in call.world.players:
        summary = player_summary(call.world, player, with_ip)
        # ``player[key].Equals(value)``: a string parameter never equals a bool or an int.
        if all(summary[k] == v for k, v in call.params.items() if k in summary):
            players.append(summary)
    return players


def server_status(call: Call) -> Body:
    world, config = call.world, call.world.config
    body = ok(name=config.name, serverversion=config.server_version, tshockversion=config.tshock_version,
              port=config.port, playercount=len(world.players), maxplayers=config.max_players,
              world=world.world_name, uptime=world.uptime(), serverpassword=config.server_password)
    if parse_bool(call.params.get("players")):
        view_ips = call.token is not None and world.has_permission(call.token.group, "tshock.rest.viewips")
        body["players"] = filtered_players(call, view_ips)
    if parse_bool(call.params.get("rules")):
        body["rules"] = {"AutoSave": world.autosave, "DisableBuild": False, "DisableClownBombs": False,
                         "DisableDungeonGuardian": False, "DisableInvisPvP": False, "DisableSnowBalls": False,
                         "DisableTombstones": True, "EnableWhitelist": False, "HardcoreOnly": False,
                         "PvPMode": "normal", "SpawnProtection": True, "SpawnProtectionRadius": 10,
                         "ServerSideInventory": False}
    return body


def server_motd(call: Call) -> Body:
    return ok(motd=list(call.world.config.motd))


def server_rules(call: Call) -> Body:
    return ok(rules=list(call.world.config.rules))


def server_broadcast(call: Call) -> Body:
    message = call.param("msg")
    if message is None:
        return missing("msg")
    call.world.broadcast(message)
    return ok("The message was broadcasted successfully")


def server_reload(call: Call) -> Body:
    call.world.reloads += 1
    return ok("Configuration, permissions, and regions reload complete. Some changes may require a server restart.")


def server_off(call: Call) -> Body:
    if parse_bool(call.params.get("confirm")) is not True:
        return invalid("confirm")
    world = call.world
    message = call.param("message") or "Server is shutting down"
    if not parse_bool(call.params.get("nosave")):
        world.saves += 1
    for player in list(world.players):
        world.kick(player, message)
    world.running = False
    world.emit("server", None, message, stopping=True)
    return ok("The server is shutting down")


def server_rawcmd(call: Call) -> Body:
    command = call.param("cmd")
    if command is None:
        return missing("cmd")
    assert call.token is not None
    return ok(run_command(call.world, call.token.username, call.token.group, command))


# users -------------------------------------------------------------------------------------------

def users_activelist(call: Call) -> Body:
    return ok(activeusers="\t".join(p.account for p in call.world.players if p.account))


def users_list(call: Call) -> Body:
    return ok(users=[{"name": a.name, "id": a.id, "group": a.group} for a in call.world.accounts.values()])


def find_account(call: Call) -> Any:
    user = call.param("user")
    if user is None:
        return missing("user")
    kind = call.params.get("type", "name")
    if kind == "name":
        account = call.world.account(user)
        return account or error(400, f"User name '{user}' doesn't exist")
    if kind == "id":
        account = call.world.account_by_id(int(user)) if user.isdigit() else None
        return account or error(400, f"User id '{user}' doesn't exist")
    return error(400, f"Invalid Type: '{kind}'")


def users_read(call: Call) -> Body:
    account = find_account(call)
    if isinstance(account, dict):
        return account
    return ok(group=account.group, id=str(account.id), name=account.name)


def users_create(call: Call) -> Body:
    world = call.world
    user, password = call.param("user"), call.param("password")
    if user is None:
        return missing("user")
    if password is None:
        return missing("password")
    group = call.param("group") or "default"
    if world.account(user):
        return error(400, f"User account {user} already exists")
    if group not in world.groups and group != SUPERADMIN:
        return error(400, f"Group {group} does not exist")
    if len(password) < 4:
        return error(400, "Password must be at least 4 characters. (Parameter 'password')")
    world.add_account(user, password, group)
    return ok("User was successfully created")


def users_update(call: Call) -> Body:
    account = find_account(call)
    if isinstance(account, dict):
        return account
    password, group = call.param("password"), call.param("group")
    if password is None and group is None:
        return missing("group", "password")
    body = ok()
    if password is not None:
        account.password_hash = call.world.hash_password(password)
        call.world.passwords[account.name] = password
        body["password-response"] = "Password updated successfully"
    if group is not None:
        if group not in call.world.groups and group != SUPERADMIN:
            return error(400, f"Failed to update user group (Group {group} does not exist)")
        account.group = group
        for player in call.world.players:
            if player.account == account.name:
                player.group = group
        body["group-response"] = "Group updated successfully"
    return body


def users_destroy(call: Call) -> Body:
    account = find_account(call)
    if isinstance(account, dict):
        return account
    del call.world.accounts[account.name]
    return ok("User deleted successfully")


# bans --------------------------------------------------------------------------------------------

def ban_body(ban: Ban) -> Body:
    return {"ticket_number": ban.ticket, "identifier": ban.identifier, "reason": ban.reason,
            "banning_user": ban.banning_user, "start_date_ticks": ban.start_ticks, "end_date_ticks": ban.end_ticks}


def parse_date(value: str | None, default: int) -> int | None:
    if value is None:
        return default
    try:
        return datetime_to_ticks(datetime.fromisoformat(value.replace("Z", "+00:00")))
    except ValueError:
        return None


def bans_create(call: Call) -> Body:
    world = call.world
    identifier = call.param("identifier")
    if identifier is None:
        return missing("identifier")
    now = datetime_to_ticks(world.now())
    start, end = parse_date(call.param("start"), now), parse_date(call.param("end"), DOTNET_MAX_TICKS)
    if start is None:
        return invalid("start")
    if end is None:
        return invalid("end")
    if any(b.identifier == identifier and b.end_ticks > now for b in world.bans):
        return error(500, "Failed to add ban. The ban is invalid because a current ban for this identifier "
                          "already exists.")
    ticket = max((b.ticket for b in world.bans), default=0) + 1
    banning = call.token.username if call.token else "REST"
    reason = call.param("reason") or "Banned"
    world.bans.append(Ban(ticket, identifier, reason, banning, start, end))
    kind, _, value = identifier.partition(":")
    for player in list(world.players):
        if {"acc": player.account, "name": player.name, "ip": player.ip, "uuid": player.uuid}.get(kind) == value:
            world.kick(player, f"You have been banned: {reason}.")
    return ok(f"Ban added. Ticket number: {ticket}")


def bans_list(call: Call) -> Body:
    return ok(bans=[ban_body(b) for b in call.world.bans])


def ticket_of(call: Call) -> int | Body:
    value = call.param("ticketNumber")
    if value is None:
        return missing("ticketNumber")
    if not value.lstrip("-").isdigit():
        return invalid("ticketNumber")
    return int(value)


def bans_read(call: Call) -> Body:
    ticket = ticket_of(call)
    if isinstance(ticket, dict):
        return ticket
    ban = next((b for b in call.world.bans if b.ticket == ticket), None)
    return ok(**ban_body(ban)) if ban else ok("No matching bans found.")


def bans_destroy(call: Call) -> Body:
    ticket = ticket_of(call)
    if isinstance(ticket, dict):
        return ticket
    ban = next((b for b in call.world.bans if b.ticket == ticket), None)
    if ban is None:
        return error(500, "Failed to remove ban.")
    if parse_bool(call.params.get("fullDelete")):
        call.world.bans.remove(ban)
    else:
        ban.end_ticks = datetime_to_ticks(call.world.now())  # expired, kept for the record
    return ok("Ban removed.")


# world -------------------------------------------------------------------------------------------

def world_read(call: Call) -> Body:
    w = call.world
    return ok(name=w.world_name, size=f"{w.max_tiles_x}*{w.max_tiles_y}", time=w.time, daytime=w.daytime,
              bloodmoon=w.bloodmoon, invasionsize=w.invasion_size)


def world_meteor(call: Call) -> Body:
    call.world.meteors += 1
    return ok("Meteor has been spawned")


def verb_setter(verb: str, attribute: str, label: str, upgrade: str) -> Callable[[Call], Body]:
    """The v1/v2 routes that set a world flag from a path verb (``/world/bloodmoon/{bloodmoon}``)."""
    def handler(call: Call) -> Body:
        value = parse_bool(call.verbs.get(verb))
        if value is None:
            return invalid(verb)
        setattr(call.world, attribute, value)
        return ok(f"{label} has been set to {value}", upgrade=upgrade)  # C#'s True/False, as Python's
    return handler


def world_bloodmoon_v3(call: Call) -> Body:
    # TShock reads ``args.Verbs["state"]`` on a route without that verb: it can only report.
    return ok(f"Bloodmoon state: {'Enabled' if call.world.bloodmoon else 'Disabled'}")


def world_save(call: Call) -> Body:
    call.world.saves += 1
    return ok("World saved")


def world_autosave_v3(call: Call) -> Body:
    raw = call.param("state")
    if raw is None:
        return ok(f"Autosave is currently {'enabled' if call.world.autosave else 'disabled'}")
    value = parse_bool(raw)
    if value is None:
        return invalid("state")
    call.world.autosave = value
    return ok(f"AutoSave has been {'enabled' if value else 'disabled'}")


def world_butcher(call: Call) -> Body:
    kill_friendly = parse_bool(call.params.get("killfriendly"))
    if kill_friendly is None:
        return invalid("killfriendly")
    victims = [n for n in call.world.npcs if not n.town and (not n.friendly or kill_friendly)]
    for npc in victims:
        call.world.npcs.remove(npc)
    count = len(victims)
    return ok("1 NPC has been killed." if count == 1 else f"{count} NPCs have been killed.")


def polter_world(call: Call) -> Body:
    """The companion plugin's route: what vanilla REST cannot tell (hardmode above all)."""
    w = call.world
    return ok(hardmode=w.hardmode, raining=w.raining, slimerain=w.slime_rain, bloodmoon=w.bloodmoon,
              eclipse=w.eclipse, fullmoon=w.full_moon, sandstorm=w.sandstorm, lanternnight=w.lantern_night,
              invasion=w.invasion_type, wind=round(w.wind * 60, 2), gamemode=w.game_mode)


# players -----------------------------------------------------------------------------------------

def find_player(call: Call) -> Player | Body:
    query = call.param("player")
    if query is None:
        return missing("player")
    found = call.world.find_players(query)
    if not found:
        return error(400, f"Player {query} was not found")
    if len(found) > 1:
        return error(400, f"Player {query} matches {len(found)} players")
    return found[0]


def lists_players(call: Call) -> Body:
    return ok(players=", ".join(p.name for p in call.world.players), upgrade="/v2/players/list")


def players_list(call: Call) -> Body:
    return ok(players=filtered_players(call, with_ip=False))


def stack_name(stack: ItemStack) -> str:
    item = item_table().by_id(stack.net_id)
    return item.name if item else str(stack.net_id)


def player_common(call: Call, player: Player) -> Body:
    account = call.world.account(player.account) if player.account else None
    buffs = list(player.buffs) + [0] * (44 - len(player.buffs))
    return {"nickname": player.name, "username": player.account or "", "ip": player.ip, "group": player.group,
            "registered": account.registered.strftime("%Y-%m-%dT%H:%M:%S") if account else None,
            "muted": player.muted, "position": f"{player.tile_x},{player.tile_y}",
            "buffs": ", ".join(str(b) for b in buffs)}


def players_read_v3(call: Call) -> Body:
    player = find_player(call)
    if isinstance(player, dict):
        return player
    body = ok(**player_common(call, player))
    body["inventory"] = ", ".join(f"{stack_name(s)}:{s.stack}" for s in player.inventory if s)
    body["armor"] = ", ".join(f"{s.net_id}:{s.prefix}" for s in player.armor if s)
    body["dyes"] = ", ".join(stack_name(s) for s in player.dyes if s)
    return body


def players_read_v4(call: Call) -> Body:
    player = find_player(call)
    if isinstance(player, dict):
        return player

    def stacks(slots: list[ItemStack | None]) -> list[Body]:
        return [{"netID": s.net_id, "prefix": s.prefix, "stack": s.stack} if s else
                {"netID": 0, "prefix": 0, "stack": 0} for s in slots]

    body = ok(**player_common(call, player))
    body["items"] = {"inventory": stacks(player.inventory), "equipment": stacks(player.armor),
                     "dyes": stacks(player.dyes), "piggy": [], "safe": [], "forge": []}
    return body


def players_kick(call: Call) -> Body:
    player = find_player(call)
    if isinstance(player, dict):
        return player
    call.world.kick(player, call.param("reason") or "Kicked via web")
    return ok(f"Player {player.name} was kicked")


def players_kill(call: Call) -> Body:
    player = find_player(call)
    if isinstance(player, dict):
        return player
    player.dead, player.hp = True, 0
    killer = call.param("from") or "Server Admin"
    player.messages.append(f"{killer} just killed you!")
    call.world.emit("death", player.name, f"{player.name} was slain by {killer}.")
    return ok(f"Player {player.name} was killed")


def players_mute(muted: bool) -> Callable[[Call], Body]:
    def handler(call: Call) -> Body:
        player = find_player(call)
        if isinstance(player, dict):
            return player
        player.muted = muted
        return ok(f"Player {player.name} has been {'muted' if muted else 'unmuted'}")
    return handler


# groups ------------------------------------------------------------------------------------------

def colour(group: Group) -> str:
    return ",".join(f"{part:03d}" for part in group.chatcolor)


def parse_colour(value: str) -> tuple[int, int, int] | None:
    parts = value.split(",")
    if len(parts) != 3 or not all(p.strip().isdigit() and int(p) < 256 for p in parts):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


def groups_list(call: Call) -> Body:
    return ok(groups=[{"name": g.name, "parent": g.parent or "", "chatcolor": colour(g)}
                      for g in call.world.groups.values()])


def find_group(call: Call) -> Group | Body:
    name = call.param("group")
    if name is None:
        return missing("group")
    return call.world.groups.get(name) or error(400, f"Group {name} doesn't exist")


def groups_read(call: Call) -> Body:
    group = find_group(call)
    if isinstance(group, dict):
        return group
    return ok(name=group.name, parent=group.parent or "", chatcolor=colour(group),
              permissions=list(group.permissions), negatedpermissions=list(group.negated),
              totalpermissions=call.world.total_permissions(group.name))


def groups_create(call: Call) -> Body:
    world = call.world
    name = call.param("group")
    if name is None:
        return missing("group")
    if name in world.groups:
        return error(400, f"Group {name} already exists")
    parent = call.param("parent")
    if parent is not None and parent not in world.groups:
        return error(400, f"Invalid parent group {parent} for group {name}")
    permissions = [p for p in (call.param("permissions") or "").split(",") if p]
    group = Group(name, parent, [p for p in permissions if not p.startswith("!")],
                  [p[1:] for p in permissions if p.startswith("!")])
    if call.param("chatcolor"):
        group.chatcolor = parse_colour(call.params["chatcolor"]) or group.chatcolor
    world.groups[name] = group
    return ok(f"Group {name} created successfully")


def groups_update(call: Call) -> Body:
    group = find_group(call)
    if isinstance(group, dict):
        return group
    if call.param("parent") is not None:
        group.parent = call.params["parent"]
    if call.param("chatcolor") is not None:
        group.chatcolor = parse_colour(call.params["chatcolor"]) or group.chatcolor
    if call.param("permissions") is not None:
        permissions = [p for p in call.params["permissions"].split(",") if p]
        group.permissions = [p for p in permissions if not p.startswith("!")]
        group.negated = [p[1:] for p in permissions if p.startswith("!")]
    return ok(f"Group {group.name} updated successfully")


def groups_destroy(call: Call) -> Body:
    group = find_group(call)
    if isinstance(group, dict):
        return group
    if group.name == "guest":
        return error(400, "You can't remove the default guest group.")
    del call.world.groups[group.name]
    return ok(f"Group {group.name} deleted successfully")


ENDPOINTS = [
    Endpoint("/v2/token/create", token_create, token=False),
    Endpoint("/token/destroy/{token}", token_destroy),
    Endpoint("/v3/token/destroy/all", token_destroy_all, ("tshock.rest.manage",)),
    Endpoint("/tokentest", token_test),
    Endpoint("/v2/server/status", server_status, status_route=True),
    Endpoint("/v3/server/motd", server_motd, status_route=True),
    Endpoint("/v3/server/rules", server_rules, status_route=True),
    Endpoint("/v2/server/broadcast", server_broadcast, ("tshock.rest.broadcast",)),
    Endpoint("/v3/server/reload", server_reload, ("tshock.rest.cfg",)),
    Endpoint("/v2/server/off", server_off, ("tshock.rest.maintenance",)),
    Endpoint("/v3/server/rawcmd", server_rawcmd, ("tshock.rest.command",)),
    Endpoint("/v2/users/activelist", users_activelist, ("tshock.rest.users.view",)),
    Endpoint("/v2/users/create", users_create, ("tshock.rest.users.manage",)),
    Endpoint("/v2/users/list", users_list, ("tshock.rest.users.view",)),
    Endpoint("/v2/users/read", users_read, ("tshock.rest.users.view",)),
    Endpoint("/v2/users/destroy", users_destroy, ("tshock.rest.users.manage",)),
    Endpoint("/v2/users/update", users_update, ("tshock.rest.users.manage",)),
    Endpoint("/v3/bans/create", bans_create, ("tshock.rest.ban", "tshock.rest.bans.manage")),
    Endpoint("/v3/bans/list", bans_list, ("tshock.rest.bans.view",)),
    Endpoint("/v3/bans/read", bans_read, ("tshock.rest.bans.view",)),
    Endpoint("/v3/bans/destroy", bans_destroy, ("tshock.rest.bans.manage",)),
    Endpoint("/world/read", world_read),
    Endpoint("/world/meteor", world_meteor, ("tshock.rest.causeevents",)),
    Endpoint("/world/bloodmoon/{bloodmoon}", verb_setter("bloodmoon", "bloodmoon", "Blood Moon", "/v3/world/bloodmoon"),
             ("tshock.rest.causeevents",)),
    Endpoint("/v3/world/bloodmoon", world_bloodmoon_v3, ("tshock.rest.causeevents",)),
    Endpoint("/v2/world/save", world_save, ("tshock.rest.cfg",)),
    Endpoint("/v2/world/autosave/state/{state}", verb_setter("state", "autosave", "AutoSave", "/v3/world/autosave"),
             ("tshock.rest.cfg",)),
    Endpoint("/v3/world/autosave", world_autosave_v3, ("tshock.rest.cfg",)),
    Endpoint("/v2/world/butcher", world_butcher, ("tshock.rest.butcher",)),
    Endpoint("/lists/players", lists_players),
    Endpoint("/v2/players/list", players_list),
    Endpoint("/v3/players/read", players_read_v3, ("tshock.rest.users.info",)),
    Endpoint("/v4/players/read", players_read_v4, ("tshock.rest.users.info",)),
    Endpoint("/v2/players/kick", players_kick, ("tshock.rest.kick",)),
    Endpoint("/v2/players/kill", players_kill, ("tshock.rest.kill",)),
    Endpoint("/v2/players/mute", players_mute(True), ("tshock.rest.mute",)),
    Endpoint("/v2/players/unmute", players_mute(False), ("tshock.rest.mute",)),
    Endpoint("/v2/groups/list", groups_list, ("tshock.rest.groups.view",)),
    Endpoint("/v2/groups/read", groups_read, ("tshock.rest.groups.view",)),
    Endpoint("/v2/groups/create", groups_create, ("tshock.rest.groups.manage",)),
    Endpoint("/v2/groups/destroy", groups_destroy, ("tshock.rest.groups.manage",)),
    Endpoint("/v2/groups/update", groups_update, ("tshock.rest.groups.manage",)),
]
PLUGIN_ENDPOINTS = [Endpoint("/polter/v1/world", polter_world)]

REDIRECTS: dict[str, tuple[str, str | None]] = {
    "/status": ("/v2/server/status", None),
    "/token/create": ("/v2/token/create", None),
    "/world/save": ("/v2/world/save", None),
    "/world/autosave": ("/v3/world/autosave", None),
    "/players/read": ("/v3/players/read", "v4/players/read"),
    **{f"/server/{name}": (f"/v{3 if name in ('motd', 'rules', 'rawcmd') else 2}/server/{name}", None)
       for name in ("motd", "rules", "broadcast", "off", "rawcmd")},
    **{f"/users/{name}": (f"/v2/users/{name}", None)
       for name in ("activelist", "create", "list", "read", "destroy", "update")},
    **{f"{prefix}/bans/{name}": (f"/v3/bans/{name}", None)
       for prefix in ("", "/v2") for name in ("create", "list", "read", "destroy") if (prefix, name) != ("/v2", "create")},
    **{f"/players/{name}": (f"/v2/players/{name}", None) for name in ("list", "kick", "kill", "mute", "unmute")},
    **{f"/groups/{name}": (f"/v2/groups/{name}", None) for name in ("list", "read", "create", "destroy", "update")},
}


class TShockRest:
    """Route matching and ``SecureRest.ExecuteCommand``'s token checks over one world."""

    def __init__(self, world: World) -> None:
        self.world = world
        endpoints = ENDPOINTS + (PLUGIN_ENDPOINTS if world.config.companion_plugin else [])
        self.fixed = {e.path.lower(): e for e in endpoints if e.pattern is None}
        self.templated = [(e.pattern, e) for e in endpoints if e.pattern is not None]

    def match(self, path: str) -> tuple[Endpoint, dict[str, str]] | None:
        endpoint = self.fixed.get(path.lower())
        if endpoint is not None:
            return endpoint, {}
        for pattern, templated in self.templated:
            assert pattern is not None
            found = pattern.match(path)
            if found:
                return templated, {k: v for k, v in found.groupdict().items()}
        return None

    def handle(self, path: str, params: dict[str, str], ip: str) -> Body:
        path = path.rstrip("/") or "/"
        upgrade: str | None = None
        if path.lower() in REDIRECTS:
            path, upgrade = REDIRECTS[path.lower()]
        matched = self.match(path)
        if matched is None:
            return error(404, NOT_FOUND)
        endpoint, verbs = matched
        call = Call(self.world, params, verbs, None, ip)
        needs_token = endpoint.token and (not endpoint.status_route
                                          or self.world.config.token_endpoint_authentication)
        if needs_token or (endpoint.status_route and params.get("token") in self.world.tokens):
            refusal = self.authorise(call, endpoint)
            if refusal is not None and needs_token:
                return refusal
        try:
            body = endpoint.handler(call)
        except Exception as exc:  # TShock's 500 body
            return {"status": "500", "error": "Internal server error.", "errormsg": str(exc),
                    "stacktrace": f"   at {endpoint.handler.__name__}"}
        if upgrade is not None:
            body["upgrade"] = upgrade
        return body

    def authorise(self, call: Call, endpoint: Endpoint) -> Body | None:
        token = call.params.get("token")
        if token is None:
            return error(401, NO_TOKEN)
        data = self.world.tokens.get(token)
        if data is None:
            return error(403, BAD_TOKEN)
        if data.group != SUPERADMIN and data.group not in self.world.groups:
            del self.world.tokens[token]
            return error(403, GROUP_GONE)
        if endpoint.permissions and not any(self.world.has_permission(data.group, p) for p in endpoint.permissions):
            return error(403, f'Not authorized. User "{data.username}" has no access to use the specified API '
                              "endpoint.")
        call.token = data
        return None


async def deliver_events(world: World) -> None:
    """Post what happened since the last delivery to the event intake, as the companion plugin would."""
    assert world.config.events_url is not None
    pending = world.events[world.events_sent:]
    headers = {"Authorization": f"Bearer {world.config.events_secret}"} if world.config.events_secret else {}
    try:
        async with httpx.AsyncClient(timeout=5) as http:
            reply = await http.post(world.config.events_url, json=pending, headers=headers)
        if reply.status_code != 202:
            log.warning("event intake refused %d events: HTTP %d %s", len(pending), reply.status_code, reply.text)
    except httpx.HTTPError as exc:
        log.warning("cannot post %d events to %s: %s", len(pending), world.config.events_url, exc)
    world.events_sent += len(pending)  # a plugin does not queue forever either


def create_app(world: World) -> Starlette:
    """An ASGI app serving ``world`` the way TShock's REST listener would."""
    rest = TShockRest(world)

    async def endpoint(request: Request) -> Response:
        params = {k: v for k, v in request.query_params.multi_items()}
        if request.headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            form = await request.form()
            params.update({k: str(v) for k, v in form.multi_items()})
        ip = request.client.host if request.client else "127.0.0.1"
        body = rest.handle(request.url.path, params, ip)
        if world.config.companion_plugin and world.config.events_url and world.events_sent < len(world.events):
            await deliver_events(world)
        text = json.dumps(body, indent=2, ensure_ascii=False)
        if params.get("jsonp"):
            text = f"{params['jsonp']}({text});"
        return Response(text, status_code=int(body["status"]), media_type="application/json; charset=utf-8",
                        headers={"Server": f"TShockAPI/{world.config.tshock_version}", "Connection": "close"})

    methods = ["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]
    app = Starlette(routes=[Route("/{path:path}", endpoint, methods=methods)])
    app.state.world = world
    return app
