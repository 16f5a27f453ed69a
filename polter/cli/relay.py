"""``polter relay [NAME]``: the one way in from another machine, run there by ``ssh HOST polter relay ...``.

A window elsewhere (``polter attach HOST:NAME``, ``polter ls HOST``, ``polter kill HOST:NAME``, ``polter
--host HOST``) runs this through ``ssh``; its standard input and output carry the session protocol. It says
which Polter it is first (a greeting line), then reads the window's hello, then, by its options:

- ``polter relay [NAME]``: passes the session protocol between the window and session NAME (default: the one
  ``polter attach`` would choose), through the session's socket and its checks (:mod:`polter.session.relay`);
- ``--list``: answers the live sessions here, one line;
- ``--start OPTIONS [--session NAME]``: starts a session here as ``polter OPTIONS`` would, and answers its
  name (the window then attaches to it).
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
import sys
from typing import TYPE_CHECKING

from polter.cli._admin import refuse_inside_pane
from polter.errors import SessionError, SessionMissing

if TYPE_CHECKING:
    from polter.session.registry import SessionFiles


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    relay = commands.add_parser(
        "relay",
        help="the session protocol on standard input and output, for a window on another machine (run by ssh)",
        description="Run by `ssh HOST polter relay ...` for a window elsewhere: not for typing.",
    )
    relay.add_argument("name", nargs="?", help="the session (default: the one `polter attach` would choose)")
    mode = relay.add_mutually_exclusive_group()
    mode.add_argument("--list", action="store_true", help="answer the live sessions, then end")
    mode.add_argument(
        "--start",
        metavar="OPTIONS",
        help="start a session as `polter OPTIONS` would (one shell-quoted word), answer its name, then end",
    )
    relay.add_argument("--session", metavar="NAME", help="with --start: the new session's name")
    relay.set_defaults(handler=run_relay)


def run_relay(args: argparse.Namespace) -> int:
    refuse_inside_pane("`polter relay` (a window on the human's sessions)")
    return asyncio.run(_relay(args))


async def _relay(args: argparse.Namespace) -> int:
    from polter.cli.app import free_name
    from polter.cli.sessions import choose, survey
    from polter.session import protocol as wire
    from polter.session.daemon import start_host
    from polter.session.registry import check_name, session_files
    from polter.session.relay import pump, read_hello, stdio_streams

    window_in, window_out = await stdio_streams()
    window_out.write(wire.encode(wire.RelayGreeting()))
    reason = None
    try:
        await window_out.drain()
        hello = await read_hello(window_in)
        if args.name is not None and not (args.list or args.start is not None):
            reason = await pump(window_in, window_out, _running(args.name), hello)  # no survey: attach at once
            return await _ended(window_out, reason)
        live, notes = await survey()
        if args.list:
            window_out.write(wire.encode(wire.SessionList(sessions=live, notes=notes)))
        elif args.start is not None:
            options = shlex.split(args.start)
            taken = {info.name for info in live}
            if args.session is not None and check_name(args.session) in taken:
                raise SessionError(f"a session named {args.session} is already running")
            name = args.session or free_name(taken)
            await asyncio.to_thread(start_host, name, options)
            window_out.write(wire.encode(wire.Started(name=name)))
        else:
            reason = await pump(window_in, window_out, session_files(choose(live, args.name).name), hello)
    except SessionError as exc:
        window_out.write(wire.encode(wire.Refused(reason=str(exc), missing=isinstance(exc, SessionMissing))))
        reason = str(exc)
    except ConnectionError:
        return 1  # the window went away
    return await _ended(window_out, reason)


def _running(name: str) -> SessionFiles:
    """Session ``name``'s files, if its host runs (else :class:`SessionMissing`, as ``polter attach`` says it)."""
    from polter.session.registry import session_files

    files = session_files(name)
    if not files.host_alive():
        raise SessionMissing(f"no session named {name} is running (`polter ls` lists those that are)")
    return files


async def _ended(window_out: asyncio.StreamWriter, reason: str | None) -> int:
    """What was written reaches the window; the relay's exit status (``reason``: why it ended the window)."""
    try:
        await window_out.drain()
        window_out.close()
    except ConnectionError:
        pass
    if reason is not None:
        print(f"polter relay: {reason}", file=sys.stderr)
        return 1
    return 0
