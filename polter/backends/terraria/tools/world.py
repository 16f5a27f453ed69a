"""Acting on the server and the world: broadcast, save, reload, stop, raw commands, time, weather,
events, invasions, hardmode and butchering."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Annotated, Literal

from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from polter.backends.terraria.text import game_time_to_clock
from polter.backends.terraria.tools._common import ACTS, DESTRUCTIVE, quote
from polter.backends.terraria.tools.research import companion_state

if TYPE_CHECKING:
    from polter.backends.terraria.server import Backend, TerrariaServer

Invasion = Literal["goblins", "snowmen", "pirates", "pumpkinmoon", "frostmoon", "martians"]
WorldEvent = Literal["meteor", "fullmoon", "eclipse", "sandstorm", "lanternsnight"]
TIME_PATTERN = r"^(day|night|noon|midnight|([01]?\d|2[0-3]):[0-5]\d)$"
EVENT_REPLIES = {
    "fullmoon": r"^Started a full moon event\.$",
    "eclipse": r"^(Started|Stopped) an eclipse\.$",
    "lanternsnight": r"^Lanterns are now (up|down)\.$",
}
HARDMODE_UNKNOWN = (
    "world_hardmode needs the world's current hardmode state, and this server does not report it: vanilla "
    "TShock's REST API has no hardmode field and /hardmode only toggles, so calling it blind could switch the "
    "world the wrong way (turning hardmode on is irreversible). It needs a TShock plugin serving /polter/v1/world "
    "(Polter documents that route in docs/terraria.md but does not ship the plugin); until then an admin can run "
    "/hardmode in-game. Nothing was changed."
)


def register(server: TerrariaServer, backend: Backend) -> None:
    tshock = backend.tshock

    async def clock() -> str:
        world = await tshock.get("/world/read")
        hour, minute = game_time_to_clock(float(world["time"]), bool(world["daytime"]))
        return f"{hour:02d}:{minute:02d} ({'day' if world['daytime'] else 'night'})"

    @server.tool(annotations=ACTS, structured_output=False)
    async def server_broadcast(message: Annotated[str, Field(min_length=1, max_length=500)]) -> str:
        """Send a message to every player (shown in yellow, without a prefix)."""
        return (await tshock.get("/v2/server/broadcast", msg=message))["response"]

    @server.tool(annotations=ACTS, structured_output=False)
    async def server_save() -> str:
        """Save the world to disk now."""
        return (await tshock.get("/v2/world/save"))["response"]

    @server.tool(annotations=ACTS, structured_output=False)
    async def server_reload() -> str:
        """Reload TShock's configuration, permissions and regions from disk."""
        return (await tshock.get("/v3/server/reload"))["response"]

    @server.tool(annotations=DESTRUCTIVE, structured_output=False)
    async def server_stop(
        message: Annotated[str | None, Field(max_length=200, description="shown to players")] = None, save: bool = True
    ) -> str:
        """Shut the server down for everyone (saving the world first unless save=false). Disruptive:
        every player is disconnected and only someone with shell access can start it again."""
        reply = await tshock.get("/v2/server/off", confirm=True, nosave=not save, message=message)
        return f"{reply['response']} ({'world saved' if save else 'without saving'})."

    @server.tool(annotations=DESTRUCTIVE, structured_output=False)
    async def server_raw_command(
        command: Annotated[str, Field(min_length=1, max_length=500, description="e.g. /who or .butcher zombie")],
    ) -> str:
        """Run any TShock console command as the REST user (the escape hatch: it can do anything the
        REST account may). Start with / ; start with . to run it silently and get its confirmation."""
        text = command if command[0] in "/." else f"/{command}"
        lines = await tshock.rawcmd(text)
        if not lines:
            return (
                f"TShock ran {text.split(' ', 1)[0]} and printed nothing (commands that announce to every "
                "player reply with nothing over REST; prefix . instead of / to get the confirmation)."
            )
        return "\n".join(lines)

    @server.tool(annotations=ACTS, structured_output=False)
    async def world_time_set(
        time: Annotated[str, Field(pattern=TIME_PATTERN, description="day, night, noon, midnight or hh:mm (24h)")],
    ) -> str:
        """Set the in-game time: day (04:30), night (19:30), noon, midnight, or a 24-hour hh:mm."""
        await tshock.command(f"/time {time}", silent_ok=True)
        return f"The time is now {await clock()}."

    @server.tool(annotations=ACTS, structured_output=False)
    async def world_rain(
        enabled: Annotated[bool, Field(description="true to start, false to stop")] = True,
        slime: Annotated[bool, Field(description="slime rain instead of water")] = False,
    ) -> str:
        """Start or stop rain (or slime rain). TShock's command toggles: with the companion plugin the
        current weather is read first; without it the rain is toggled and the reply says so."""
        key = "slimerain" if slime else "raining"

        async def falling() -> bool | None:  # None: this TShock cannot tell (no plugin, or no such field)
            state = await companion_state(backend)
            value = state.get(key) if state is not None else None
            return value if isinstance(value, bool) else None

        what = "Slime rain" if slime else "Rain"
        if await falling() == enabled:
            return f"{what} is already {'falling' if enabled else 'stopped'}; nothing changed."
        if slime:
            await tshock.command("/worldevent rain slime", silent_ok=True)
        else:
            await tshock.command("/worldevent rain", expect=r'^Use "/worldevent rain slime"')
        now = await falling()
        if now is None:
            return (
                f"{what} toggled. This TShock cannot report the weather, so if it was already "
                f"{'raining' if enabled else 'dry'} it has now {'stopped' if enabled else 'started'}."
            )
        return f"{what} is now {'falling' if now else 'stopped'}."

    @server.tool(annotations=ACTS, structured_output=False)
    async def world_wind(
        speed: Annotated[float, Field(ge=-100, le=100, description="mph; negative blows west")],
    ) -> str:
        """Set the wind speed (announced to every player); negative values blow towards the west."""
        await tshock.command(f"/wind {speed:g}", silent_ok=True)
        return f"Wind speed set to {speed:g}."

    @server.tool(annotations=ACTS, structured_output=False)
    async def world_bloodmoon(enabled: bool) -> str:
        """Turn the blood moon on or off."""
        await tshock.get(f"/world/bloodmoon/{'true' if enabled else 'false'}")
        now = (await tshock.get("/world/read"))["bloodmoon"]
        return f"The blood moon is now {'up' if now else 'over'}."

    @server.tool(annotations=ACTS, structured_output=False)
    async def world_event(event: WorldEvent) -> str:
        """Trigger a meteor or a full moon, or toggle an eclipse, a sandstorm or lantern night."""
        if event == "meteor":
            return (await tshock.get("/world/meteor"))["response"]
        if event == "sandstorm":  # only ever announced to everyone
            await tshock.command("/worldevent sandstorm", silent_ok=True)
            return "Sandstorm toggled."
        return "\n".join(await tshock.command(f".worldevent {event}", expect=EVENT_REPLIES[event]))

    @server.tool(annotations=ACTS, structured_output=False)
    async def world_invasion(
        type: Annotated[Invasion | None, Field(description="omit to stop the current one")] = None,
        wave: Annotated[int | None, Field(ge=1, le=20, description="pumpkin/frost moon wave")] = None,
    ) -> str:
        """Start an invasion (goblins, snowmen, pirates, pumpkinmoon, frostmoon, martians), or stop the
        running one when no type is given."""
        running = int((await tshock.get("/world/read"))["invasionsize"]) > 0
        if type is None:
            if not running:
                return "No invasion is running; nothing changed."
            await tshock.command("/worldevent invasion", silent_ok=True)
            return "The current invasion has been ended."
        if running:  # the command would end the running invasion instead of starting this one
            raise ToolError("an invasion is already running; stop it first (world_invasion with no type)")
        await tshock.command(f"/worldevent invasion {type}{f' {wave}' if wave else ''}", silent_ok=True)
        return f"Started the {type} invasion{f' at wave {wave}' if wave else ''}."

    @server.tool(annotations=DESTRUCTIVE, structured_output=False)
    async def world_hardmode(enabled: Annotated[bool, Field(description="the state you want, not a toggle")]) -> str:
        """Switch hardmode on or off. Turning it on is effectively irreversible: it spreads the Hallow and
        the evil biome through the world. Reads the current state first and changes nothing if the world
        is already there; refuses when the server cannot report the state."""
        state = await companion_state(backend)
        if state is None or not isinstance(state.get("hardmode"), bool):
            raise ToolError(HARDMODE_UNKNOWN)
        if state["hardmode"] == enabled:
            return f"Hardmode is already {'on' if enabled else 'off'}; nothing changed."
        lines = await tshock.command("/hardmode", expect=r"^Hardmode is now (on|off)\.$")
        now_on = any(line == "Hardmode is now on." for line in lines)
        if now_on != enabled:
            raise ToolError(f"TShock toggled hardmode the wrong way (someone changed it meanwhile?): {lines[0]}")
        return lines[0]

    @server.tool(annotations=DESTRUCTIVE, structured_output=False)
    async def world_butcher(
        npc: Annotated[str | None, Field(max_length=64, description="one NPC name or id")] = None,
        include_friendly: Annotated[bool, Field(description="also critters and other friendly non-town NPCs")] = False,
    ) -> str:
        """Kill every hostile NPC (town NPCs are always spared), optionally friendly ones too, or every
        NPC of one type."""
        if npc is None:
            return (await tshock.get("/v2/world/butcher", killfriendly=include_friendly))["response"]
        lines = await tshock.command(f".butcher {quote(npc)}", expect=r"^You butchered \d+ NPCs?\.$")
        return re.sub(r"^You butchered", "Butchered", lines[0])
