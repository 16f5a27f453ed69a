"""Simulated REST routes for accounts, bans and groups."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from polter.backends.terraria.simulator.envelope import (
    Body,
    Call,
    error,
    invalid,
    missing,
    ok,
    parse_bool,
)
from polter.backends.terraria.simulator.world import SUPERADMIN, Ban, Group
from polter.backends.terraria.text import DOTNET_MAX_TICKS, datetime_to_ticks

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
    return {
        "ticket_number": ban.ticket,
        "identifier": ban.identifier,
        "reason": ban.reason,
        "banning_user": ban.banning_user,
        "start_date_ticks": ban.start_ticks,
        "end_date_ticks": ban.end_ticks,
    }


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
        return error(
            500, "Failed to add ban. The ban is invalid because a current ban for this identifier already exists."
        )
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


# groups ------------------------------------------------------------------------------------------


def colour(group: Group) -> str:
    return ",".join(f"{part:03d}" for part in group.chatcolor)


def parse_colour(value: str) -> tuple[int, int, int] | None:
    parts = value.split(",")
    if len(parts) != 3 or not all(p.strip().isdigit() and int(p) < 256 for p in parts):
        return None
    return int(parts[0]), int(parts[1]), int(parts[2])


def groups_list(call: Call) -> Body:
    return ok(
        groups=[{"name": g.name, "parent": g.parent or "", "chatcolor": colour(g)} for g in call.world.groups.values()]
    )


def find_group(call: Call) -> Group | Body:
    name = call.param("group")
    if name is None:
        return missing("group")
    return call.world.groups.get(name) or error(400, f"Group {name} doesn't exist")


def groups_read(call: Call) -> Body:
    group = find_group(call)
    if isinstance(group, dict):
        return group
    return ok(
        name=group.name,
        parent=group.parent or "",
        chatcolor=colour(group),
        permissions=list(group.permissions),
        negatedpermissions=list(group.negated),
        totalpermissions=call.world.total_permissions(group.name),
    )


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
    group = Group(
        name,
        parent,
        [p for p in permissions if not p.startswith("!")],
        [p[1:] for p in permissions if p.startswith("!")],
    )
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
