"""Simulated server and world commands: info, broadcast, save, time, wind, hardmode, world events,
invasions, butcher, and the in-game-only spawns and teleports."""

from __future__ import annotations

from polter.backends.terraria.simulator.chat import Context, Handler
from polter.backends.terraria.simulator.world import Npc
from polter.backends.terraria.text import clock_to_game_time

MOBS = {"blue slime": 1, "demon eye": 2, "zombie": 3, "bunny": 46, "skeleton": 21, "harpy": 48, "goblin scout": 73}
BOSSES = {
    "eye": (4, "Eye of Cthulhu"),
    "king": (50, "King Slime"),
    "skeletron": (35, "Skeletron"),
    "brain": (266, "Brain of Cthulhu"),
    "eater": (13, "Eater of Worlds"),
    "queen bee": (222, "Queen Bee"),
    "deerclops": (668, "Deerclops"),
    "plantera": (262, "Plantera"),
    "golem": (245, "Golem"),
    "duke": (370, "Duke Fishron"),
    "moon lord": (398, "Moon Lord"),
    "empress": (636, "Empress of Light"),
    "queen slime": (657, "Queen Slime"),
    "destroyer": (134, "The Destroyer"),
    "prime": (127, "Skeletron Prime"),
    "twins": (125, "The Twins"),
    "lunatic": (439, "Lunatic Cultist"),
}
INVASIONS = ["goblins", "snowmen", "pirates", "pumpkinmoon", "frostmoon", "martians"]
EVENTS = ["meteor", "fullmoon", "bloodmoon", "eclipse", "invasion", "sandstorm", "rain", "lanternsnight"]


# server ------------------------------------------------------------------------------------------


def cmd_serverinfo(ctx: Context) -> None:
    ctx.reply += [
        "Memory usage: 412663808",
        "Allocated memory: 3149877248",
        "Total processor time: 00:02:13.4100000",
        "Operating system: Unix 6.1.0.0",
        "Proc count: 2",
        "Machine name: polter-sim",
    ]


def cmd_version(ctx: Context) -> None:
    ctx.reply.append(f"TShock: [c/AAAAFF:{ctx.world.config.tshock_version}] [c/FFAAAA:Intensity].")


def cmd_worldinfo(ctx: Context) -> None:
    w = ctx.world
    ctx.reply += [
        "Information about the currently running world",
        f"Name: {w.world_name}",
        f"Size: {w.max_tiles_x}x{w.max_tiles_y}",
        f"ID: {w.world_id}",
        f"Seed: {w.world_seed}",
        f"Mode: {w.game_mode}",
        f"Path: /root/.local/share/Terraria/Worlds/{w.world_name}.wld",
    ]


def cmd_broadcast(ctx: Context) -> None:
    if not ctx.args:
        ctx.reply.append("Invalid syntax. Proper syntax: /broadcast <message>.")
        return
    ctx.world.broadcast(f"(Server Broadcast) {' '.join(ctx.args)}")


def cmd_save(ctx: Context) -> None:
    ctx.world.saves += 1


def cmd_reload(ctx: Context) -> None:
    ctx.world.reloads += 1
    ctx.reply.append(
        "Configuration, permissions, and regions reload complete. Some changes may require a server restart."
    )


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
    named = {
        "day": (0.0, True, "04:30"),
        "night": (0.0, False, "19:30"),
        "noon": (27000.0, True, "12:00"),
        "midnight": (16200.0, False, "00:00"),
    }
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
        ctx.reply += [
            "Invalid syntax. Proper syntax: /worldevent <event type>.",
            f"Valid event types: {', '.join(EVENTS)}.",
            f"Valid invasion types if spawning an invasion: {', '.join(INVASIONS)}.",
        ]
        return
    event = ctx.args[0].lower()
    permission = {
        "meteor": "tshock.world.time.dropmeteor",
        "fullmoon": "tshock.world.time.fullmoon",
        "bloodmoon": "tshock.world.time.bloodmoon",
        "eclipse": "tshock.world.time.eclipse",
        "invasion": "tshock.npc.invade",
        "sandstorm": "tshock.world.sandstorm",
        "rain": "tshock.world.rain",
        "lanternsnight": "tshock.world.events.lanternsnight",
    }[event]
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
        ctx.announce(
            text if ctx.silent else f"{ctx.name} {'started' if w.lantern_night else 'stopped'} a lantern night."
        )
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
    ctx.announce(f"You butchered {len(victims)} NPCs." if ctx.silent else f"{ctx.name} butchered {len(victims)} NPCs.")


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


def cmd_ingame_only(ctx: Context) -> None:  # never reached: AllowServer=false stops it first
    ctx.reply.append("You must use this command in-game.")
