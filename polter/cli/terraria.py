"""``polter terraria serve`` (the Terraria admin MCP server on stdio) and ``polter terraria sim``."""

from __future__ import annotations

import argparse
import asyncio
import sys

from polter.errors import ConfigError

__all__ = ["register"]


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "terraria",
        help="the Terraria (TShock) admin MCP server and its REST simulator",
        description="The Terraria (TShock) admin MCP server and a faithful TShock REST simulator.",
    )
    commands = parser.add_subparsers(dest="terraria_command", metavar="COMMAND", required=True)

    serve = commands.add_parser(
        "serve",
        help="run the MCP server on stdio",
        description="Run the Terraria admin MCP server on stdio. Configure it with TSHOCK_URL and either "
        "TSHOCK_TOKEN or TSHOCK_USERNAME/TSHOCK_PASSWORD (see docs/terraria.md).",
    )
    serve.set_defaults(handler=run_serve)

    sim = commands.add_parser(
        "sim",
        help="run a TShock REST simulator on 127.0.0.1",
        description="Run a TShock 5.2 REST simulator on 127.0.0.1. Prints TSHOCK_URL and TSHOCK_TOKEN lines "
        "to paste into the MCP server's environment.",
    )
    sim.add_argument("--port", type=int, default=0, metavar="N", help="port to listen on (default: any free port)")
    sim.add_argument("--seed", type=int, default=1, metavar="N", help="world seed (default 1)")
    sim.add_argument(
        "--allow-ingame-commands",
        action="store_true",
        help="let /spawnmob, /spawnboss and /tp run over REST (a demo switch; real TShock refuses)",
    )
    sim.add_argument(
        "--vanilla", action="store_true", help="do not emulate the Polter companion plugin (no /polter/v1/world route)"
    )
    sim.add_argument(
        "--events-url",
        metavar="URL",
        help="post game events (joins, deaths, boss spawns, broadcasts …) to this event intake, as the "
        "companion plugin would, e.g. http://127.0.0.1:7879/events",
    )
    sim.add_argument("--events-secret", metavar="S", help="bearer secret for --events-url (TERRARIA_EVENTS_SECRET)")
    sim.add_argument("--tshock-version", default="5.2.0.0", metavar="V", help="reported TShock version")
    sim.add_argument("--server-version", default="v1.4.4.9", metavar="V", help="reported Terraria version")
    sim.set_defaults(handler=run_sim)


def run_serve(args: argparse.Namespace) -> int:
    from polter.backends.terraria.server import main

    return main()


def run_sim(args: argparse.Namespace) -> int:

    from polter.backends.terraria.simulator import ServerConfig, SimulatorServer, World

    config = ServerConfig(
        allow_ingame_only_commands=args.allow_ingame_commands,
        companion_plugin=not args.vanilla,
        tshock_version=args.tshock_version,
        server_version=args.server_version,
        events_url=args.events_url,
        events_secret=args.events_secret,
    )
    world = World(seed=args.seed, config=config)

    async def serve() -> None:
        try:
            server = SimulatorServer(world, port=args.port, handle_signals=True)
        except OSError as exc:
            raise ConfigError(f"cannot listen on 127.0.0.1:{args.port}: {exc.strerror}", field="--port") from exc
        await server.start()
        print(f"TSHOCK_URL={server.url}", flush=True)
        print(f"TSHOCK_TOKEN={server.token}", flush=True)
        accounts = ", ".join(f"{name}/{password}" for name, password in world.passwords.items())
        print(f"polter terraria sim: seed {args.seed}; accounts {accounts}; Ctrl+C stops", file=sys.stderr)
        if config.companion_plugin:
            print(
                "polter terraria sim: also serving the Polter companion plugin's /polter/v1/world (stock TShock "
                "has no such route; --vanilla leaves it out)",
                file=sys.stderr,
            )
        await server.wait()

    try:
        asyncio.run(serve())
    except KeyboardInterrupt:
        pass
    return 0
