"""``polter relay [NAME]``: the one way in from another machine, run there by ``ssh HOST polter relay ...``.

A window elsewhere (``polter attach HOST:NAME``, ``polter ls HOST``, ``polter kill HOST:NAME``, ``polter
--host HOST``) runs this through ``ssh``; its standard input and output carry the session protocol. It says
which Polter it is first (a greeting line), then reads the window's hello, then, by its options:

- ``polter relay [NAME]``: passes the session protocol between the window and session NAME (default: the one
  ``polter attach`` would choose), through the session's socket and its checks (:mod:`polter.wire.relay`);
- ``--list``: answers the live sessions here, one line;
- ``--start OPTIONS [--session NAME]``: starts a session here as ``polter OPTIONS`` would, and answers its
  name (the window then attaches to it).
"""

from __future__ import annotations

import contextlib
import shlex
import sys
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any, TypeVar

from polter.cli._admin import refuse_inside_pane
from polter.errors import SessionError, SessionMissing

T = TypeVar("T")

if TYPE_CHECKING:
    import argparse

    from pydantic import BaseModel

    from polter.wire.registry import SessionFiles


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
    return _relay(args.name, listing=args.list, start=args.start, session=args.session)


def run_named_relay(name: str) -> int:
    """``polter relay NAME``, the way every window over ssh comes in: without building the command line's parser
    (each command's module) or loading asyncio, which would add a tenth of a second to every attach over ssh."""
    return _relay(name, listing=False, start=None, session=None)


def _relay(name: str | None, *, listing: bool, start: str | None, session: str | None) -> int:
    refuse_inside_pane("`polter relay` (a window on the human's sessions)")
    from polter.wire import relay  # standard library only: what `relay NAME` needs starts at once

    relay.write_all(OUT, relay.greeting_line())
    try:
        hello = relay.read_line(sys.stdin.buffer, relay.HELLO_TIMEOUT)
    except (TimeoutError, ValueError) as exc:
        return _refuse(f"not a Polter window (it did not say hello): {exc}")
    problem = relay.hello_problem(hello)
    if problem is not None:
        return _refuse(problem)
    try:
        if listing or start is not None:
            return _answer(_in_asyncio(_list_or_start(start, session)))
        files = _running(name) if name is not None else _in_asyncio(_chosen())
        try:
            reason = relay.pump(files.socket, hello, sys.stdin.buffer, OUT)
        except OSError as exc:
            raise SessionError(f"cannot reach session {files.name} at {files.socket}: {exc}") from exc
    except SessionError as exc:
        return _refuse(str(exc), missing=isinstance(exc, SessionMissing))
    except BrokenPipeError:
        return 1  # the window went away
    if reason is not None:
        print(f"polter relay: {reason}", file=sys.stderr)
        return 1
    return 0


OUT = 1
"""The relay's standard output: the window's side of the stream."""


def _running(name: str) -> SessionFiles:
    """Session ``name``'s files, if its host runs (else :class:`SessionMissing`, as ``polter attach`` says it)."""
    from polter.wire.registry import session_files

    files = session_files(name)
    if not files.host_alive():
        raise SessionMissing(f"no session named {name} is running (`polter ls` lists those that are)")
    return files


async def _chosen() -> SessionFiles:
    """The session ``polter attach`` would choose here."""
    from polter.cli.sessions import choose, survey
    from polter.wire.registry import session_files

    live, _notes = await survey()
    return session_files(choose(live, None).name)


def _in_asyncio(work: Coroutine[Any, Any, T]) -> T:
    import asyncio  # lazy: not for `polter relay NAME`

    return asyncio.run(work)


async def _list_or_start(start: str | None, session: str | None) -> BaseModel:
    import asyncio  # lazy: as above

    from polter.cli.app import free_name
    from polter.cli.sessions import survey
    from polter.host.daemon import start_host
    from polter.wire import messages as wire
    from polter.wire.registry import check_name

    live, notes = await survey()
    if start is None:
        return wire.SessionList(sessions=live, notes=notes)
    options = shlex.split(start)
    taken = {info.name for info in live}
    if session is not None and check_name(session) in taken:
        raise SessionError(f"a session named {session} is already running")
    name = session or free_name(taken)
    await asyncio.to_thread(start_host, name, options)
    return wire.Started(name=name)


def _answer(message: BaseModel) -> int:
    from polter.wire import messages as wire
    from polter.wire.relay import write_all

    with contextlib.suppress(BrokenPipeError):
        write_all(OUT, wire.encode(message))
    return 0


def _refuse(reason: str, *, missing: bool = False) -> int:
    """Tell the window why not (a refusal it reads as one line), and end."""
    from polter.wire import messages as wire

    _answer(wire.Refused(reason=reason, missing=missing))
    print(f"polter relay: {reason}", file=sys.stderr)
    return 1
