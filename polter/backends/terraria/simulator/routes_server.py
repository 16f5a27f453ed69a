"""Simulated REST routes for tokens, the server, the world and online players."""

from __future__ import annotations

from collections.abc import Callable

from polter.backends.terraria.items import item_table
from polter.backends.terraria.simulator.commands import run_command
from polter.backends.terraria.simulator.envelope import (
    BAD_LOGIN,
    Body,
    Call,
    error,
    invalid,
    missing,
    ok,
    parse_bool,
)
from polter.backends.terraria.simulator.world import SUPERADMIN, ItemStack, Player, Token, World

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
            return {
                "status": "500",
                "error": "Internal server error.",
                "errormsg": "Value cannot be null. (Parameter 'stringToUnescape')",
                "stacktrace": "   at System.Uri.UnescapeDataString(String stringToUnescape)\n"
                "   at TShockAPI.Rest.SecureRest.NewToken(RestRequestArgs args)",
            }
        account = world.account(username)
        if (
            account is None
            or account.password_hash != world.hash_password(password)
            or not (account.group == SUPERADMIN or world.has_permission(account.group, "tshock.rest.useapi"))
        ):
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
    summary: Body = {
        "nickname": player.name,
        "username": player.account or "",
        "group": player.group,
        "active": True,
        "state": 10,
        "team": player.team,
    }
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
    body = ok(
        name=config.name,
        serverversion=config.server_version,
        tshockversion=config.tshock_version,
        port=config.port,
        playercount=len(world.players),
        maxplayers=config.max_players,
        world=world.world_name,
        uptime=world.uptime(),
        serverpassword=config.server_password,
    )
    if parse_bool(call.params.get("players")):
        view_ips = call.token is not None and world.has_permission(call.token.group, "tshock.rest.viewips")
        body["players"] = filtered_players(call, view_ips)
    if parse_bool(call.params.get("rules")):
        body["rules"] = {
            "AutoSave": world.autosave,
            "DisableBuild": False,
            "DisableClownBombs": False,
            "DisableDungeonGuardian": False,
            "DisableInvisPvP": False,
            "DisableSnowBalls": False,
            "DisableTombstones": True,
            "EnableWhitelist": False,
            "HardcoreOnly": False,
            "PvPMode": "normal",
            "SpawnProtection": True,
            "SpawnProtectionRadius": 10,
            "ServerSideInventory": False,
        }
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


# world -------------------------------------------------------------------------------------------


def world_read(call: Call) -> Body:
    w = call.world
    return ok(
        name=w.world_name,
        size=f"{w.max_tiles_x}*{w.max_tiles_y}",
        time=w.time,
        daytime=w.daytime,
        bloodmoon=w.bloodmoon,
        invasionsize=w.invasion_size,
    )


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
    return ok(
        hardmode=w.hardmode,
        raining=w.raining,
        slimerain=w.slime_rain,
        bloodmoon=w.bloodmoon,
        eclipse=w.eclipse,
        fullmoon=w.full_moon,
        sandstorm=w.sandstorm,
        lanternnight=w.lantern_night,
        invasion=w.invasion_type,
        wind=round(w.wind * 60, 2),
        gamemode=w.game_mode,
    )


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
    return {
        "nickname": player.name,
        "username": player.account or "",
        "ip": player.ip,
        "group": player.group,
        "registered": account.registered.strftime("%Y-%m-%dT%H:%M:%S") if account else None,
        "muted": player.muted,
        "position": f"{player.tile_x},{player.tile_y}",
        "buffs": ", ".join(str(b) for b in buffs),
    }


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
        return [
            {"netID": s.net_id, "prefix": s.prefix, "stack": s.stack} if s else {"netID": 0, "prefix": 0, "stack": 0}
            for s in slots
        ]

    body = ok(**player_common(call, player))
    body["items"] = {
        "inventory": stacks(player.inventory),
        "equipment": stacks(player.armor),
        "dyes": stacks(player.dyes),
        "piggy": [],
        "safe": [],
        "forge": [],
    }
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
