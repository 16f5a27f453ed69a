"""Simulated region and group commands."""

from __future__ import annotations

from polter.backends.terraria.simulator.chat import Context, paginate
from polter.backends.terraria.simulator.world import Group, Region

# regions, groups ---------------------------------------------------------------------------------


def cmd_region(ctx: Context) -> None:
    w = ctx.world
    sub = ctx.args[0].lower() if ctx.args else "help"
    args = ctx.args[1:]

    def region(name: str) -> Region | None:
        found = next((r for r in w.regions if r.name == name), None)
        if found is None:
            ctx.reply.append(
                f"Could not find the region {name}." if sub != "info" else 'Invalid region "' + name + '".'
            )
        return found

    if sub == "list":
        paginate(
            ctx,
            [r.name for r in w.regions],
            args[0] if args else None,
            "Regions ({0}/{1}):",
            "Type /region list {0} for more.",
            "There are currently no regions defined.",
        )
    elif sub == "info" and args:
        r = region(args[0])
        if r:
            ctx.reply += [
                f'Information About Region "{r.name}" (1/1):',
                f"X: {r.x}; Y: {r.y}; W: {r.width}; H: {r.height}, Z: {r.z}",
                f"Region owner: {r.owner}.",
                f"Protected: {r.protected}.",
                f"Shared with: {', '.join(r.users)}." if r.users else "Region is not shared with any users.",
                f"Shared with groups: {', '.join(r.groups)}." if r.groups else "Region is not shared with any groups.",
            ]
    elif sub == "protect" and len(args) == 2 and args[1].lower() in ("true", "false"):
        r = region(args[0])
        if r:
            r.protected = args[1].lower() == "true"
            ctx.reply.append(f"Marked region {r.name} as {'protected' if r.protected else 'unprotected'}.")
    elif sub == "delete" and args:
        r = region(args[0])
        if r:
            w.regions.remove(r)
            ctx.reply.append(f'Deleted region "{r.name}".')
    elif sub in ("allow", "remove", "allowg", "removeg") and len(args) == 2:
        who, name = args
        is_group = sub.endswith("g")
        if (who not in w.groups) if is_group else (w.account(who) is None):
            ctx.reply.append(f"Group {who} not found." if is_group else f"Player {who} not found.")
            return
        r = region(name)
        if r:
            kind, members = ("group", r.groups) if is_group else ("user", r.users)
            if sub.startswith("allow"):
                if who not in members:
                    members.append(who)
                ctx.reply.append(f"Added {kind} {who} to {r.name}.")
            else:
                members[:] = [m for m in members if m != who]
                ctx.reply.append(f"Removed {kind} {who} from {r.name}{'' if is_group else '.'}")  # sic
    elif sub in ("define", "set", "name", "tp"):
        ctx.reply.append(
            "Region points need to be defined first. Use /region set 1 and /region set 2."
            if sub == "define"
            else "You must use this command in-game."
        )
    else:
        ctx.reply.append("Invalid syntax. Proper syntax: /region <command> [arguments].")


def cmd_group(ctx: Context) -> None:
    w = ctx.world
    sub = ctx.args[0].lower() if ctx.args else "help"
    args = ctx.args[1:]
    if sub == "add" and args:
        if args[0] in w.groups:
            ctx.reply.append("A group with the same name already exists.")
            return
        w.groups[args[0]] = Group(args[0], None, list(args[1:]))
        ctx.reply.append(f"Group {args[0]} was added successfully.")
    elif sub in ("addperm", "delperm") and len(args) >= 2:
        targets = list(w.groups.values()) if args[0] == "*" else [w.groups[args[0]]] if args[0] in w.groups else []
        if not targets:
            ctx.reply.append(f"Group {args[0]} does not exist.")
            return
        for group in targets:
            for permission in args[1:]:
                if sub == "addperm":
                    if permission.startswith("!"):
                        group.negated.append(permission[1:]) if permission[1:] not in group.negated else None
                    elif permission not in group.permissions:
                        group.permissions.append(permission)
                else:
                    group.permissions = [p for p in group.permissions if p != permission]
                    group.negated = [p for p in group.negated if f"!{p}" != permission]
        name = "All groups" if args[0] == "*" else f"Group {args[0]}"
        ctx.reply.append(f"{name} {'have' if args[0] == '*' else 'has'} been modified successfully.")
    elif sub == "del" and args:
        if args[0] not in w.groups:
            ctx.reply.append(f"Group {args[0]} doesn't exist.")
            return
        del w.groups[args[0]]
        ctx.reply.append(f"Group {args[0]} has been deleted successfully.")
    elif sub == "list":
        paginate(
            ctx,
            list(w.groups),
            args[0] if args else None,
            "Groups ({0}/{1}):",
            "Type /group list {0} for more.",
            "There are currently no groups defined.",
        )
    else:
        ctx.reply.append("Invalid syntax. Proper syntax: /group <command> [arguments].")
