"""Simulated player and account commands: give, whisper, heal, god mode, buffs, warps, account
info, bans, kicks and kills."""

from __future__ import annotations

from polter.backends.terraria.items import item_table
from polter.backends.terraria.simulator.chat import MULTIPLE_MATCH, CommandFailed, Context, paginate

PREFIXES = {
    name.lower(): number
    for number, name in enumerate(
        "Large Massive Dangerous Savage Sharp Pointy Tiny Terrible Small Dull Unhappy Bulky Shameful Heavy "
        "Light Sighted Rapid Hasty Intimidating Deadly Staunch Awful Lethargic Awkward Powerful Mystic Adept "
        "Masterful Inept Ignorant Deranged Intense Taboo Celestial Furious Keen Superior Forceful Broken "
        "Damaged Shoddy Quick Deadly2 Agile Nimble Murderous Slow Sluggish Lazy Annoying Nasty Manic Hurtful "
        "Strong Unpleasant Weak Ruthless Frenzying Godly Demonic Zealous Hard Guarding Armored Warding Arcane "
        "Precise Lucky Jagged Spiked Angry Menacing Brisk Fleeting Hasty2 Quick2 Wild Rash Intrepid Violent "
        "Legendary Unreal Mythical Legendary2".split(),
        start=1,
    )
}
BUFFS = {
    1: ("Obsidian Skin", "Immune to lava"),
    2: ("Regeneration", "Provides life regeneration"),
    3: ("Swiftness", "25% increased movement speed"),
    4: ("Gills", "Breathe water instead of air"),
    5: ("Ironskin", "Increase defense by 8"),
    6: ("Mana Regeneration", "Increased mana regeneration"),
    7: ("Magic Power", "20% increased magic damage"),
    8: ("Featherfall", "Press UP or DOWN to control speed of descent"),
    9: ("Spelunker", "Shows the location of treasure and ore"),
    10: ("Invisibility", "Grants invisibility"),
    11: ("Shine", "Emitting light"),
    12: ("Night Owl", "Increased night vision"),
    13: ("Battle", "Increased enemy spawn rate"),
    14: ("Thorns", "Attackers also take damage"),
    15: ("Water Walking", "Press DOWN to enter water"),
    16: ("Archery", "20% increased arrow damage and speed"),
    17: ("Hunter", "Shows the location of enemies"),
    18: ("Gravitation", "Press UP to reverse gravity"),
}


# players -----------------------------------------------------------------------------------------


def cmd_give(ctx: Context) -> None:
    if len(ctx.args) < 2:
        ctx.reply.append("Invalid syntax. Proper syntax: /give <item type/id> <player> [item amount] [prefix id/name]")
        return
    if not ctx.args[0]:
        ctx.reply.append("Missing item name/id.")
        return
    items = item_table().find(ctx.args[0])
    if not items:
        ctx.reply.append("Invalid item type!")
        return
    if len(items) > 1:
        ctx.reply.append("More than one match found -- unable to decide which is correct: ")
        ctx.reply.append(", ".join(f"{i.name}({i.id})" for i in items[:10]))
        ctx.reply.extend(MULTIPLE_MATCH)
        return
    item = items[0]
    player = ctx.one_player(ctx.args[1])
    if player is None:
        return
    amount = int(ctx.args[2]) if len(ctx.args) > 2 and ctx.args[2].isdigit() else 0
    max_stack = 9999 if item.id not in (4956, 757, 273, 1, 50) else 1
    amount = max_stack if amount <= 0 or amount > max_stack else amount
    prefix = 0
    if len(ctx.args) > 3:
        arg = ctx.args[3].lower()
        prefix = int(arg) if arg.isdigit() else PREFIXES.get(arg, 0)
    if not player.give(item, amount, prefix):
        ctx.reply.append("Player does not have free slots!")
        return
    plural = "s" if amount > 1 and not item.name.endswith("s") else ""
    ctx.reply.append(f"Gave {player.name} {amount} {item.name}{plural}.")
    player.messages.append(f"{ctx.name} gave you {amount} {item.name}{plural}.")


def cmd_whisper(ctx: Context) -> None:
    player = ctx.player_arg(2, "/whisper <player> <text>.")
    if player is None:
        return
    message = " ".join(ctx.args[1:])
    ctx.reply.append(f"<To {player.name}> {message}")
    player.messages.append(f"<From {ctx.name}> {message}")


def cmd_heal(ctx: Context) -> None:
    player = ctx.player_arg(1, "/heal <player> [amount].")
    if player is None:
        return
    if player.dead:
        ctx.reply.append("You can't heal a dead player!")
        return
    amount = int(ctx.args[1]) if len(ctx.args) > 1 and ctx.args[1].isdigit() else player.max_hp
    player.hp = min(player.max_hp, player.hp + amount)
    ctx.announce(
        f"You healed {player.name} for {amount} HP."
        if ctx.silent
        else f"{ctx.name} healed {player.name} for {amount} HP."
    )


def cmd_godmode(ctx: Context) -> None:
    if not ctx.args:
        ctx.reply.append("You can't god mode a non player!")
        return
    player = ctx.one_player(ctx.args[0])
    if player is None:
        return
    player.godmode = not player.godmode
    ctx.reply.append(f"{player.name} is {'now' if player.godmode else 'no longer'} in god mode.")


def cmd_gbuff(ctx: Context) -> None:
    player = ctx.player_arg(2, "/gbuff <player> <buff id/name> [time(seconds)]")
    if player is None:
        return
    query = ctx.args[1]
    if query.isdigit():
        buff_id = int(query)
        if buff_id not in BUFFS:
            ctx.reply.append("Invalid buff ID!")
            return
    else:
        found = [bid for bid, (name, _) in BUFFS.items() if name.lower() == query.lower()] or [
            bid for bid, (name, _) in BUFFS.items() if name.lower().startswith(query.lower())
        ]
        if not found:
            ctx.reply.append(f'Unable to find any buff named "{query}"')
            return
        buff_id = found[0]
    seconds = 60
    if len(ctx.args) > 2:
        try:
            seconds = int(ctx.args[2])
        except ValueError:
            seconds = 60
    if seconds < 0 or seconds > 35791394:
        seconds = 35791394
    player.buffs[buff_id] = seconds
    name, description = BUFFS[buff_id]
    ctx.reply.append(f"You have buffed {player.name} with {name} ({description}) for {seconds} seconds!")


def cmd_warp(ctx: Context) -> None:
    w = ctx.world
    sub = ctx.args[0].lower() if ctx.args else "list"
    if sub == "list":
        paginate(
            ctx,
            [warp.name for warp in w.warps],
            ctx.args[1] if len(ctx.args) > 1 else None,
            "Warps ({0}/{1}):",
            "Type /warp list {0} for more.",
            "There are currently no warps defined.",
        )
    elif sub == "send":
        if len(ctx.args) < 3:
            ctx.reply.append("Invalid syntax. Proper syntax: /warp send [player] [warpname].")
            return
        if not ctx.allowed("tshock.tp.others"):
            ctx.reply.append("You do not have permission to warp other players.")
            return
        player = ctx.one_player(ctx.args[1])
        if player is None:
            return
        warp = next((x for x in w.warps if x.name == ctx.args[2]), None)
        if warp is None:
            ctx.reply.append(f"The destination warp, {ctx.args[2]}, was not found.")
            return
        player.tile_x, player.tile_y = warp.x, warp.y
        ctx.reply.append(f"You warped {player.name} to {warp.name}.")
        player.messages.append(f"{ctx.name} warped you to {warp.name}.")
    else:
        ctx.reply.append("You must use this command in-game.")


def cmd_accountinfo(ctx: Context) -> None:
    if not ctx.args:
        ctx.reply.append("Invalid syntax. Proper syntax: /accountinfo <username>.")
        return
    name = " ".join(ctx.args)
    account = ctx.world.account(name)
    if account is None:
        ctx.reply.append(f"User {name} does not exist.")
        return
    ctx.reply.append(f"{account.name}'s last login occurred {account.last_accessed:%m/%d/%Y %H:%M:%S} +00:00.")
    ctx.reply.append(f"{account.name}'s group is {account.group}.")
    if account.known_ips:
        ctx.reply.append(f"{account.name}'s last known IP is {account.known_ips[-1]}.")
    ctx.reply.append(f"{account.name}'s register date is {account.registered:%m/%d/%Y %H:%M:%S} +00:00.")


def cmd_ban(ctx: Context) -> None:
    sub = ctx.args[0].lower() if ctx.args else "help"
    if sub == "list":
        active = [b for b in ctx.world.bans]
        if not active:
            ctx.reply.append("There are currently no active bans.")
            return
        ctx.reply.append("Bans (1/1):")
        ctx.reply += [f"[[c/AAFFAA:{b.ticket}]] [c/FF0000:{b.identifier}]" for b in active]
    elif sub in ("add", "del"):
        if sub == "del" and len(ctx.args) > 1 and ctx.args[1].isdigit():  # removed, then the reply crashes
            ctx.world.bans = [b for b in ctx.world.bans if b.ticket != int(ctx.args[1])]
        raise CommandFailed("the REST player has no account")  # both dereference Player.Account
    else:
        ctx.reply.append("Invalid syntax. Proper syntax: /ban <add/del/list/details> [arguments]")


def cmd_kick(ctx: Context) -> None:
    if not ctx.args:
        ctx.reply.append("Invalid syntax. Proper syntax: /kick <player> [reason].")
        return
    players = ctx.world.find_players(ctx.args[0])
    if len(players) != 1:
        ctx.reply.append(
            "Player not found. Unable to kick the player."
            if not players
            else "More than one match found -- unable to decide which is correct: "
        )
        return
    reason = " ".join(ctx.args[1:]) or "Misbehaviour."
    ctx.world.kick(players[0], reason)
    ctx.world.broadcast(f"{ctx.name} kicked {players[0].name} for '{reason}'")


def cmd_kill(ctx: Context) -> None:
    player = ctx.player_arg(1, "/kill <player>.")
    if player is None:
        return
    if player.dead:
        ctx.reply.append(f"{player.name} is already dead!")
        return
    player.dead, player.hp = True, 0
    ctx.world.emit("death", player.name, f"{player.name} was slain by {ctx.name}.")
    ctx.reply.append(f"You just killed {player.name}!")
    player.messages.append(f"{ctx.name} just killed you!")
