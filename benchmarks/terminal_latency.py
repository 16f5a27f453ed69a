"""Keystroke-to-echo latency in a bash pane of a session while another pane floods output.

A real session host daemon (its own process, as ``polter`` starts it: it reads the PTYs and runs the
screen engines) with four bash panes, and a window on it: the app, headless (``run_test``), 200×60,
in this process. A key is posted to the app as the driver would, and the time is taken when pane 1
renders the row that shows the echoed character (``render_line`` — the frame that goes to the
terminal): the key travels to the host, to bash, back to the host, and as a frame to the window. Each
sample types one character on an empty prompt, then erases it (not timed), at a brisk human pace: one
key every :data:`KEY_INTERVAL` seconds (a fast typist's 10 keys a second), measured from key to key.

Measured in one run, so machine load affects all figures alike:

- ``raw PTY``: the same keystroke written straight to a bash PTY and read back (no Textual, no
  screen engine, no session): the floor set by the kernel and bash;
- ``idle``: the window with the other panes at their prompts (the same-run reference);
- ``flood``: the same while pane 2 runs a program writing a coloured line (16, 256 and 24-bit colour)
  as fast as it can; how much it got written is reported too, to show it was flooding.

Idle and flood samples alternate in rounds within one window, so a change in machine load (the
machine is shared) hits both alike; the load average is reported with the figures.

``--outer``: the same through a real outer terminal, as the user sees it. Polter runs in a tmux session
(``python -m polter``: the window and its host daemon, 200×60, the same four panes); the keys are typed
with ``tmux send-keys`` and the time runs until the echo is on tmux's screen (``capture-pane``, asked
over one tmux control-mode connection as fast as it answers, well under a millisecond a look), so
it includes Textual writing the frame and the outer terminal parsing it. The reference there: bash
alone in a tmux session of the same server, read the same way.

Target: echo p99 < 16 ms during the flood (both modes). Run: ``.venv/bin/python
benchmarks/terminal_latency.py [--outer]``; ``measure()`` returns the figures (``benchmarks/terminal.py``
calls it). The last line is JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import polter.window  # noqa: F401  # before Textual: the app's frame rate (TEXTUAL_FPS) is set when Textual is imported
from textual import constants, events
from textual.strip import Strip

from polter.terminal.launch import LaunchSpec
from polter.host.pty import PtyProcess
from polter.window.terminal_view import TerminalView
from polter.window.app import PolterApp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _sessions import BASH, ControlClient, kill_session, private_dirs, start_session, window, work_dir, write_config  # noqa: E402
from support.waiting import wait_until  # noqa: E402  (the tests' one way to wait: poll with a deadline)

_until = partial(wait_until, timeout=30)

SIZE = (200, 60)
TARGET_P99_MS = 16.0
KEY_INTERVAL = 0.1
KEYS = "abcdefghijklmnopqrstuvwxyz"
FLOOD = (
    r"yes $'\e[1;31merror\e[0m \e[33mwarn\e[0m \e[38;5;208mcolour 208\e[0m "
    r"\e[38;2;0;200;120mtruecolour\e[0m \e[48;5;236m the quick brown fox jumps over the lazy dog \e[0m'"
)


def _bash() -> LaunchSpec:
    return LaunchSpec(argv=(BASH, "--norc", "--noprofile"), env={"PS1": "$ "}, title="bash")


class EchoProbe:
    """Times from posting a key to the app until the pane renders ``$ <key>``."""

    def __init__(self, app: PolterApp, terminal: TerminalView) -> None:
        self.app = app
        self.terminal = terminal
        self._expected: str | None = None
        self._seen = asyncio.Event()
        self._next_key = 0.0
        render_line = terminal.render_line

        def timed_render_line(y: int) -> Strip:
            strip = render_line(y)
            if self._expected is not None and strip.text.rstrip() == self._expected:
                self._seen.set()
            return strip

        terminal.render_line = timed_render_line  # type: ignore[method-assign]

    async def _press_and_see(self, key: str, expected: str) -> float:
        self._expected = expected
        self._seen.clear()
        started = time.perf_counter()
        self.app.post_message(events.Key(key, key if len(key) == 1 else None))
        await asyncio.wait_for(self._seen.wait(), 10)
        elapsed = time.perf_counter() - started
        self._expected = None
        return elapsed

    async def sample(self, character: str) -> float:
        """One timed keystroke and one untimed erase, each starting :data:`KEY_INTERVAL` after the last."""
        await self._pace()
        elapsed = await self._press_and_see(character, f"$ {character}")
        await self._pace()
        await self._press_and_see("backspace", "$")
        return elapsed

    async def _pace(self) -> None:
        now = time.perf_counter()
        if now < self._next_key:
            await asyncio.sleep(self._next_key - now)
        self._next_key = max(now, self._next_key) + KEY_INTERVAL


FLOOD_SCRIPT = r"""
import sys, time
line = sys.argv[2].encode() + b"\n"
written, counted, out = 0, time.monotonic(), sys.stdout.buffer
while True:
    out.write(line * 64)
    out.flush()
    written += len(line) * 64
    if time.monotonic() - counted > 0.05:
        counted = time.monotonic()
        with open(sys.argv[1], "w") as report:
            report.write(str(written))
"""
"""The flooding program: coloured lines as fast as the pane takes them, counting what it wrote."""

FLOOD_LINE = (
    "\x1b[1;31merror\x1b[0m \x1b[33mwarn\x1b[0m \x1b[38;5;208mcolour 208\x1b[0m "
    "\x1b[38;2;0;200;120mtruecolour\x1b[0m \x1b[48;5;236m the quick brown fox jumps over the lazy dog \x1b[0m"
)


async def _app_latencies(samples: int, warmup: int, rounds: int) -> tuple[list[float], list[float], float]:
    """Echo latencies (seconds) in pane 1 of a window on a real session host daemon, with the other panes
    idle and while pane 2 floods, in alternating rounds (so a change in machine load hits both alike),
    and pane 2's MB/s (what the flooding program got written: the host reads it as fast as that)."""
    idle: list[float] = []
    flood: list[float] = []
    flood_bytes = flood_seconds = 0.0
    with private_dirs() as folder:
        script = work_dir(folder) / "flood.py"
        script.write_text(FLOOD_SCRIPT)
        counter = work_dir(folder) / "written"
        start_session("latency", write_config(folder, 4))
        try:
            async with window("latency", SIZE) as (app, pilot):
                panes = app.session_screen.grid.panes
                await _until(
                    lambda: (
                        all(
                            "$" in "".join(pane.terminal.screen_model.display())
                            for pane in panes
                            if pane.terminal.screen_model is not None
                        )
                        and all(pane.terminal.screen_model is not None for pane in panes)
                    )
                )
                echo = panes[0].terminal
                await _until(lambda: app.focused is echo)
                probe = EchoProbe(app, echo)

                def written() -> int:
                    try:
                        return int(counter.read_text() or 0)
                    except (OSError, ValueError):
                        return 0

                for index in range(warmup):
                    await probe.sample(KEYS[index % len(KEYS)])
                per_round = max(1, samples // rounds)
                command = f"{sys.executable} {script} {counter} $'{FLOOD_LINE}'"
                for _ in range(rounds):
                    idle += [await probe.sample(KEYS[index % len(KEYS)]) for index in range(per_round)]
                    counter.unlink(missing_ok=True)
                    await pilot.press("ctrl+b", "2", *command, "enter", "ctrl+b", "1")
                    await _until(lambda: written() > 1_000_000)
                    await _until(lambda: app.focused is echo)
                    before, started = written(), time.perf_counter()
                    flood += [await probe.sample(KEYS[index % len(KEYS)]) for index in range(per_round)]
                    flood_bytes += written() - before
                    flood_seconds += time.perf_counter() - started
                    panes[1].terminal.send(b"\x03")
                    await _quiet(written)
                    await asyncio.sleep(0.5)  # the flood's last frames are drawn before the next idle round
        finally:
            kill_session("latency")
    return idle, flood, flood_bytes / flood_seconds / 1e6


async def _quiet(written: Callable[[], int], calm: float = 0.2) -> None:
    """Until the flooding program has written nothing for ``calm`` seconds."""
    last, since = written(), time.monotonic()
    while time.monotonic() - since < calm:
        await asyncio.sleep(0.02)
        if written() != last:
            last, since = written(), time.monotonic()


async def _raw_pty_latencies(samples: int, warmup: int) -> list[float]:
    """The floor: a keystroke written to a bash PTY and its echo read back, nothing else."""
    output = bytearray()
    arrived = asyncio.Event()

    def on_output(data: bytes) -> None:
        output.extend(data)
        arrived.set()

    process = PtyProcess.spawn(_bash(), columns=100, lines=30, on_output=on_output, on_exit=lambda _code: None)
    try:
        await _until(lambda: b"$ " in output)
        latencies = []
        for index in range(warmup + samples):
            character = KEYS[index % len(KEYS)].encode()
            output.clear()
            started = time.perf_counter()
            process.write(character)
            while character not in output:
                arrived.clear()
                await asyncio.wait_for(arrived.wait(), 10)
            latencies.append(time.perf_counter() - started)
            output.clear()
            process.write(b"\x7f")
            while b"\x08" not in output:
                arrived.clear()
                await asyncio.wait_for(arrived.wait(), 10)
        return latencies[warmup:]
    finally:
        await process.aclose()


def _percentiles_ms(latencies: list[float]) -> dict[str, float]:
    ordered = sorted(latencies)
    p99_index = min(len(ordered) - 1, max(0, round(0.99 * len(ordered)) - 1))
    return {
        "p50_ms": round(statistics.median(ordered) * 1000, 2),
        "p99_ms": round(ordered[p99_index] * 1000, 2),
        "max_ms": round(ordered[-1] * 1000, 2),
    }


def measure(samples: int = 200, warmup: int = 20, rounds: int = 4) -> dict[str, Any]:
    """Echo latency figures: raw PTY floor, the app idle (reference) and during a flood."""

    async def run() -> dict[str, Any]:
        load_at_start = os.getloadavg()[0]
        raw = await _raw_pty_latencies(samples, warmup)
        idle, flood, throughput = await _app_latencies(samples, warmup, rounds)
        figures: dict[str, Any] = {
            "samples": len(flood),
            "raw_pty": _percentiles_ms(raw),
            "idle": _percentiles_ms(idle),
            "flood": _percentiles_ms(flood),
            "flood_pane_mb_per_s": round(throughput, 2),
        }
        figures["flood_p99_vs_idle_p99"] = round(figures["flood"]["p99_ms"] / max(figures["idle"]["p99_ms"], 0.01), 2)
        figures["target_p99_ms"] = TARGET_P99_MS
        figures["meets_target"] = figures["flood"]["p99_ms"] < TARGET_P99_MS
        figures["load_average"] = round(os.getloadavg()[0], 2)
        figures["load_average_at_start"] = round(load_at_start, 2)
        figures["cpus"] = os.cpu_count()
        figures["screen_fps"] = constants.MAX_FPS
        return figures

    return asyncio.run(run())


def report(figures: dict[str, Any]) -> None:
    """The figures of :func:`measure` as lines for people (``benchmarks/terminal.py`` prints them too)."""
    print(f"keystroke-to-echo latency, {figures['samples']} samples each (ms), screen at {figures['screen_fps']} Hz:")
    for name in ("raw_pty", "idle", "flood"):
        row = figures[name]
        print(f"  {name:8} p50 {row['p50_ms']:7.2f}   p99 {row['p99_ms']:7.2f}   max {row['max_ms']:7.2f}")
    print(
        f"  flood pane throughput: {figures['flood_pane_mb_per_s']} MB/s; load average "
        f"{figures['load_average_at_start']} at the start, {figures['load_average']} at the end, "
        f"on {figures['cpus']} CPUs"
    )
    verdict = "meets" if figures["meets_target"] else "MISSES"
    print(
        f"  flood p99 {figures['flood']['p99_ms']} ms {verdict} the target of < {TARGET_P99_MS:.0f} ms "
        f"(idle p99 in the same run: {figures['idle']['p99_ms']} ms)"
    )


class OuterProbe:
    """Types a key into a tmux session and times until its echo is on tmux's screen."""

    def __init__(self, client: ControlClient, target: str) -> None:
        self.client = client
        self.target = target
        self._next_key = 0.0

    def screen(self) -> list[str]:
        return self.client.command(f"capture-pane -p -t {self.target}")

    def _press_and_see(self, key: str, seen: Callable[[list[str]], bool]) -> float:
        started = time.perf_counter()
        self.client.command(f"send-keys -t {self.target} {key}")
        deadline = started + 10
        while not seen(self.screen()):
            if time.perf_counter() > deadline:
                raise TimeoutError(f"no echo of {key} on the screen: {self.screen()}")
        return time.perf_counter() - started

    def sample(self, character: str) -> float:
        """One timed keystroke and one untimed erase, each :data:`KEY_INTERVAL` after the last."""
        self._pace()
        echoed = re.compile(rf"\$ {character}(\s|│|$)")
        elapsed = self._press_and_see(character, lambda rows: any(echoed.search(row) for row in rows))
        self._pace()
        self._press_and_see("BSpace", lambda rows: not any(echoed.search(row) for row in rows))
        return elapsed

    def _pace(self) -> None:
        now = time.perf_counter()
        if now < self._next_key:
            time.sleep(self._next_key - now)  # the benchmark's own pace between keys, not a wait for a result
        self._next_key = max(now, self._next_key) + KEY_INTERVAL


def _outer_latencies(samples: int, warmup: int, rounds: int) -> tuple[list[float], list[float], list[float], float]:
    """Through tmux: bash alone (the reference), Polter's pane 1 with the others idle, and while pane 2
    floods, in alternating rounds; and pane 2's MB/s."""
    bash_alone: list[float] = []
    idle: list[float] = []
    flood: list[float] = []
    flood_bytes = flood_seconds = 0.0
    socket = f"polter-latency-{os.getpid()}"
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    with private_dirs() as folder:
        script = work_dir(folder) / "flood.py"
        script.write_text(FLOOD_SCRIPT)
        counter = work_dir(folder) / "written"
        config = write_config(folder, 4)
        session = f"latency-outer-{os.getpid()}"
        env = " ".join(f"{key}={shlex.quote(os.environ[key])}" for key in
                       ("POLTER_CONFIG_DIR", "POLTER_STATE_DIR", "POLTER_RUNTIME_DIR"))  # fmt: skip
        polter = f"env {env} PS1='$ ' {sys.executable} -m polter --config {config} --session {session}"
        columns, lines = SIZE
        for name, command in (("polter", polter), ("bash", f"env PS1='$ ' {BASH} --norc --noprofile")):
            subprocess.run([*tmux, "new-session", "-d", "-s", name, "-x", str(columns), "-y", str(lines), command],
                           check=True)  # fmt: skip
            subprocess.run([*tmux, "set-option", "-t", name, "status", "off"], check=True)
            subprocess.run([*tmux, "set-option", "-t", name, "window-size", "manual"], check=True)
        client = ControlClient(socket, "bash")
        try:
            polter_probe, bash_probe = OuterProbe(client, "polter"), OuterProbe(client, "bash")
            deadline = time.monotonic() + 120
            while sum(row.count("$") for row in polter_probe.screen()) < 4:  # every pane at its prompt
                if time.monotonic() > deadline:
                    raise TimeoutError(f"Polter's panes did not start: {polter_probe.screen()}")
                time.sleep(0.1)  # polling the screen with a deadline
            while not any(row.startswith("$") for row in bash_probe.screen()):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"bash did not start: {bash_probe.screen()}")
                time.sleep(0.1)

            def written() -> int:
                try:
                    return int(counter.read_text() or 0)
                except (OSError, ValueError):
                    return 0

            for index in range(warmup):
                polter_probe.sample(KEYS[index % len(KEYS)])
                bash_probe.sample(KEYS[index % len(KEYS)])
            per_round = max(1, samples // rounds)
            command = f"{sys.executable} {script} {counter} $'{FLOOD_LINE}'"
            for _ in range(rounds):
                for index in range(per_round):
                    bash_alone.append(bash_probe.sample(KEYS[index % len(KEYS)]))
                    idle.append(polter_probe.sample(KEYS[index % len(KEYS)]))
                counter.unlink(missing_ok=True)
                _keys(client, "C-b 2", f"-l {shlex.quote(command)}", "Enter", "C-b 1")
                deadline = time.monotonic() + 60
                while written() < 1_000_000:
                    if time.monotonic() > deadline:
                        raise TimeoutError("the flood did not start")
                    time.sleep(0.02)
                before, started = written(), time.perf_counter()
                flood += [polter_probe.sample(KEYS[index % len(KEYS)]) for index in range(per_round)]
                flood_bytes += written() - before
                flood_seconds += time.perf_counter() - started
                _keys(client, "C-b 2", "C-c", "C-b 1")
                asyncio.run(_quiet(written))
                time.sleep(0.5)  # the flood's last frames are drawn before the next idle round
        finally:
            client.close()
            kill_session(session)
            subprocess.run([*tmux, "kill-server"], check=False)
    return bash_alone, idle, flood, flood_bytes / flood_seconds / 1e6


def _keys(client: ControlClient, *keys: str) -> None:
    """Keys to Polter's window one group at a time, a moment apart: a pane switch (prefix, number) must
    have happened before the next keys, or they go to the pane that had the focus."""
    for key in keys:
        client.command(f"send-keys -t polter {key}")
        time.sleep(0.2)  # the benchmark's pace between key groups, not a wait for a result


def measure_outer(samples: int = 200, warmup: int = 20, rounds: int = 4) -> dict[str, Any]:
    """Echo latency through a real outer terminal: bash in tmux (reference), Polter idle and flooding."""
    if shutil.which("tmux") is None:
        raise SystemExit("tmux is not installed (make system-tools installs it)")
    load_at_start = os.getloadavg()[0]
    bash_alone, idle, flood, throughput = _outer_latencies(samples, warmup, rounds)
    figures: dict[str, Any] = {
        "mode": "outer terminal (tmux)",
        "samples": len(flood),
        "raw_pty": _percentiles_ms(bash_alone),  # the floor here: bash in tmux, read the same way
        "idle": _percentiles_ms(idle),
        "flood": _percentiles_ms(flood),
        "flood_pane_mb_per_s": round(throughput, 2),
    }
    figures["flood_p99_vs_idle_p99"] = round(figures["flood"]["p99_ms"] / max(figures["idle"]["p99_ms"], 0.01), 2)
    figures["target_p99_ms"] = TARGET_P99_MS
    figures["meets_target"] = figures["flood"]["p99_ms"] < TARGET_P99_MS
    figures["load_average"] = round(os.getloadavg()[0], 2)
    figures["load_average_at_start"] = round(load_at_start, 2)
    figures["cpus"] = os.cpu_count()
    figures["screen_fps"] = constants.MAX_FPS
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description="keystroke-to-echo latency under a flood")
    parser.add_argument("--outer", action="store_true", help="through a real outer terminal (tmux)")
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()
    figures = measure_outer(args.samples) if args.outer else measure(args.samples)
    if args.outer:
        print("through tmux; raw_pty is bash alone in tmux, read the same way")
    report(figures)
    print(json.dumps({"benchmark": "terminal_latency", **figures}))


if __name__ == "__main__":
    main()
