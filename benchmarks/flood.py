"""A 5 MB ``cat`` in a pane as the user sees it: Polter inside a real outer terminal, against bash in the same.

The outer terminal is tmux (its own server, no config). Two of its sessions, the same size: one runs Polter
(``python -m polter`` with one bash pane: the window and its session host daemon, as a user starts it), the
other runs bash. The same command is typed in each (``tmux send-keys``) and the time runs from its Enter
until the file's last line is on the outer terminal's screen, read the same way for both: ``tmux
capture-pane`` every :data:`POLL` seconds, asked over one control-mode connection (no process per look,
so the looks can be frequent and cost either contender next to nothing). So Polter's time holds everything
between the PTY and the person: the host's screen engine, the frames to the window, Textual's drawing and the
outer terminal parsing what Polter wrote.

Files (about 5 MB each, the same every run): ``colours``, 12 colour changes a line (16, 256 and 24-bit);
``log``, one colour a line and plain words, like build or test output; ``seq``, ``seq 1 1000000``'s
output. Sizes 160x45 and 80x24. Rounds alternate between the two sessions, so a change in machine
load hits both alike; the load average is printed with the figures.

Then the last screen (``--lag-rounds``): the same files ``cat`` in a session host's pane (`HostedTerminal`,
in this process, a shell that stays: no exit forces a frame), the time from the pane's last output to the
frame that carries the file's last line. Target: within one frame (1/60 s) of the output stopping (the
window then draws it at its next composition, 1/120 s; ``benchmarks/terminal_latency.py --outer`` times
that path through tmux).

``--engine``: the screen engine alone instead, the same files as the PTY hands them on (CR LF) in 32 KiB
feeds, CPU time, best of three; compiled, or pure Python with ``POLTER_PURE_PYTHON=1``.

Target: Polter within 2x tmux on every file at both sizes. Run: ``.venv/bin/python benchmarks/flood.py``
(``--sizes 80x24``, ``--files log``, ``--rounds N``, ``--lag-rounds N`` narrow it; ``--rounds 0``: the lag only). The last line is JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _sessions import BASH, ControlClient, kill_session, private_dirs, work_dir, write_config  # noqa: E402

from polter.host.hosted_terminal import HostedTerminal  # noqa: E402
from polter.terminal import _native  # noqa: E402
from polter.terminal.launch import LaunchSpec  # noqa: E402
from polter.terminal.screen import TerminalScreen  # noqa: E402

SIZES = ((160, 45), (80, 24))
MEGABYTES = 5
ROUNDS = 3
TARGET_RATIO = 2.0
POLL = 0.005
"""Seconds between two looks at a screen: a 0.2 s reference is then known to within a few percent."""
TIMEOUT = 180.0
LAG_ROUNDS = 3
ENGINE_FEED = 32_768
FRAME = 1 / 60
"""The last screen's target: its frame within one frame of the output stopping."""
COLOURS = ("\x1b[1;31m", "\x1b[33m", "\x1b[38;5;208m", "\x1b[38;2;0;200;120m", "\x1b[48;5;236m", "\x1b[36m")
LEVELS = ("\x1b[32mINFO\x1b[0m ", "\x1b[33mWARN\x1b[0m ", "\x1b[1;31mERROR\x1b[0m", "\x1b[2mDEBUG\x1b[0m")
WORDS = "the quick brown fox jumps over the lazy dog error warn colour build test pass fail".split()
LAST_LINE = "end of the flood, the last line"


def colours_file(folder: Path) -> Path:
    """About 5 MB of lines with 12 colour changes each (16, 256 and 24-bit colour), and a last line."""
    generator = random.Random(5)
    return _write(folder / "colours.txt", lambda: "".join(
        generator.choice(COLOURS) + generator.choice(WORDS) + "\x1b[0m " for _ in range(12)))  # fmt: skip


def log_file(folder: Path) -> Path:
    """About 5 MB of log-like lines: a time, one coloured level, plain words (as build or test output)."""
    generator = random.Random(6)
    clock = iter(range(10**9))

    def line() -> str:
        tick = next(clock)
        words = " ".join(generator.choice(WORDS) for _ in range(generator.randint(4, 16)))
        return f"12:{tick // 6000 % 60:02d}:{tick // 100 % 60:02d}.{tick % 100:02d} {generator.choice(LEVELS)} {words}"

    return _write(folder / "log.txt", line)


def seq_file(folder: Path) -> Path:
    """What ``seq 1 1000000`` prints (6.9 MB), and a last line."""
    path = folder / "seq.txt"
    path.write_text("".join(f"{n}\n" for n in range(1, 1_000_001)) + LAST_LINE + "\n")
    return path


def _write(path: Path, line: Any) -> Path:
    lines, size = [], 0
    while size < MEGABYTES * 1_000_000:
        lines.append(line() + "\n")
        size += len(lines[-1])
    path.write_text("".join(lines) + LAST_LINE + "\n")
    return path


FILES = {"colours": colours_file, "log": log_file, "seq": seq_file}


class OuterTerminal:
    """A tmux server of our own with a session per contender, read and typed into over one control connection."""

    def __init__(self, size: tuple[int, int]) -> None:
        self.socket = f"polter-flood-{os.getpid()}-{size[0]}x{size[1]}"
        self.size = size
        self._client: ControlClient | None = None

    def tmux(self, *args: str, check: bool = True) -> str:
        command = ["tmux", "-L", self.socket, "-f", "/dev/null", *args]
        return subprocess.run(command, check=check, capture_output=True, text=True, timeout=60).stdout

    def start(self, name: str, command: str) -> None:
        env = [f"-e{key}={os.environ[key]}" for key in ("POLTER_CONFIG_DIR", "POLTER_STATE_DIR", "POLTER_RUNTIME_DIR")]
        columns, lines = self.size
        self.tmux("new-session", "-d", "-s", name, "-x", str(columns), "-y", str(lines), *env, "-e", "PS1=$ ", command)
        self.tmux("set-option", "-t", name, "status", "off")  # the whole size is the pane's
        self.tmux("set-option", "-t", name, "window-size", "manual")  # the control connection does not resize it

    @property
    def client(self) -> ControlClient:
        if self._client is None:
            self._client = ControlClient(self.socket, "bash")
        return self._client

    def keys(self, name: str, *keys: str) -> None:
        self.client.command(" ".join(("send-keys", "-t", name, *keys)))

    def screen(self, name: str) -> str:
        return "\n".join(self.client.command(f"capture-pane -p -t {name}"))

    def wait(self, name: str, condition: Any, what: str, timeout: float = TIMEOUT) -> float:
        """Look at the screen every :data:`POLL` seconds until ``condition(screen)``; when it was first seen."""
        deadline = time.perf_counter() + timeout
        while True:
            shown = self.screen(name)
            if condition(shown):
                return time.perf_counter()
            if time.perf_counter() > deadline:
                raise TimeoutError(f"{name}: {what} not on the screen after {timeout} s:\n{shown}")
            time.sleep(POLL)

    def kill(self) -> None:
        if self._client is not None:
            self._client.close()
        self.tmux("kill-server", check=False)


PROMPT = re.compile(r"[$#] *\W? *$", re.MULTILINE)  # "$ ", or the sandbox's "bash-5.2# " (and a pane's border)


def _prompted(shown: str) -> bool:
    return PROMPT.search(shown) is not None


def one_round(outer: OuterTerminal, name: str, path: Path) -> float:
    """``cat PATH`` in session ``name``: seconds from its Enter until the last line is on the screen."""
    outer.keys(name, "clear", "Enter")
    outer.wait(name, lambda shown: LAST_LINE not in shown and "clear" not in shown, "a cleared screen")
    command = f"cat {path}"
    outer.keys(name, "-l", shlex.quote(command))
    outer.wait(name, lambda shown: command in shown, "the typed command")
    started = time.perf_counter()
    outer.keys(name, "Enter")
    return outer.wait(name, lambda shown: LAST_LINE in shown, "the last line") - started


async def last_frame_lag(path: Path, size: tuple[int, int]) -> float:
    """Seconds from a pane's last output (a ``cat`` of ``path``) to the frame that shows the file's last line."""
    shown = asyncio.Event()
    lag = 0.0

    def on_frame(dirty: set[int] | None) -> None:
        nonlocal lag
        screen = terminal.screen
        if not shown.is_set() and screen is not None and any(LAST_LINE in row for row in screen.display()):
            lag = time.monotonic() - terminal.last_output  # last_output is time.monotonic() of the latest read
            shown.set()

    spec = LaunchSpec(argv=("sh", "-c", f"cat {path}; sleep 1"))
    terminal = HostedTerminal(spec, on_frame=on_frame)
    terminal.start(*size)
    try:
        await asyncio.wait_for(shown.wait(), TIMEOUT)
    finally:
        await terminal.close()
        terminal.dispose()
    return lag


def last_frame_lags(paths: dict[str, Path], sizes: tuple[tuple[int, int], ...], rounds: int) -> list[dict[str, Any]]:
    figures = []
    for size in sizes:
        for file, path in paths.items():
            lags = [asyncio.run(last_frame_lag(path, size)) for _ in range(rounds)]
            figures.append({
                "file": file, "size": f"{size[0]}x{size[1]}", "lag_ms": [round(lag * 1000, 1) for lag in lags],
                "within_one_frame": max(lags) <= FRAME, "load_average": round(os.getloadavg()[0], 2),
            })  # fmt: skip
            print(
                f"  last screen, {file:8} {size[0]}x{size[1]}: its frame {figures[-1]['lag_ms']} ms after the "
                f"output stopped ({'within' if figures[-1]['within_one_frame'] else 'NOT within'} one frame, "
                f"{FRAME * 1000:.1f} ms)  (load {figures[-1]['load_average']})",
                flush=True,
            )
    return figures


def engine_rates(paths: dict[str, Path], sizes: tuple[tuple[int, int], ...]) -> list[dict[str, Any]]:
    """The screen engine alone: CPU seconds and MB/s to feed each file, best of three."""
    figures = []
    for file, path in paths.items():
        data = path.read_bytes().replace(b"\n", b"\r\n")  # what the terminal's output processing hands on
        for columns, lines in sizes:
            best = min(_engine_seconds(data, columns, lines) for _ in range(3))
            figures.append({
                "file": file, "size": f"{columns}x{lines}", "cpu_s": round(best, 3),
                "mb_per_s": round(len(data) / 1e6 / best, 1), "load_average": round(os.getloadavg()[0], 2),
            })  # fmt: skip
            print(f"  engine {file:8} {columns}x{lines}: {best:.3f} s CPU, {figures[-1]['mb_per_s']} MB/s "
                  f"(load {figures[-1]['load_average']})", flush=True)  # fmt: skip
    return figures


def _engine_seconds(data: bytes, columns: int, lines: int) -> float:
    screen = TerminalScreen(columns, lines)
    started = time.process_time()
    for start in range(0, len(data), ENGINE_FEED):
        screen.feed(data[start : start + ENGINE_FEED])
    return time.process_time() - started


def measure(
    sizes: tuple[tuple[int, int], ...] = SIZES,
    files: tuple[str, ...] = tuple(FILES),
    rounds: int = ROUNDS,
    lag_rounds: int = LAG_ROUNDS,
) -> dict[str, Any]:
    if shutil.which("tmux") is None:
        raise SystemExit("tmux is not installed (make system-tools installs it)")
    results: list[dict[str, Any]] = []
    with private_dirs() as folder:
        paths = {name: FILES[name](work_dir(folder)) for name in files}
        config = write_config(folder, 1)
        for size in sizes if rounds else ():  # --rounds 0: the last screen's lag only
            outer = OuterTerminal(size)
            session = f"flood-{os.getpid()}-{size[0]}x{size[1]}"
            try:
                outer.start("bash", f"{BASH} --norc --noprofile")
                outer.start("polter", f"{sys.executable} -m polter --config {config} --session {session}")
                outer.wait("polter", _prompted, "the pane's prompt", 120)
                outer.wait("bash", _prompted, "bash's prompt", 60)
                for file, path in paths.items():
                    times: dict[str, list[float]] = {"polter": [], "tmux": []}
                    for _ in range(rounds):
                        times["tmux"].append(one_round(outer, "bash", path))
                        times["polter"].append(one_round(outer, "polter", path))
                    results.append(_figures(file, path, size, times))
                    print(_line(results[-1]), flush=True)
            finally:
                kill_session(session)
                outer.kill()
        lags = last_frame_lags(paths, sizes, lag_rounds) if lag_rounds else []
    worst = max((result["ratio_best"] for result in results), default=0.0)
    first = results[0] if results else {"polter_best_s": None}
    return {
        "results": results,
        "worst_ratio_best": worst,
        "target_ratio": TARGET_RATIO,
        "meets_target": worst <= TARGET_RATIO,
        "last_screen": lags,
        "last_screen_within_one_frame": all(lag["within_one_frame"] for lag in lags),
        "polter_best_s": first["polter_best_s"],  # the first file at the first size (sandbox_load.py reads it)
        "load_average": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count(),
    }


def _figures(file: str, path: Path, size: tuple[int, int], times: dict[str, list[float]]) -> dict[str, Any]:
    polter, tmux = times["polter"], times["tmux"]
    megabytes = path.stat().st_size / 1e6
    return {
        "file": file,
        "size": f"{size[0]}x{size[1]}",
        "file_mb": round(megabytes, 2),
        "polter_s": [round(value, 3) for value in polter],
        "tmux_s": [round(value, 3) for value in tmux],
        "polter_best_s": round(min(polter), 3),
        "tmux_best_s": round(min(tmux), 3),
        "polter_mb_per_s": round(megabytes / min(polter), 1),
        "tmux_mb_per_s": round(megabytes / min(tmux), 1),
        "ratio_best": round(min(polter) / min(tmux), 2),
        "ratio_median": round(statistics.median(polter) / statistics.median(tmux), 2),
        "load_average": round(os.getloadavg()[0], 2),
    }


def _line(result: dict[str, Any]) -> str:
    return (
        f"  {result['file']:8} {result['size']:7} Polter {result['polter_s']} s ({result['polter_mb_per_s']} MB/s)  "
        f"tmux {result['tmux_s']} s ({result['tmux_mb_per_s']} MB/s)  {result['ratio_best']}x best, "
        f"{result['ratio_median']}x median  (load {result['load_average']})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", nargs="+", default=[f"{c}x{r}" for c, r in SIZES], metavar="COLUMNSxLINES")
    parser.add_argument("--files", nargs="+", default=list(FILES), choices=list(FILES))
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--lag-rounds", type=int, default=LAG_ROUNDS, help="rounds of the last screen's lag (0: none)")
    parser.add_argument("--engine", action="store_true", help="the screen engine alone (CPU time, MB/s)")
    args = parser.parse_args()
    sizes = tuple((int(c), int(r)) for c, r in (size.split("x") for size in args.sizes))
    if args.engine:
        core = "compiled" if _native.search_path() else "pure Python"
        print(f"the screen engine alone ({core}), {ENGINE_FEED // 1024} KiB feeds, best of 3:")
        with private_dirs() as folder:
            paths = {name: FILES[name](work_dir(folder)) for name in args.files}
            figures = {"engine": core, "results": engine_rates(paths, sizes)}
        print(json.dumps({"benchmark": "flood_engine", **figures, "cpus": os.cpu_count()}))
        return
    print(
        f"a {MEGABYTES} MB cat until its last line is on the outer terminal's screen (tmux), {args.rounds} rounds each:"
    )
    figures = measure(sizes, tuple(args.files), args.rounds, args.lag_rounds)
    verdict = "meets" if figures["meets_target"] else "MISSES"
    print(
        f"  worst Polter / tmux: {figures['worst_ratio_best']}x (best of rounds); {verdict} the target of "
        f"<= {TARGET_RATIO}x (load average {figures['load_average']} on {figures['cpus']} CPUs)"
    )
    print(json.dumps({"benchmark": "flood", **figures}))


if __name__ == "__main__":
    main()
