"""The chat commands ``/v3/server/rawcmd`` runs, with TShock 5.2's exact replies.

A small table-driven dispatcher: name → :class:`Command` (permission, whether the server console may
run it, handler). The handlers live in ``cmd_world``, ``cmd_players`` and ``cmd_admin``.
"""

from __future__ import annotations

import shlex

from polter.backends.terraria.simulator.chat import Command, CommandFailed, Context
from polter.backends.terraria.simulator.cmd_admin import cmd_group, cmd_region
from polter.backends.terraria.simulator.cmd_players import (
    cmd_accountinfo,
    cmd_ban,
    cmd_gbuff,
    cmd_give,
    cmd_godmode,
    cmd_heal,
    cmd_kick,
    cmd_kill,
    cmd_warp,
    cmd_whisper,
)
from polter.backends.terraria.simulator.cmd_world import (
    cmd_broadcast,
    cmd_butcher,
    cmd_hardmode,
    cmd_ingame_only,
    cmd_reload,
    cmd_save,
    cmd_serverinfo,
    cmd_spawn,
    cmd_time,
    cmd_tp,
    cmd_version,
    cmd_who,
    cmd_wind,
    cmd_worldevent,
    cmd_worldinfo,
)
from polter.backends.terraria.simulator.world import World

__all__ = ["COMMANDS", "run_command"]

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
        parts = shlex.split(body.replace('\\"', "\u0000"))
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
