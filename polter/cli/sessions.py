"""``polter attach [NAME]``, ``polter ls`` and ``polter kill NAME``: sessions outlive their windows. A session on
another host is named ``HOST:NAME`` (``polter ls HOST``, ``--hosts``); :mod:`polter.cli._remote` reaches it."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import TYPE_CHECKING

from polter.cli._admin import add_json, print_json, print_table, refuse_inside_pane
from polter.errors import SessionError, SessionMissing

if TYPE_CHECKING:
    from polter.wire.messages import SessionInfo

KILL_WAIT = 15.0
"""Seconds ``polter kill`` waits for the host to end its programs (SIGHUP, SIGKILL after a grace period)."""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    attach = commands.add_parser("attach", help="show a running session again (its panes kept running)")
    attach.add_argument(
        "name",
        nargs="?",
        metavar="[HOST:]NAME",
        help="the session (default: the only one, or the last detached one); HOST:NAME or HOST: for one on "
        "another host (over ssh), or a host of polter.toml's hosts",
    )
    attach.set_defaults(handler=run_attach)
    listing = commands.add_parser("ls", help="list the running sessions (here, or on other hosts over ssh)")
    listing.add_argument("hosts", nargs="*", metavar="HOST", help="list the sessions on these hosts instead")
    listing.add_argument(
        "--hosts", dest="all_hosts", action="store_true", help="here and on every host of polter.toml's hosts"
    )
    add_json(listing)
    listing.set_defaults(handler=run_ls)
    kill = commands.add_parser("kill", help="end a session: every program in it (SIGHUP, then SIGKILL) and its gateway")
    kill.add_argument("name", metavar="[HOST:]NAME", help="the session to end")
    kill.set_defaults(handler=run_kill)


async def survey() -> tuple[list[SessionInfo], list[str]]:
    """The live sessions, and notes on what was found dead (and cleaned up): a host that was killed,
    a socket left behind. Never from inside a pane."""
    refuse_inside_pane("A session's window and controls (`polter attach`, `ls`, `kill`)")
    from polter.wire.registry import known_sessions

    live: list[SessionInfo] = []
    notes: list[str] = []
    for files in known_sessions():
        if files.host_alive():
            from polter.wire.client import SessionClient  # only for a live host: a first start goes without

            try:
                client = await SessionClient.connect(files, attach=False, timeout=5)
            except SessionError as exc:
                notes.append(f"session {files.name} does not answer: {exc}")
                continue
            live.append(client.welcome.info)
            await client.aclose()
            continue
        record = files.read_record()
        if record is not None:
            notes.append(
                f"session {files.name} ended unexpectedly: its host (pid {record.pid}, started "
                f"{record.started.astimezone():%Y-%m-%d %H:%M}) is gone, and its programs ended with it; "
                "`polter --restore` reopens its panes"
            )
        elif files.socket.exists():
            notes.append(f"removed the stale socket of session {files.name} (its host is gone)")
        files.remove()
    return live, notes


def print_notes(notes: list[str]) -> None:
    for note in notes:
        print(f"polter: {note}", file=sys.stderr)


def describe(info: SessionInfo) -> str:
    """``main: 4 panes (3 running), detached, started 14:02 in ~/src/app``"""
    clients = "detached" if not info.clients else f"{info.clients} window{'s' if info.clients > 1 else ''} attached"
    started = info.started.astimezone()
    when = f"{started:%H:%M}" if started.date() == time.localtime()[:3] else f"{started:%Y-%m-%d %H:%M}"
    return f"{info.name}: {info.panes} panes ({info.running} running), {clients}, started {when} in {info.cwd}"


def choose(live: list[SessionInfo], name: str | None) -> SessionInfo:
    """The session ``polter attach NAME`` means (the only one, or the detached one started last)."""
    if name is not None:
        for info in live:
            if info.name == name:
                return info
        running = ", ".join(info.name for info in live) or "none"
        raise SessionMissing(f"no session named {name} is running (running: {running})")
    if not live:
        raise SessionMissing("no session is running; start one with `polter`")
    detached = [info for info in live if not info.clients]
    return max(detached or live, key=lambda info: info.started)


def attach_window(name: str) -> int:
    """Run a window on session ``name`` until it detaches or the session ends (one on another host:
    :func:`polter.cli._remote.attach_remote`)."""
    import polter.window  # noqa: F401  (sets Textual's frame rate before Textual is imported)
    from polter.window.app import PolterApp
    from polter.wire.registry import session_files

    app = PolterApp(session_files(name))
    app.run()
    return app.return_code or 0


def run_attach(args: argparse.Namespace) -> int:
    from polter.cli._remote import attach_remote, target_of

    live, notes = asyncio.run(survey())
    remote = target_of(args.name, {info.name for info in live})
    if remote is not None:
        return attach_remote(remote)
    print_notes(notes)
    try:
        chosen = choose(live, args.name)
    except SessionMissing as exc:  # (a name that is no session here may be a machine: say how to reach one)
        if args.name is None:
            raise
        raise SessionMissing(f"{exc}; on a machine {args.name} over ssh: `polter attach {args.name}:`") from None
    return attach_window(chosen.name)


def run_ls(args: argparse.Namespace) -> int:
    from polter.cli._remote import configured_hosts, survey_hosts

    here = not args.hosts
    hosts = list(args.hosts)
    if args.all_hosts:
        here, hosts = True, [*hosts, *(host for host in configured_hosts()[1] if host not in hosts)]
    found: list[tuple[str | None, SessionInfo]] = []
    if here:
        live, notes = asyncio.run(survey())
        print_notes(notes)
        found += [(None, info) for info in live]
    problems: list[str] = []
    if hosts:
        remote, problems = asyncio.run(survey_hosts(hosts))
        found += remote
        print_notes(problems)
    if args.json:
        print_json([{**info.model_dump(mode="json"), "host": host} for host, info in found])
        return 1 if problems else 0
    if not found:
        print("no sessions")
        return 1 if problems else 0
    rows = []
    for host, info in found:
        started = info.started.astimezone()
        rows.append(
            [f"{host}:{info.name}" if host else info.name, info.panes, info.running, info.clients,
             f"{started:%Y-%m-%d %H:%M}", info.cwd, info.pid]
        )  # fmt: skip
    print_table(["NAME", "PANES", "RUNNING", "CLIENTS", "STARTED", "WHERE", "PID"], rows)
    return 1 if problems else 0


def run_kill(args: argparse.Namespace) -> int:
    from polter.cli._remote import kill_remote, target_of
    from polter.processes import process_exists
    from polter.wire.client import SessionClient
    from polter.wire.methods import KillParams
    from polter.wire.registry import session_files

    live, notes = asyncio.run(survey())
    remote = target_of(args.name, {info.name for info in live})
    if remote is not None:
        return kill_remote(remote, KILL_WAIT)
    print_notes(notes)
    info = choose(live, args.name)
    files = session_files(info.name)

    async def kill() -> None:
        client = await SessionClient.connect(files, attach=False)
        await client.call(KillParams(reason="ended with `polter kill`"))
        await client.aclose()

    asyncio.run(kill())
    deadline = time.monotonic() + KILL_WAIT
    while files.host_alive() or process_exists(info.pid):  # the lock goes first, the process a moment later
        if time.monotonic() > deadline:
            raise SessionError(f"session {info.name} (pid {info.pid}) did not end within {KILL_WAIT:.0f} s")
        time.sleep(0.05)
    print(f"ended session {info.name} ({info.running} running program{'s' if info.running != 1 else ''} ended)")
    return 0
