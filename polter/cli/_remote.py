"""The command line's side of sessions on other hosts (docs/remote.md): ``polter attach HOST:NAME``, ``polter ls
HOST`` and ``--hosts``, ``polter kill HOST:NAME``, ``polter --host HOST``, each through ``ssh HOST polter relay``.

The first connection to a host is made here, before a window takes the terminal, so that ssh may ask for a
password or a key's passphrase; the window's own connections (and its reconnections) never ask.
"""

from __future__ import annotations

import argparse
import asyncio
import shlex
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from polter.errors import SessionError

if TYPE_CHECKING:
    from polter.wire.messages import AttentionNotice, SessionInfo, SessionList
    from polter.wire.ssh import SshTarget


def configured_hosts(config_path: Any = None) -> tuple[str | None, list[str]]:
    """``host`` and ``hosts`` of polter.toml."""
    from polter.launch.config import load_config

    config = load_config(config_path)
    return config.host, list(config.hosts)


def target_of(text: str | None, local_names: set[str]) -> SshTarget | None:
    """The session on another host that ``text`` names (``HOST:NAME``, ``HOST:``, or a host of polter.toml that
    is no local session's name), else None: a session here."""
    from polter.wire.ssh import SshTarget, parse_target

    if text is None:
        return None
    host, name = parse_target(text)
    if host is not None:
        return SshTarget(host, name)
    default, hosts = configured_hosts()
    if text not in local_names and text in {*hosts, *([default] if default else [])}:
        return SshTarget(text)
    return None


async def listing(host: str) -> SessionList:
    from polter.wire.messages import SessionList
    from polter.wire.ssh import relay_request

    answer = await relay_request(host, ["--list"])
    if not isinstance(answer, SessionList):
        raise SessionError(f"the relay on {host} answered {answer.type} to --list")
    return answer


def attach_remote(target: SshTarget) -> int:
    """Attach to the session on the host (with no name, the one ``polter attach`` would choose there: the relay
    chooses) and show it: one ssh connection, made before the window takes the terminal (ssh may ask for a
    password), which the window then uses. ssh starts first: its connection and the relay's start on the host
    overlap the window's imports (Textual's among them)."""
    from polter.wire import ssh

    async def run() -> int:
        link = await ssh.spawn_window_link(target, interactive=True)
        import polter.window  # noqa: F401  (sets Textual's frame rate before Textual is imported)
        from polter.window.app import PolterApp  # lazy: imported while ssh connects

        client = await ssh.connect(target, link=link)
        attached = ssh.SshTarget(target.host, client.welcome.info.name)
        app = PolterApp(attached, on_remote_attention=alert_locally(), client=client)
        await app.run_async()
        return app.return_code or 0

    return asyncio.run(run())


def start_remote(host: str, args: argparse.Namespace) -> int:
    """``polter --host HOST [options]``: start the session on HOST (with HOST's config, roles and servers), then
    attach to it."""
    from polter.wire.messages import Started
    from polter.wire.ssh import SshTarget, relay_request

    relay_args = ["--start", shlex.join(_forwarded_options(args))]
    if args.session is not None:
        relay_args += ["--session", args.session]
    answer = asyncio.run(relay_request(host, relay_args))
    if not isinstance(answer, Started):
        raise SessionError(f"the relay on {host} answered {answer.type} to --start")
    return attach_remote(SshTarget(host, answer.name))


def _forwarded_options(args: argparse.Namespace) -> list[str]:
    """The options of ``polter`` the session on the host starts with (``--config`` is this machine's file)."""
    options: list[str] = []
    for pane in args.pane or ():
        options += ["--pane", pane]
    for flag, on in (("--restore", args.restore), ("--demo", args.demo)):
        if on:
            options.append(flag)
    for flag, value in (
        ("--panes", args.panes),
        ("--layout", args.layout),
        ("--prefix", args.prefix),
        ("--palette-key", args.palette_key),
    ):
        if value is not None:
            options += [flag, str(value)]
    return options


async def survey_hosts(hosts: list[str]) -> tuple[list[tuple[str, SessionInfo]], list[str]]:
    """Every host's live sessions, and one line for each host that could not be asked (the others still are)."""
    results = await asyncio.gather(*(listing(host) for host in hosts), return_exceptions=True)
    found: list[tuple[str, SessionInfo]] = []
    problems: list[str] = []
    for host, result in zip(hosts, results, strict=True):
        if isinstance(result, SessionError):
            problems.append(str(result))
        elif isinstance(result, BaseException):
            raise result
        else:
            problems += [f"{host}: {note}" for note in result.notes]
            found += [(host, info) for info in result.sessions]
    return found, problems


def kill_remote(target: SshTarget, wait: float) -> int:
    from polter.wire import ssh
    from polter.wire.methods import KillParams

    if target.name is None:
        raise SessionError(f"name the session to end: `polter kill {target.host}:NAME` (`polter ls {target.host}`)")

    async def kill() -> SessionInfo:
        client = await ssh.connect(target, attach=False, interactive=True)
        await client.call(KillParams(reason=f"ended with `polter kill {target.label}`"))
        try:
            await asyncio.wait_for(client.closed.wait(), wait)  # the host closes every connection as it ends
        except TimeoutError:
            await client.aclose()
            raise SessionError(f"session {target.label} did not end within {wait:.0f} s") from None
        return client.welcome.info

    info = asyncio.run(kill())
    print(f"ended session {target.label} ({info.running} running program{'s' if info.running != 1 else ''} ended)")
    return 0


def alert_locally() -> Any:
    """What a window on another host's session does besides telling its terminal when a pane needs the human:
    this machine's desktop notification and ``notify_command`` (polter.toml here), naming ``HOST:NAME``."""
    from polter.host.desktop import DesktopNotifications
    from polter.host.notify_command import notify_command_env, run_notify_command
    from polter.launch.config import load_config

    settings = load_config().notify_settings()
    desktop = DesktopNotifications()
    running: set[asyncio.Task[Any]] = set()

    def alert(label: str, notice: AttentionNotice, terminal_notifies: bool) -> None:
        if notice.event not in settings.events:
            return
        headline = f"{notice.headline()} on {label}"
        jobs: list[Coroutine[Any, Any, object]] = []
        if settings.desktop and not terminal_notifies:
            jobs.append(desktop.send(headline, notice.message))
        if settings.command:
            env = {**notify_command_env(notice, session=label, adapter=""), "POLTER_HOST": label.partition(":")[0]}
            jobs.append(run_notify_command(settings.command, notice, env))
        for job in jobs:
            task = asyncio.get_running_loop().create_task(job)
            running.add(task)
            task.add_done_callback(running.discard)

    return alert
