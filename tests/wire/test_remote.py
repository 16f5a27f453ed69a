"""Sessions on other hosts, over a real sshd on loopback (tests/support/sshd.py): ``polter --host``, ``attach
HOST:NAME``, ``ls HOST`` across two hosts, ``kill HOST:NAME``, the relay's refusals, one line for each way a
host cannot be reached, and a window that reconnects when its ssh is killed mid-flood."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.keys import type_keys
from support.panes import BASH, bash_spec, screen_text
from support.polter_terminal import COLUMNS, LINES, polter, window
from support.session import attached, hosted
from support.sshd import OTHER_COMMIT, SshHost, control_master, login_env, other_polter, relay_links, ssh_client
from support.waiting import wait_until

from polter import __version__
from polter.wire import messages as wire
from polter.wire.installed import this_installation
from polter.wire.ssh import CONNECT_TIMEOUT, SshTarget, relay_request
from polter.wire.ssh import connect as connect_over_ssh
from polter.window.app import PolterApp

pytestmark = pytest.mark.e2e

HERE_COMMIT = this_installation().short_commit
HERE = this_installation().describe(__version__, wire.PROTOCOL_VERSION)

PANES = "notify_quiet = 0.5\n" + "".join(
    f'[[panes]]\nadapter = "shell"\nrole = "coder"\ncommand = ["{BASH}", "--norc", "--noprofile"]\n' for _ in range(2)
)


@dataclass
class Hosts:
    """Two sshds: ``alpha`` (also ``nopolter`` and ``oldpolter``, other logins of the same sshd) and ``beta``."""

    bin: Path
    envs: dict[str, dict[str, str]]
    sshds: list[SshHost]


@pytest.fixture(scope="module")
def hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Hosts]:
    base = tmp_path_factory.mktemp("ssh")
    envs = {name: login_env(base / f"{name}-dirs") for name in ("alpha", "beta")}
    for env in envs.values():
        Path(env["POLTER_CONFIG_DIR"], "polter.toml").write_text(PANES)
    envs["nopolter"] = login_env(base / "nopolter-dirs", path="/usr/bin:/bin")
    envs["oldpolter"] = login_env(base / "old-dirs", path=f"{other_polter(base / 'old', '0.0.9')}:/usr/bin:/bin")
    first = SshHost(base / "sshd-1", {name: envs[name] for name in ("alpha", "nopolter", "oldpolter")})
    second = SshHost(base / "sshd-2", {"beta": envs["beta"]})
    try:
        first.start()
        second.start()
        client = ssh_client(base / "client", [first, second], unreachable="down", stranger="stranger")
        yield Hosts(client, envs, [first, second])
    finally:
        for name in ("alpha", "beta"):
            _end_sessions(envs[name])
        first.stop()
        second.stop()


def _end_sessions(env: dict[str, str]) -> None:
    """End what a test left running on a host (its sessions are daemons)."""
    run = {**os.environ, **env}
    listed = subprocess.run([sys.executable, "-m", "polter", "ls", "--json"], env=run, capture_output=True, text=True)
    for info in json.loads(listed.stdout or "[]"):
        subprocess.run([sys.executable, "-m", "polter", "kill", info["name"]], env=run, capture_output=True)


@pytest.fixture(autouse=True)
def through_ssh(hosts: Hosts, monkeypatch: pytest.MonkeyPatch) -> None:
    """This machine's ``ssh`` is the fixture's (its config, keys and known hosts only)."""
    monkeypatch.setenv("PATH", f"{hosts.bin}:{os.environ['PATH']}")


def prompts(text: str) -> int:
    """bash's prompts on a screen (``$ ``, or ``# `` for root)."""
    return len(re.findall(r"[$#](?: |$)", text, re.MULTILINE))


def listed(*hosts: str) -> list[dict[str, object]]:
    result = polter("ls", *hosts, "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


# -- the relay ----------------------------------------------------------------------------------------


@asynccontextmanager
async def relay(name: str) -> AsyncIterator[tuple[asyncio.subprocess.Process, asyncio.Task[bytes]]]:
    """``polter relay NAME`` as ssh would run it, attached (its hello said, the welcome read); what it sends
    after that is read on, to its end."""
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "polter", "relay", name,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        limit=wire.LINE_LIMIT,
    )  # fmt: skip
    assert process.stdout is not None and process.stdin is not None
    greeting = wire.RelayGreeting.model_validate_json(await process.stdout.readline())
    assert greeting.version == __version__
    process.stdin.write(wire.encode(wire.Hello(attach=True)))
    assert isinstance(wire.decode_host(await process.stdout.readline()), wire.Welcome)
    rest = asyncio.create_task(process.stdout.read())
    try:
        yield process, rest
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
        await rest


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (b'{"type": "key", "pane": "p1", "key": "a", "sudo": true}\n', "line 3 from the window is not Polter's"),
        (b"rm -rf /\n", "line 3 from the window is not Polter's session protocol"),
        (b"x" * (wire.LINE_LIMIT + 1024), f"line 3 from the window is longer than {wire.LINE_LIMIT} bytes"),
    ],
    ids=["an unknown field", "not JSON", "oversized"],
)
async def test_the_relay_passes_on_only_the_protocol_and_a_bad_line_ends_it_not_the_session(
    line: bytes, said: str
) -> None:
    async with hosted([bash_spec()], name="relayed") as host, relay("relayed") as (process, _rest):
        assert process.stdin is not None and process.stderr is not None
        await wait_until(lambda: attached(host) == 1)
        process.stdin.write(wire.encode(wire.ResizeInput(pane="p1", columns=80, lines=24)))  # its program starts
        await wait_until(lambda: all(pane.terminal.running for pane in host.panes))
        process.stdin.write(line)
        with contextlib.suppress(ConnectionError):
            await process.stdin.drain()
        assert await asyncio.wait_for(process.wait(), 60) == 1
        stderr = (await process.stderr.read()).decode()
        assert said in stderr and "Traceback" not in stderr, stderr
        await wait_until(lambda: attached(host) == 0, message="the relay's window to be gone")
        assert not host.ended.is_set() and all(pane.terminal.running for pane in host.panes)
        async with relay("relayed") as (again, _):  # the session takes the next window as before
            await wait_until(lambda: attached(host) == 1)
            assert again.returncode is None


async def test_the_relay_refuses_a_window_of_another_version_and_names_no_such_session() -> None:
    async with hosted([bash_spec()], name="versioned"):
        process = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "polter", "relay", "versioned",
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        )  # fmt: skip
        assert process.stdout is not None and process.stdin is not None
        await process.stdout.readline()
        process.stdin.write(wire.encode(wire.Hello(version="0.0.1")))
        refused = wire.decode_host(await process.stdout.readline())
        assert isinstance(refused, wire.Refused) and "the window is Polter 0.0.1" in refused.reason
        assert await process.wait() == 1
    result = subprocess.run(
        [sys.executable, "-m", "polter", "relay", "nothere"],
        input=wire.encode(wire.Hello()), capture_output=True, timeout=60,
    )  # fmt: skip
    answer = wire.decode_host(result.stdout.splitlines()[1])
    assert isinstance(answer, wire.Refused) and answer.missing and "no session named nothere" in answer.reason


async def test_a_killed_relay_is_a_window_that_left() -> None:
    async with hosted([bash_spec()], name="killed") as host, relay("killed") as (process, _rest):
        assert process.stdin is not None
        process.stdin.write(wire.encode(wire.ResizeInput(pane="p1", columns=80, lines=24)))
        await wait_until(lambda: attached(host) == 1 and all(pane.terminal.running for pane in host.panes))
        process.kill()
        await process.wait()
        await wait_until(lambda: attached(host) == 0, message="the relay's window to be gone")
        assert not host.ended.is_set() and all(pane.terminal.running for pane in host.panes)


def test_the_relay_is_refused_inside_a_pane() -> None:
    """An agent in a pane must not reach the human's sessions through the relay (as through any control)."""
    result = subprocess.run(
        [sys.executable, "-m", "polter", "relay", "main"], input=wire.encode(wire.Hello()), capture_output=True,
        timeout=60, env={**os.environ, "POLTER_SANDBOX": "1"},
    )  # fmt: skip
    assert result.returncode != 0 and b"inside a pane's sandbox" in result.stderr and result.stdout == b"", result


# -- over ssh -----------------------------------------------------------------------------------------


async def test_start_on_a_host_type_detach_attach_again_and_kill(hosts: Hosts) -> None:
    async with window("--host", "alpha", "--session", "far") as first:
        await first.shows("@alpha")
        await wait_until(lambda: prompts(first.text()) >= 2, timeout=60, message=first.text)
        first.type("echo hi-from-$((6*7))\r")
        await first.shows("hi-from-42")
        first.type("\x02d")  # prefix then d: detach
        await first.shows("[detached from session alpha:far: polter attach alpha:far]")
        assert await first.exited() == 0
    [info] = listed("alpha")
    assert info["name"] == "far" and info["host"] == "alpha" and info["clients"] == 0 and info["running"] == 2
    assert Path(hosts.envs["alpha"]["POLTER_RUNTIME_DIR"], "sessions", "far.sock").is_socket()  # on "alpha"
    async with window("attach", "alpha:far") as second:
        await second.shows("hi-from-42")  # the screen as it was left
        second.type("\x02d")
        assert await second.exited() == 0
    result = polter("kill", "alpha:far")
    assert result.returncode == 0 and "ended session alpha:far (2 running programs ended)" in result.stdout, result
    assert listed("alpha") == []


async def test_ls_lists_the_sessions_of_two_hosts_and_of_the_configured_ones(
    hosts: Hosts, isolated_dirs: dict[str, Path]
) -> None:
    for host, name in (("alpha", "one"), ("beta", "two")):
        started = await relay_request(host, ["--start", "", "--session", name])
        assert started == wire.Started(name=name)
    result = polter("ls", "alpha", "beta")
    assert result.returncode == 0, result.stderr
    rows = [line.split()[0] for line in result.stdout.splitlines()[1:]]
    assert rows == ["alpha:one", "beta:two"]
    (isolated_dirs["config"] / "polter.toml").write_text('hosts = ["alpha", "beta"]\n')
    everywhere = polter("ls", "--hosts")
    assert [line.split()[0] for line in everywhere.stdout.splitlines()[1:]] == ["alpha:one", "beta:two"]
    refused = await asyncio.gather(relay_request("alpha", ["--start", "", "--session", "one"]), return_exceptions=True)
    assert "a session named one is already running" in str(refused[0])
    for target in ("alpha:one", "beta:two"):
        assert polter("kill", target).returncode == 0
    assert polter("ls", "alpha", "beta").stdout.strip() == "no sessions"


@pytest.mark.parametrize(
    ("host", "said"),
    [
        ("down", "cannot reach down over SSH (ssh: connect to host 127.0.0.1 port"),
        ("stranger", "cannot log in to stranger over SSH (" ),
        ("nopolter", "polter is not installed on nopolter (or not on the PATH of an SSH login there): install "
                     f"there the Polter this is ({HERE}): a clone of Polter's repository at commit {HERE_COMMIT} "
                     "with `make .venv/.installed` run in it"),
        ("oldpolter", f"oldpolter runs Polter 0.0.9 (protocol {wire.PROTOCOL_VERSION}) from "),
    ],
)  # fmt: skip
def test_each_way_a_host_cannot_be_used_is_one_line_saying_what_to_do(host: str, said: str) -> None:
    for command in (["ls", host], ["attach", f"{host}:main"], ["kill", f"{host}:main"], ["--host", host]):
        began = time.monotonic()
        result = polter(*command)
        assert time.monotonic() - began < CONNECT_TIMEOUT + 20, command  # never a hang
        assert result.returncode == 1, (command, result)
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and said in lines[0] and "Traceback" not in result.stderr, (command, result.stderr)
    if host == "oldpolter":  # both Polters, and the command that makes the host's this one
        clone = re.search(r" from (\S+) at ", lines[0])
        assert clone is not None and Path(clone[1], ".git", "HEAD").read_text().strip() == OTHER_COMMIT
        assert (
            f"at {OTHER_COMMIT[:10]} and this is {HERE}: update the one on oldpolter to this one's commit " in lines[0]
        )
        assert (
            f"`ssh oldpolter 'cd {clone[1]} && git fetch && git checkout {HERE_COMMIT} && make .venv/.installed'`"
            in lines[0]
        )


async def test_a_window_whose_ssh_is_killed_mid_flood_reconnects_and_nothing_is_lost(hosts: Hosts) -> None:
    started = await relay_request("alpha", ["--start", "", "--session", "flood"])
    assert isinstance(started, wire.Started)
    app = PolterApp(SshTarget("alpha", "flood"))
    async with app.run_test(size=(COLUMNS, LINES)) as pilot:
        await wait_until(lambda: app._session_screen is not None and app._session_screen.is_mounted, timeout=60)
        session = app.session_screen.session
        await wait_until(lambda: len(app.session_screen.grid.panes) == 2, timeout=60, message="the two panes")
        [pane, _other] = app.session_screen.grid.panes
        assert "@alpha" in str(pane.header.query_one("#badge-host").content)
        shown = lambda: screen_text(pane.terminal)  # noqa: E731
        await wait_until(lambda: prompts(shown()) >= 1, timeout=60, message=shown)
        pane.terminal.focus()
        await type_keys(pilot, "seq 1 300000 | sed s/^/row-/; echo flood-$((40+2))-done", enter=True)
        await wait_until(lambda: "row-" in shown(), timeout=60, message=shown)
        assert len(relay_links()) == 1
        os.kill(control_master("alpha"), signal.SIGKILL)  # the SSH connection dies mid-flood (the window's channel too)
        await wait_until(  # the header follows the reconnection's start a message later
            lambda: "reconnecting" in str(pane.header.query_one("#badge-host").content),
            message="the window to say it reconnects",
        )
        assert session.reconnection.active
        await wait_until(lambda: not session.reconnection.active, timeout=60, message="the window to attach again")
        assert not session.ended and [p.id for p in session.panes] == ["p1", "p2"]
        await wait_until(lambda: "flood-42-done" in shown(), timeout=90, message=shown)
        await type_keys(pilot, "echo after-$((1+1))", enter=True)
        await wait_until(lambda: "after-2" in shown(), timeout=30, message=shown)
        [info] = listed("alpha")
        assert info["running"] == 2 and info["clients"] == 1  # the session never noticed more than a window
    assert polter("kill", "alpha:flood").returncode == 0


NOTIFIED = """import json, os, sys
with open(sys.argv[1], "a") as log:
    log.write(json.dumps([*sys.argv[2:], os.environ["POLTER_SESSION"], os.environ["POLTER_HOST"]]) + "\\n")
"""


async def test_a_remote_pane_that_is_done_reaches_this_terminal_and_this_notify_command_naming_the_host(
    hosts: Hosts, isolated_dirs: dict[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log, script = tmp_path / "notified.jsonl", tmp_path / "notified.py"
    script.write_text(NOTIFIED)
    command = json.dumps([sys.executable, str(script), str(log)])
    (isolated_dirs["config"] / "polter.toml").write_text(f"notify_command = {command}\nnotify_desktop = false\n")
    for name in ("TMUX", "KITTY_WINDOW_ID", "WEZTERM_PANE", "WT_SESSION", "ConEmuPID", "LC_TERMINAL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM_PROGRAM", "iTerm.app")  # the window's table: iTerm2 shows OSC 9

    def runs() -> list[list[str]]:
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    assert await relay_request("alpha", ["--start", "", "--session", "heed"]) == wire.Started(name="heed")
    loop = "for i in 1 2 3 4 5 6 7 8 9 10; do echo tick $i; sleep 0.2; done; echo finished-$((0+2))"
    async with window("attach", "alpha:heed") as terminal:
        await wait_until(lambda: prompts(terminal.text()) >= 2, timeout=60, message=terminal.text)
        other = await connect_over_ssh(SshTarget("alpha", "heed"))
        try:  # pane 2 gets the loop from elsewhere (a second window would do it): nobody looks at it
            other.send(wire.PasteInput(pane="p2", text=loop))
            other.send(wire.KeyInput(pane="p2", key="enter"))
            await terminal.shows("finished-2")
        finally:
            await other.aclose()
        await wait_until(lambda: len(runs()) == 1, timeout=30, message=lambda: f"one notify_command run: {runs()}")
        assert runs() == [["2", "Shell", "coder", "done", "", "alpha:heed", "alpha"]]
        screen = terminal.terminal.screen
        assert screen is not None
        await wait_until(lambda: len(screen.notifications) == 1, message=lambda: str(list(screen.notifications)))
        assert list(screen.notifications) == ["Polter: pane 2 (Shell, coder) is done on alpha:heed"]
        assert polter("kill", "alpha:heed").returncode == 0
        await terminal.shows("session alpha:heed ended")


def test_the_check_the_error_lines_name_works_on_a_host_with_polter() -> None:
    result = subprocess.run(["ssh", "alpha", "polter", "--version"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0 and result.stdout.strip() == f"polter {__version__}", result


async def test_host_in_polter_toml_starts_the_session_there(hosts: Hosts, isolated_dirs: dict[str, Path]) -> None:
    (isolated_dirs["config"] / "polter.toml").write_text('host = "beta"\n')
    async with window("--session", "configured") as terminal:
        await terminal.shows("@beta")
        await terminal.shows("idle")  # the panes started there and settled (a narrow header sheds "running")
        terminal.type("\x02d")
        await terminal.shows("[detached from session beta:configured")
        assert await terminal.exited() == 0
    assert [info["name"] for info in listed("beta")] == ["configured"]
    assert polter("kill", "beta:configured").returncode == 0
