"""The chat commands ``/v3/server/rawcmd`` runs, with TShock 5.2's exact replies.

A small table-driven dispatcher: name → :class:`Command` (permission, whether the server console may
run it, handler). A handler writes lines for the REST caller to ``ctx.reply`` and announcements to
``world.broadcast`` (which rawcmd never returns: that is why many commands answer ``[]``).
"""

from __future__ import annotations

import shlex
from collections.abc import Callable
from dataclasses import dataclass, field

from polter.backends.terraria.items import item_table
from polter.backends.terraria.simulator.world import Npc, Player, World
from polter.backends.terraria.text import clock_to_game_time

__all__ = ["run_command"]

PREFIXES = {
    name.lower(): number for number, name in enumerate(
        "Large Massive Dangerous Savage Sharp Pointy Tiny Terrible Small Dull Unhappy Bulky Shameful Heavy "
        "Light Sighted Rapid Hasty Intimidating Deadly Staunch Awful Lethargic Awkward Powerful Mystic Adept "
        "Masterful Inept Ignorant Deranged Intense Taboo Celestial Furious Keen Superior Forceful Broken "
        "Damaged Shoddy Quick Deadly2 Agile Nimble Murderous Slow Sluggish Lazy Annoying Nasty Manic Hurtful "
        "Strong Unpleasant Weak Ruthless Frenzying Godly Demonic Zealous Hard Guarding Armored Warding Arcane "
        "Precise Lucky Jagged Spiked Angry Menacing Brisk Fleeting Hasty2 Quick2 Wild Rash Intrepid Violent "
        "Legendary Unreal Mythical Legendary2".split(), start=1)
}
BUFFS = {
    1: ("Obsidian Skin", "Immune to lava"), 2: ("Regeneration", "Provides life regeneration"),
    3: ("Swiftness", "25% increased movement speed"), 4: ("Gills", "Breathe water instead of air"),
    5: ("Ironskin", "Increase defense by 8"), 6: ("Mana Regeneration", "Increased mana regeneration"),
    7: ("Magic Power", "20% increased magic damage"), 8: ("Featherfall", "Press UP or DOWN to control speed of descent"),
    9: ("Spelunker", "Shows the location of treasure and ore"), 10: ("Invisibility", "Grants invisibility"),
    11: ("Shine", "Emitting light"), 12: ("Night Owl", "Increased night vision"),
    13: ("Battle", "Increased enemy spawn rate"), 14: ("Thorns", "Attackers also take damage"),
    15: ("Water Walking", "Press DOWN to enter water"), 16: ("Archery", "20% increased arrow damage and speed"),
    17: ("Hunter", "Shows the location of enemies"), 18: ("Gravitation", "Press UP to reverse gravity"),
}
MOBS = {"blue slime": 1, "demon eye": 2, "zombie": 3, "bunny": 46, "skeleton": 21, "harpy": 48, "goblin scout": 73}
BOSSES = {"eye": (4, "Eye of Cthulhu"), "king": (50, "King Slime"), "skeletron": (35, "Skeletron"),
          "brain": (266, "Brain of Cthulhu"), "eater": (13, "Eater of Worlds"), "queen bee": (222, "Queen Bee"),
          "deerclops": (668, "Deerclops"), "plantera": (262, "Plantera"), "golem": (245, "Golem"),
          "duke": (370, "Duke Fishron"), "moon lord": (398, "Moon Lord"), "empress": (636, "Empress of Light"),
          "queen slime": (657, "Queen Slime"), "destroyer": (134, "The Destroyer"),
          "prime": (127, "Skeletron Prime"), "twins": (125, "The Twins"), "lunatic": (439, "Lunatic Cultist")}
INVASIONS = ["goblins", "snowmen", "pirates", "pumpkinmoon", "frostmoon", "martians"]
EVENTS = ["meteor", "fullmoon", "bloodmoon", "eclipse", "invasion", "sandstorm", "rain", "lanternsnight"]
MULTIPLE_MATCH = [
    "Use \"my query\" for items with spaces.",
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
    ctx.reply.extend(lines[(page - 1) * 4: page * 4])
    if page < pages:
        ctx.reply.append(footer.format(page + 1))


# server ------------------------------------------------------------------------------------------

def cmd_serverinfo(ctx: Context) -> None:
    ctx.reply += ["Memory usage: 412663808", "Allocated memory: 3149877248",
                  "Total processor time: 00:02:13.4100000", "Operating system: Unix 6.1.0.0",
                  "Proc count: 2", "Machine name: polter-sim"]


def cmd_version(ctx: Context) -> None:
    ctx.reply.append(f"TShock: [c/AAAAFF:{ctx.world.config.tshock_version}] [c/FFAAAA:Intensity].")


def cmd_worldinfo(ctx: Context) -> None:
    w = ctx.world
    ctx.reply += ["Information about the currently running world", f"Name: {w.world_name}",
                  f"Size: {w.max_tiles_x}x{w.max_tiles_y}", f"ID: {w.world_id}", f"Seed: {w.world_seed}",
                  f"Mode: {w.game_mode}", f"Path: /root/.local/share/Terraria/Worlds/{w.world_name}.wld"]


def cmd_broadcast(ctx: Context) -> None:
    if not ctx.args:
        ctx.reply.append("Invalid syntax. Proper syntax: /broadcast <message>.")
        return
    ctx.world.broadcast(f"(Server Broadcast) {' '.join(ctx.args)}")


def cmd_save(ctx: Context) -> None:
    ctx.world.saves += 1


def cmd_reload(ctx: Context) -> None:
    ctx.world.reloads += 1
    ctx.reply.append("Configuration, permissions, and regions reload complete. "
                     "Some changes may require a server restart.")


def cmd_who(ctx: Context) -> None:
    players = ctx.world.players
    if not players:
        ctx.reply.append("There are currently no players online.")
        return
    ctx.reply.append(f"Online Players ([c/AAFFAA:{len(players)}]/{ctx.world.config.max_players})")
    ctx.reply.append(", ".join(p.name for p in players))


# world -------------------------------------------------------------------------------------------

def cmd_time(ctx: Context) -> None:
    w = ctx.world
    if not ctx.args:
        ctx.reply.append(f"The current time is {w.clock_text()}.")
        return
    if not ctx.allowed("tshock.world.time.set"):
        ctx.reply.append("You do not have permission to change the time of the world.")
        return
    named = {"day": (0.0, True, "04:30"), "night": (0.0, False, "19:30"),
             "noon": (27000.0, True, "12:00"), "midnight": (16200.0, False, "00:00")}
    arg = ctx.args[0].lower()
    if arg in named:
        w.time, w.daytime, text = named[arg]
    else:
        parts = arg.split(":")
        if len(parts) != 2 or not all(p.isdigit() for p in parts) or int(parts[0]) > 23 or int(parts[1]) > 59:
            ctx.reply.append("Invalid time string. Proper format: hh:mm, in 24-hour time.")
            return
        hour, minute = int(parts[0]), int(parts[1])
        w.time, w.daytime = clock_to_game_time(hour, minute)
        text = f"{hour}:{minute:02d}"
    w.broadcast(f"{ctx.name} set the time to {text}.")


def cmd_wind(ctx: Context) -> None:
    if len(ctx.args) != 1:
        ctx.reply.append("Invalid syntax. Proper syntax: /wind <speed>.")
        return
    try:
        speed = float(ctx.args[0])
    except ValueError:
        ctx.reply.append("Invalid wind speed.")
        return
    ctx.world.wind = speed / 60.0
    ctx.world.broadcast(f"{ctx.name} changed the wind speed to {ctx.args[0]}.")


def cmd_hardmode(ctx: Context) -> None:
    w = ctx.world
    if w.hardmode:
        w.hardmode = False
        ctx.reply.append("Hardmode is now off.")
    elif not w.config.disable_hardmode:
        w.hardmode = True
        ctx.reply.append("Hardmode is now on.")
    else:
        ctx.reply.append("Hardmode is disabled in the server configuration file.")
        return
    w.emit("world", None, ctx.reply[-1], hardmode=w.hardmode)


def cmd_worldevent(ctx: Context) -> None:
    w = ctx.world
    if not ctx.args or ctx.args[0].lower() not in EVENTS:
        ctx.reply += ["Invalid syntax. Proper syntax: /worldevent <event type>.",
                      f"Valid event types: {', '.join(EVENTS)}.",
                      f"Valid invasion types if spawning an invasion: {', '.join(INVASIONS)}."]
        return
    event = ctx.args[0].lower()
    permission = {"meteor": "tshock.world.time.dropmeteor", "fullmoon": "tshock.world.time.fullmoon",
                  "bloodmoon": "tshock.world.time.bloodmoon", "eclipse": "tshock.world.time.eclipse",
                  "invasion": "tshock.npc.invade", "sandstorm": "tshock.world.sandstorm",
                  "rain": "tshock.world.rain", "lanternsnight": "tshock.world.events.lanternsnight"}[event]
    if not ctx.allowed(permission):
        ctx.reply.append("You do not have permission to start this event.")
        return
    if event == "meteor":
        w.meteors += 1
        ctx.announce(f"{ctx.name} triggered a meteor." if not ctx.silent else "A meteor has been triggered.")
    elif event == "fullmoon":
        w.full_moon = True
        ctx.announce(f"{ctx.name} started a full moon event." if not ctx.silent else "Started a full moon event.")
    elif event == "bloodmoon":
        w.bloodmoon = not w.bloodmoon
        verb = "Started a blood moon event." if w.bloodmoon else "Stopped the current blood moon event."
        ctx.announce(verb if ctx.silent else f"{ctx.name} {'started' if w.bloodmoon else 'stopped'} the blood moon.")
    elif event == "eclipse":
        w.eclipse = not w.eclipse
        verb = "Started an eclipse." if w.eclipse else "Stopped an eclipse."
        ctx.announce(verb if ctx.silent else f"{ctx.name} {'started' if w.eclipse else 'stopped'} an eclipse.")
    elif event == "sandstorm":
        w.sandstorm = not w.sandstorm
        w.broadcast(f"{ctx.name} {'started' if w.sandstorm else 'stopped'} a sandstorm.")
    elif event == "lanternsnight":
        w.lantern_night = not w.lantern_night
        text = "Lanterns are now up." if w.lantern_night else "Lanterns are now down."
        ctx.announce(text if ctx.silent else f"{ctx.name} {'started' if w.lantern_night else 'stopped'} a lantern night.")
    elif event == "rain":
        rain(ctx)
    else:
        invasion(ctx)


def rain(ctx: Context) -> None:
    w = ctx.world
    slime = len(ctx.args) > 1 and ctx.args[1].lower() == "slime" and ctx.allowed("tshock.world.rain")
    if not slime:
        ctx.reply.append('Use "/worldevent rain slime" to start slime rain!')
    if slime and w.raining:
        ctx.reply.append("Slime rain cannot be activated during normal rain. Stop the normal rainstorm and try again.")
        return
    if slime:
        w.slime_rain = not w.slime_rain
        w.broadcast(f"{ctx.name} {'caused it to rain slime' if w.slime_rain else 'ended the slime rain'}.")
        return
    w.raining = not w.raining
    w.broadcast(f"{ctx.name} {'caused it to rain' if w.raining else 'ended the rain'}.")


def invasion(ctx: Context) -> None:
    w = ctx.world
    if w.invasion_type is not None:
        w.invasion_type, w.invasion_size = None, 0
        w.broadcast(f"{ctx.name} has ended the current invasion event.")
        return
    if len(ctx.args) < 2:
        ctx.reply.append("Invalid syntax. Proper syntax:  /worldevent invasion [invasion type] [invasion wave].")
        return
    kind = ctx.args[1].lower()
    if kind not in INVASIONS:
        ctx.reply.append("Invalid invasion type. Valid invasion types: " + ", ".join(INVASIONS) + ".")
        return
    wave = int(ctx.args[2]) if len(ctx.args) > 2 and ctx.args[2].isdigit() else 1
    w.invasion_type, w.invasion_size = kind, 100 if kind in ("goblins", "snowmen", "pirates", "martians") else wave
    w.broadcast(f"{ctx.name} has started {'a ' + kind + ' invasion' if wave == 1 else kind + ' wave ' + str(wave)}.")


def cmd_butcher(ctx: Context) -> None:
    w = ctx.world
    victims = [n for n in w.npcs if not n.town and n.type != 488]
    if ctx.args:
        query = " ".join(ctx.args).lower()
        matching = [n for n in w.npcs if n.name.lower() == query or str(n.type) == query]
        if not matching:
            ctx.reply.append(f'"{" ".join(ctx.args)}" is not a valid NPC.')
            return
        victims = [n for n in matching]
    for npc in victims:
        w.npcs.remove(npc)
    ctx.announce(f"You butchered {len(victims)} NPCs." if ctx.silent
                 else f"{ctx.name} butchered {len(victims)} NPCs.")


def cmd_spawn(boss: bool) -> Handler:
    def handler(ctx: Context) -> None:
        w = ctx.world
        if not ctx.args:
            syntax = "/spawnboss <boss type> [amount]" if boss else "/spawnmob <mob type> [amount]"
            ctx.reply.append(f"Invalid syntax. Proper syntax: {syntax}.")
            return
        amount = int(ctx.args[1]) if len(ctx.args) > 1 and ctx.args[1].isdigit() else 1
        query = ctx.args[0].lower()
        if boss:
            if query not in BOSSES:
                ctx.reply.append("Invalid boss type!")
                return
            npc_id, name = BOSSES[query]
            w.spawned.extend(Npc(npc_id, name) for _ in range(amount))
            w.npcs.extend(Npc(npc_id, name) for _ in range(amount))
            w.broadcast(f"{ctx.name} has spawned {name} {amount} time(s).")
            w.emit("boss_spawn", None, f"{name} has awoken!", boss=name, npc_id=npc_id, amount=amount)
            return
        match = [m for m in MOBS if m == query] or [m for m in MOBS if m.startswith(query)]
        if len(match) != 1:
            ctx.reply.append("Invalid mob type!")
            return
        name = match[0].title()
        w.spawned.extend(Npc(MOBS[match[0]], name) for _ in range(min(amount, 200)))
        w.npcs.extend(Npc(MOBS[match[0]], name) for _ in range(min(amount, 200)))
        w.broadcast(f"{ctx.name} has spawned {name} {min(amount, 200)} time(s).")
    return handler


def cmd_tp(ctx: Context) -> None:
    if len(ctx.args) < 2:
        ctx.reply.append("Invalid syntax. Proper syntax: /tp <player> [player 2].")
        return
    source = ctx.one_player(ctx.args[0])
    target = source and ctx.one_player(ctx.args[1])
    if source and target:
        source.tile_x, source.tile_y = target.tile_x, target.tile_y
        ctx.reply.append(f"Teleported {source.name} to {target.name}.")


# players -----------------------------------------------------------------------------------------

def cmd_give(ctx: Context) -> None:
    if len(ctx.args) < 2:
        ctx.reply.append("Invalid syntax. Proper syntax: /give <item type/id> <player> [item amount] "
                         "[prefix id/name]")
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
    ctx.announce(f"You healed {player.name} for {amount} HP." if ctx.silent
                 else f"{ctx.name} healed {player.name} for {amount} HP.")


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
        found = [bid for bid, (name, _) in BUFFS.items() if name.lower() == query.lower()] or \
                [bid for bid, (name, _) in BUFFS.items() if name.lower().startswith(query.lower())]
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
        paginate(ctx, [warp.name for warp in w.warps], ctx.args[1] if len(ctx.args) > 1 else None,
                 "Warps ({0}/{1}):", "Type /warp list {0} for more.", "There are currently no warps defined.")
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
        ctx.reply.append("Player not found. Unable to kick the player." if not players
                         else "More than one match found -- unable to decide which is correct: ")
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


# regions, groups ---------------------------------------------------------------------------------

def cmd_region(ctx: Context) -> None:
    w = ctx.world
    sub = ctx.args[0].lower() if ctx.args else "help"
    args = ctx.args[1:]

    def region(name: str):  # type: ignore[no-untyped-def]
        found = next((r for r in w.regions if r.name == name), None)
        if found is None:
            ctx.reply.append(f"Could not find the region {name}." if sub != "info" else "Invalid region \"" + name + "\".")
        return found

    if sub == "list":
        paginate(ctx, [r.name for r in w.regions], args[0] if args else None, "Regions ({0}/{1}):",
                 "Type /region list {0} for more.", "There are currently no regions defined.")
    elif sub == "info" and args:
        r = region(args[0])
        if r:
            ctx.reply += [f'Information About Region "{r.name}" (1/1):',
                          f"X: {r.x}; Y: {r.y}; W: {r.width}; H: {r.height}, Z: {r.z}",
                          f"Region owner: {r.owner}.", f"Protected: {r.protected}.",
                          f"Shared with: {', '.join(r.users)}." if r.users else "Region is not shared with any users.",
                          f"Shared with groups: {', '.join(r.groups)}." if r.groups
                          else "Region is not shared with any groups."]
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
        ctx.reply.append("Region points need to be defined first. Use /region set 1 and /region set 2."
                         if sub == "define" else "You must use this command in-game.")
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
        from polter.backends.terraria.simulator.world import Group

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
        paginate(ctx, list(w.groups), args[0] if args else None, "Groups ({0}/{1}):",
                 "Type /group list {0} for more.", "There are currently no groups defined.")
    else:
        ctx.reply.append("Invalid syntax. Proper syntax: /group <command> [arguments].")


def cmd_ingame_only(ctx: Context) -> None:  # never reached: AllowServer=false stops it first
    ctx.reply.append("You must use this command in-game.")


COMMANDS = [
    Command(("serverinfo",), "tshock.info", cmd_serverinfo),
    Command(("version",), None, cmd_version),
    Command(("worldinfo",), "tshock.world.info", cmd_worldinfo),
    Command(("broadcast", "bc", "say"), "tshock.admin.broadcast", cmd_broadcast),
    Command(("save",), "tshock.world.save", cmd_save),
    Command(("reload",), "tshock.cfg.reload", cmd_reload),
    Command(("who", "playing", "online"), None, cmd_who),
    Command(("time",), "tshock.world.time", cmd_time),
    Command(("wind",), "tshock.world.wind", cmd_wind),
    Command(("hardmode",), "tshock.world.hardmode", cmd_hardmode),
    Command(("worldevent",), "tshock.world.events", cmd_worldevent),
    Command(("butcher",), "tshock.npc.butcher", cmd_butcher),
    Command(("spawnmob", "sm"), "tshock.npc.spawnmob", cmd_spawn(boss=False), allow_server=False),
    Command(("spawnboss", "sb"), "tshock.npc.spawnboss", cmd_spawn(boss=True), allow_server=False),
    Command(("tp",), "tshock.tp.self", cmd_tp, allow_server=False),
    Command(("item", "i"), "tshock.item.spawn", cmd_ingame_only, allow_server=False),
    Command(("give", "g"), "tshock.item.give", cmd_give),
    Command(("heal",), "tshock.heal", cmd_heal),
    Command(("whisper", "w", "tell", "pm", "dm"), "tshock.whisper", cmd_whisper),
    Command(("godmode", "god"), "tshock.godmode", cmd_godmode),
    Command(("gbuff", "buffplayer"), "tshock.buff.others", cmd_gbuff),
    Command(("warp",), "tshock.warp", cmd_warp),
    Command(("accountinfo", "ai"), "tshock.account.info", cmd_accountinfo),
    Command(("ban",), "tshock.admin.ban", cmd_ban),
    Command(("kick",), "tshock.admin.kick", cmd_kick),
    Command(("kill", "slay"), "tshock.kill", cmd_kill),
    Command(("region",), "tshock.admin.region", cmd_region),
    Command(("group",), "tshock.admin.group", cmd_group),
]
_BY_NAME = {name: command for command in COMMANDS for name in command.names}


def run_command(world: World, username: str, group: str, text: str) -> list[str]:
    """``Commands.HandleCommand`` for the REST player: what rawcmd returns for ``text``."""
    if not text:
        return ["Invalid command entered. Type /help for a list of valid commands."]
    silent = text[0] == "."
    body = text[1:]  # TShock always drops the first character, whatever it is
    try:
        parts = shlex.split(body.replace("\\\"", "\u0000"))
        parts = [part.replace("\u0000", '"') for part in parts]
    except ValueError:
        parts = body.split()
    if not parts:
        return ["Invalid command entered. Type /help for a list of valid commands."]
    name, args = parts[0].lower(), parts[1:]
    command = _BY_NAME.get(name)
    if command is None:
        return ["Invalid command entered. Type /help for a list of valid commands."]
    if command.permission is not None and not world.has_permission(group, command.permission):
        lines = ["You do not have access to this command."]
        if world.has_permission(group, "tshock.su"):
            lines.append(f"You can use '/sudo /{name}' to override this check.")
        return lines
    if not command.allow_server and not world.config.allow_ingame_only_commands:
        return ["You must use this command in-game."]
    ctx = Context(world, username, group, silent, args)
    try:
        command.handler(ctx)
    except CommandFailed:
        world.log.append(f"Command {name} failed for REST user {username}")
        ctx.reply.append("Command failed, check logs for more details.")
    return ctx.reply
