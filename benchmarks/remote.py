"""A session reached over SSH against the same session attached here, and the bytes a flood puts on the wire
against tmux attached over the same SSH.

A real sshd on a loopback port (tests/support/sshd.py: a generated host key, a key of its own, nothing of the
machine's ssh set-up) whose login has this process's environment, so that ``ssh bench polter relay NAME`` reaches
the very session a window here reaches through its socket: every figure has its same-run reference.

- **echo**: keystroke to echo in a bash pane (benchmarks/terminal_latency.py's probe: the key posted to the app
  until the pane renders it), a window over ssh against a window here, in alternating rounds. Target: p50 within
  2 ms of the local p50.
- **attach**, the headline: what the user sees. ``polter attach big`` (here) and ``polter attach bench:big`` (over
  ssh) typed into a shell in an outer tmux of 160x45, from the keys until tmux's screen (``tmux capture-pane``)
  shows the first complete frame: every one of the four panes (10,000-line scrollbacks, benchmarks/attach.py's)
  with its last line. Over ssh twice: cold (Polter's ControlMaster ended first: this attach's ssh connects and
  becomes the master) and over the open connection (the master an attach made before, as for a reconnection, the
  window after ``--host`` or the next attach within a minute). Alternating rounds. Target: at most 2x the local
  time. The stages, same run: a new window in this process (headless, no terminal) until every pane has drawn its
  last line, here, over the master and cold; ``ssh bench true`` cold and over the master; ssh until the relay's
  greeting cold and over the master; ``polter relay NAME`` here until its greeting, and what the relay used to
  import (``polter.wire.messages``).
- **wire**: a 5 MB coloured ``cat`` (benchmarks/flood.py's file) in a pane of a window attached over ssh, until
  its last line is on the window's screen, then detach; against the same file in a tmux pane attached with
  ``ssh -tt bench tmux attach`` in a terminal of the same size (Polter's own screen engine as that terminal).
  The bytes are those of the connection's TCP stream, encrypted, each way, counted by a relay between ssh and
  sshd (ssh's ``ProxyCommand``, the same for both). Goal: fewer bytes than tmux's.

Run: ``.venv/bin/python benchmarks/remote.py``. The last line is JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _sessions import kill_session, private_dirs, start_session, until, window, work_dir, write_config  # noqa: E402
from attach import attach_once, fill  # noqa: E402
from flood import LAST_LINE, colours_file  # noqa: E402
from support.sshd import VENV_BIN, SshHost, ssh_client  # noqa: E402
from terminal_latency import KEYS, EchoProbe  # noqa: E402

import polter.window  # noqa: E402, F401  (the frame rate, before Textual is imported)
from polter.wire.ssh import RelayLink, SshTarget, control_options  # noqa: E402

HOST = "bench"
ECHO_SIZE = (160, 45)
ECHO_SAMPLES = 60
ONLY = os.environ.get("POLTER_BENCH_ONLY", "")
"""``wire`` (or ``echo,attach``): only those parts (the others are long)."""
ROUNDS = 3
TARGET_ECHO_DELTA_MS = 2.0
TARGET_ATTACH_RATIO = 2.0
COUNTS = "POLTER_BENCH_COUNTS"
"""The folder where the counting relay of each ssh connection writes its bytes (``down up``)."""
COUNTER = r"""
import os, signal, socket, sys, threading
server = socket.create_connection((sys.argv[1], int(sys.argv[2])))
folder = os.environ.get("POLTER_BENCH_COUNTS")
counts = [0, 0]
def save(*_):
    if folder:
        with open(os.path.join(folder, f"connection-{os.getpid()}"), "w") as out:
            out.write(f"{counts[0]} {counts[1]}")
    if _:
        os._exit(0)
for sig in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
    signal.signal(sig, save)
def up():
    while data := os.read(0, 65536):
        server.sendall(data)
        counts[1] += len(data)
    server.shutdown(socket.SHUT_WR)
threading.Thread(target=up, daemon=True).start()
while data := server.recv(65536):
    view = memoryview(data)
    while view:
        view = view[os.write(1, view):]
    counts[0] += len(data)
save()
"""
"""ssh's ProxyCommand: the TCP stream to sshd, passed on and counted each way."""


def start_sshd(folder: Path) -> SshHost:
    """An sshd whose login ``bench`` has this process's Polter folders (the same sessions) and a home of its own."""
    env = {name: os.environ[name] for name in ("POLTER_CONFIG_DIR", "POLTER_STATE_DIR", "POLTER_RUNTIME_DIR", "PS1")}
    home = folder / "home"
    home.mkdir()
    env |= {"HOME": str(home), "PATH": f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin"}
    sshd = SshHost(folder / "sshd", {HOST: env})
    sshd.start()
    counter = folder / "count.py"
    counter.write_text(COUNTER)
    client = ssh_client(folder / "client", [sshd], proxy_command=f"{sys.executable} {counter} %h %p")
    os.environ["PATH"] = f"{client}:{os.environ['PATH']}"
    return sshd


async def echo_round(name: str, target: Any) -> list[float]:
    async with window(name, ECHO_SIZE, target) as (app, _pilot):
        terminal = app.session_screen.grid.panes[0].terminal
        terminal.focus()
        await until(lambda: app.focused is terminal)
        await until(lambda: terminal.screen_model is not None and "$" in terminal.screen_model.display()[0])
        probe = EchoProbe(app, terminal)
        for character in KEYS[:5]:  # warm-up
            await probe.sample(character)
        return [await probe.sample(KEYS[index % len(KEYS)]) for index in range(ECHO_SAMPLES)]


def p50_ms(samples: list[float]) -> float:
    return round(statistics.median(samples) * 1000, 2)


def counting(folder: Path) -> Path:
    """A fresh folder for the counts of the ssh connections made from now on."""
    folder.mkdir(parents=True)
    os.environ[COUNTS] = str(folder)
    return folder


def transferred(folder: Path) -> tuple[int, int]:
    """The bytes of the connections counted in ``folder`` (sshd to here, here to sshd), once each closed."""
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = [path.read_text().split() for path in folder.glob("connection-*")]
        if found and all(len(pair) == 2 for pair in found):
            return sum(int(down) for down, _ in found), sum(int(up) for _, up in found)
        time.sleep(0.05)  # the relay writes its counts as the connection closes
    raise TimeoutError("the counting relay wrote no counts")


async def polter_flood(name: str, path: Path, counts: Path) -> tuple[int, int, float]:
    end_master()  # a connection of its own, counted alone
    counting(counts)
    started = time.perf_counter()
    async with window(name, ECHO_SIZE, SshTarget(HOST, name)) as (app, pilot):
        [pane] = app.session_screen.grid.panes
        terminal = pane.terminal
        terminal.focus()
        await until(lambda: app.focused is terminal)
        await pilot.press(*f"clear; cat {path}", "enter")
        await until(lambda: any(LAST_LINE in row for row in terminal.screen_model.display()), timeout=300)
        elapsed = time.perf_counter() - started
    end_master()  # its connection closes: the counts are written
    sent, received = transferred(counts)
    return sent, received, elapsed


async def tmux_flood(path: Path, counts: Path) -> tuple[int, int, float]:
    """The same file in a tmux pane, attached over the same ssh in a terminal of the same size."""
    from polter.host.hosted_terminal import HostedTerminal
    from polter.terminal.launch import LaunchSpec

    socket = f"polter-remote-bench-{os.getpid()}"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    bash = shutil.which("bash") or "/bin/bash"
    subprocess.run([*tmux, "new-session", "-d", "-s", "bench", "-x", str(ECHO_SIZE[0]), "-y", str(ECHO_SIZE[1]),
                    f"PS1='$ ' {bash} --norc --noprofile"], check=True)  # fmt: skip
    counting(counts)
    started = time.perf_counter()
    attach = ("ssh", "-tt", HOST, f"TERM=xterm-256color tmux -L {socket} attach -t bench")
    outer = HostedTerminal(LaunchSpec(argv=attach, env={"TERM": "xterm-256color"}))
    outer.start(*ECHO_SIZE)
    try:
        await until(lambda: outer.screen is not None and "$" in "".join(outer.screen.display()), timeout=60)
        subprocess.run([*tmux, "send-keys", "-t", "bench", f"clear; cat {path}", "Enter"], check=True)
        await until(lambda: any(LAST_LINE in row for row in outer.screen.display()), timeout=300)
        elapsed = time.perf_counter() - started
        subprocess.run([*tmux, "detach-client", "-s", "bench"], check=True)
        process = outer.process
        assert process is not None
        await asyncio.wait_for(process.wait(), 30)
    finally:
        await outer.close()
        subprocess.run([*tmux, "kill-server"], check=False)
    sent, received = transferred(counts)
    return sent, received, elapsed


def measure() -> dict[str, Any]:
    if shutil.which("tmux") is None:
        raise SystemExit("tmux is not installed (make system-tools installs it)")
    with private_dirs() as folder:
        sshd = start_sshd(folder)
        try:
            return asyncio.run(_measure(folder, sshd))
        finally:
            sshd.stop()


async def _measure(folder: Path, sshd: SshHost) -> dict[str, Any]:
    figures: dict[str, Any] = {"load_before": round(os.getloadavg()[0], 2)}
    parts = ONLY.split(",") if ONLY else ["echo", "attach", "wire"]
    names = {name: panes for name, panes, part in (("echo", 1, "echo"), ("big", 4, "attach"), ("flood", 1, "wire"))
             if part in parts}  # fmt: skip
    for name, panes in names.items():
        (folder / name).mkdir()
        start_session(name, write_config(folder / name, panes))
    try:
        if "echo" in parts:
            await _echo(figures)
        if "attach" in parts:
            await _attach(figures)
        if "wire" in parts:
            await _wire(folder, figures)
    finally:
        for name in names:
            kill_session(name)
    figures["cpus"] = os.cpu_count()
    return figures


async def _echo(figures: dict[str, Any]) -> None:
    local_echo: list[float] = []
    remote_echo: list[float] = []
    for _ in range(ROUNDS):  # alternating: a change in the machine's load hits both alike
        local_echo += await echo_round("echo", None)
        remote_echo += await echo_round("echo", SshTarget(HOST, "echo"))
    figures["echo"] = {
        "local_p50_ms": p50_ms(local_echo),
        "ssh_p50_ms": p50_ms(remote_echo),
        "delta_ms": round(p50_ms(remote_echo) - p50_ms(local_echo), 2),
        "samples_each": len(local_echo),
        "meets_target": p50_ms(remote_echo) - p50_ms(local_echo) <= TARGET_ECHO_DELTA_MS,
        "load": round(os.getloadavg()[0], 2),
    }


POLL = 0.01
"""Seconds between two reads of the outer tmux's screen: each is a ``tmux capture-pane`` process, which at a
millisecond's pace took a core from what it measured."""


class OuterTmux:
    """The user's terminal: a tmux of its own (no config, no status line) whose one pane runs bash, where a command
    is typed and the screen read as tmux shows it."""

    def __init__(self, size: tuple[int, int]) -> None:
        self.tmux = ["tmux", "-L", f"polter-remote-outer-{os.getpid()}", "-f", "/dev/null"]
        bash = shutil.which("bash") or "/bin/bash"
        env = {**os.environ, "PATH": f"{VENV_BIN}:{os.environ['PATH']}"}
        subprocess.run([*self.tmux, "new-session", "-d", "-s", "outer", "-x", str(size[0]), "-y", str(size[1]),
                        f"PS1='$ ' {bash} --norc --noprofile"], check=True, env=env)  # fmt: skip
        for option in (("status", "off"), ("default-terminal", "tmux-256color"), ("escape-time", "0")):
            subprocess.run([*self.tmux, "set", "-g", *option], check=True)

    def keys(self, *keys: str) -> None:
        subprocess.run([*self.tmux, "send-keys", "-t", "outer", *keys], check=True)

    def screen(self) -> str:
        return subprocess.run([*self.tmux, "capture-pane", "-p", "-t", "outer"], capture_output=True, text=True,
                              check=True).stdout  # fmt: skip

    async def attach_once(self, target: str) -> float:
        """``polter attach TARGET`` typed at the prompt, until tmux's screen shows every pane's last line; then
        detach (prefix then d) and wait for the prompt."""
        self.keys("clear", "Enter")
        await until(lambda: "last-of" not in (screen := self.screen()) and screen.startswith("$"), timeout=60,
                    interval=0.02)  # fmt: skip
        started = time.perf_counter()
        self.keys(f"polter attach {target}", "Enter")
        await until(self.shows_every_pane, timeout=120, interval=POLL)
        elapsed = time.perf_counter() - started
        self.keys("C-b", "d")
        await until(lambda: "[detached from session" in self.screen(), timeout=60, interval=0.02)
        return elapsed

    def shows_every_pane(self) -> bool:
        screen = self.screen()
        return all(f"last-of-{number}" in screen for number in range(1, 5))

    def close(self) -> None:
        subprocess.run([*self.tmux, "kill-server"], check=False)


def ssh_round_trip(*options: str) -> float:
    """The reference for what a connection costs before Polter does anything: ``ssh HOST true``."""
    started = time.perf_counter()
    subprocess.run(["ssh", *options, HOST, "true"], check=True, timeout=60)
    return time.perf_counter() - started


def end_master() -> None:
    """End Polter's ssh ControlMaster to the host: the next connection is a cold one (and makes the master)."""
    subprocess.run(["ssh", *control_options(), "-O", "exit", HOST], capture_output=True, timeout=30, check=False)


async def greeting_once() -> float:
    """From starting ssh until the relay's greeting (what comes before the session's first byte)."""
    started = time.perf_counter()
    link = await RelayLink.open(HOST, ["big"])
    elapsed = time.perf_counter() - started
    await link.aclose()
    return elapsed


def process_once(*argv: str, until_line: bool = False) -> float:
    """A process here from its start until its first line (``until_line``) or its end."""
    started = time.perf_counter()
    with subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL) as process:
        assert process.stdout is not None and process.stdin is not None
        if until_line:
            process.stdout.readline()
        else:
            process.wait()
        elapsed = time.perf_counter() - started
        process.stdin.close()
    return elapsed


def stages() -> dict[str, list[float]]:
    """What an attach over ssh waits for before the session's first byte, stage by stage."""
    found: dict[str, list[float]] = {}
    for _ in range(ROUNDS):
        end_master()
        cold = {"ssh_true_cold_s": ssh_round_trip(), "greeting_cold_s": asyncio.run(greeting_once())}
        warm = {
            "ssh_true_master_s": ssh_round_trip(*control_options()),
            "greeting_master_s": asyncio.run(greeting_once()),
        }
        here = {
            "relay_start_here_s": process_once(sys.executable, "-m", "polter", "relay", "big", until_line=True),
            "protocol_import_here_s": process_once(sys.executable, "-c", "import polter.wire.messages"),
            "python_here_s": process_once(sys.executable, "-c", "pass"),
        }
        for key, value in {**cold, **warm, **here}.items():
            found.setdefault(key, []).append(round(value, 3))
    return found


async def _attach(figures: dict[str, Any]) -> None:
    await fill("big")
    local: list[float] = []
    cold: list[float] = []
    warm: list[float] = []
    window_local: list[float] = []
    window_cold: list[float] = []
    window_warm: list[float] = []
    outer = OuterTmux(ECHO_SIZE)
    try:
        for _ in range(ROUNDS):  # alternating; "cold": no ssh connection to the host before (Polter's master ended)
            local.append(await outer.attach_once("big"))
            end_master()
            cold.append(await outer.attach_once(f"{HOST}:big"))
            warm.append(await outer.attach_once(f"{HOST}:big"))
        for _ in range(ROUNDS):
            window_local.append(await attach_once("big"))
            end_master()
            window_cold.append(await attach_once("big", SshTarget(HOST, "big")))
            window_warm.append(await attach_once("big", SshTarget(HOST, "big")))
    finally:
        outer.close()

    def ratio(values: list[float], reference: list[float]) -> float:
        return round(statistics.median(values) / statistics.median(reference), 2)

    def rounded(values: list[float]) -> list[float]:
        return [round(value, 3) for value in values]

    figures["attach"] = {
        "local_s": rounded(local),
        "ssh_open_s": rounded(warm),
        "open_ratio_median": ratio(warm, local),
        "open_meets_target": statistics.median(warm) <= TARGET_ATTACH_RATIO * statistics.median(local),
        "ssh_cold_s": rounded(cold),
        "cold_ratio_median": ratio(cold, local),
        "cold_meets_target": statistics.median(cold) <= TARGET_ATTACH_RATIO * statistics.median(local),
        "load": round(os.getloadavg()[0], 2),
        "stages": {
            "window_in_process_local_s": rounded(window_local),
            "window_in_process_ssh_open_s": rounded(window_warm),
            "window_in_process_ssh_cold_s": rounded(window_cold),
            **await asyncio.to_thread(stages),
        },
        "stages_load": round(os.getloadavg()[0], 2),
    }


async def _wire(folder: Path, figures: dict[str, Any]) -> None:
    path = colours_file(work_dir(folder / "flood"))  # where the pane (in its sandbox) can read it
    polter: list[tuple[int, int, float]] = []
    tmux: list[tuple[int, int, float]] = []
    for round_ in range(ROUNDS):  # alternating: tmux's count varies with how far its client falls behind
        polter.append(await polter_flood("flood", path, folder / f"counts-polter-{round_}"))
        tmux.append(await tmux_flood(path, folder / f"counts-tmux-{round_}"))
    polter_median = statistics.median(sent for sent, _, _ in polter)
    tmux_median = statistics.median(sent for sent, _, _ in tmux)
    figures["wire"] = {
        "file_bytes": path.stat().st_size,
        "polter_sent_bytes": [sent for sent, _, _ in polter],
        "polter_received_bytes": [received for _, received, _ in polter],
        "polter_s": [round(elapsed, 2) for _, _, elapsed in polter],
        "tmux_sent_bytes": [sent for sent, _, _ in tmux],
        "tmux_received_bytes": [received for _, received, _ in tmux],
        "tmux_s": [round(elapsed, 2) for _, _, elapsed in tmux],
        "ratio_median": round(polter_median / tmux_median, 3),
        "meets_goal": polter_median < tmux_median,
        "load": round(os.getloadavg()[0], 2),
    }


def main() -> None:
    figures = measure()
    if "echo" in figures:
        echo = figures["echo"]
        print(f"keystroke to echo, p50 over {echo['samples_each']} samples each (load {echo['load']}):")
        verdict = "meets" if echo["meets_target"] else "misses"
        print(f"  here {echo['local_p50_ms']} ms, over ssh {echo['ssh_p50_ms']} ms: +{echo['delta_ms']} ms "
              f"({verdict} the target of +{TARGET_ECHO_DELTA_MS} ms)")  # fmt: skip
    if "attach" in figures:
        attach = figures["attach"]
        print(f"`polter attach` typed in a tmux of {ECHO_SIZE[0]}x{ECHO_SIZE[1]}, until tmux shows the first complete "
              f"frame of 4 panes x 10,000 lines (load {attach['load']}):")  # fmt: skip
        for label, key, verdict in (("over the open ssh connection", "open", attach["open_meets_target"]),
                                    ("over a cold ssh", "cold", attach["cold_meets_target"])):  # fmt: skip
            print(f"  here {attach['local_s']} s, {label} {attach[f'ssh_{key}_s']} s: "
                  f"{attach[f'{key}_ratio_median']}x median ({'meets' if verdict else 'misses'} the target of "
                  f"{TARGET_ATTACH_RATIO}x)")  # fmt: skip
        print(f"  stages (load {attach['stages_load']}):")
        for stage, values in attach["stages"].items():
            print(f"    {stage}: {values}")
    if "wire" in figures:
        wire = figures["wire"]
        print(f"a {wire['file_bytes'] / 1e6:.1f} MB coloured flood over ssh, bytes from sshd (load {wire['load']}):")
        verdict = "fewer" if wire["meets_goal"] else "more"
        print(f"  Polter {wire['polter_sent_bytes']} in {wire['polter_s']} s, tmux {wire['tmux_sent_bytes']} in "
              f"{wire['tmux_s']} s: {wire['ratio_median']}x median ({verdict} than tmux's)")  # fmt: skip
    print(json.dumps(figures))


if __name__ == "__main__":
    main()
