"""A 5 MB coloured ``cat`` in a pane, until its last line is on the window's screen, against tmux.

Polter: a real session host daemon (its own process: it reads the PTY and runs the screen engine) and
a window on it (the app, headless, in this process); the time runs from the Enter that starts ``cat``
until the window draws (``render_line``) the row with the file's last line. tmux: the same file
``cat`` in a detached tmux pane of the same size, until tmux signals the command ended (it has read,
and parsed into its screen, everything ``cat`` wrote: a PTY holds only a few KB). Rounds alternate
between the two, so a change in machine load hits both alike.

Target: Polter within 3x tmux's time. Run: ``.venv/bin/python benchmarks/flood.py``. The last line is JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _sessions import kill_session, private_dirs, start_session, until, window, work_dir, write_config  # noqa: E402

SIZE = (160, 45)
MEGABYTES = 5
ROUNDS = 3
TARGET_RATIO = 3.0
COLOURS = ("\x1b[1;31m", "\x1b[33m", "\x1b[38;5;208m", "\x1b[38;2;0;200;120m", "\x1b[48;5;236m", "\x1b[36m")
WORDS = "the quick brown fox jumps over the lazy dog error warn colour build test pass fail".split()
LAST_LINE = "end of the flood, the last line"


def flood_file(folder: Path) -> Path:
    """About 5 MB of coloured lines (16, 256 and 24-bit colour), the same every run, and a last line."""
    generator = random.Random(5)
    lines, size = [], 0
    while size < MEGABYTES * 1_000_000:
        line = "".join(generator.choice(COLOURS) + generator.choice(WORDS) + "\x1b[0m " for _ in range(12)) + "\n"
        lines.append(line)
        size += len(line)
    path = folder / "flood.txt"
    path.write_text("".join(lines) + LAST_LINE + "\n")
    return path


async def polter_round(app: Any, pilot: Any, path: Path) -> float:
    [pane] = app.session_screen.grid.panes
    terminal = pane.terminal
    seen = asyncio.Event()
    render_line = terminal.render_line

    def timed(y: int) -> Any:
        strip = render_line(y)
        if LAST_LINE in strip.text:
            seen.set()
        return strip

    await pilot.press(*"clear", "enter")  # the last round's last line leaves the screen before the clock starts
    await until(lambda: LAST_LINE not in "\n".join(terminal.screen_model.display()))
    terminal.render_line = timed
    try:
        await pilot.press(*f"cat {path}")
        await until(lambda: f"cat {path}" in "\n".join(terminal.screen_model.display()))
        started = time.perf_counter()
        await pilot.press("enter")
        await asyncio.wait_for(seen.wait(), 120)
        return time.perf_counter() - started
    finally:
        terminal.render_line = render_line


def tmux_round(socket: str, path: Path) -> float:
    tmux = ["tmux", "-L", socket, "-f", "/dev/null"]
    subprocess.run([*tmux, "send-keys", "-t", "bench", "clear", "Enter"], check=True)
    time.sleep(0.3)
    started = time.perf_counter()
    subprocess.run(
        [*tmux, "send-keys", "-t", "bench", f"cat {path}; tmux -L {socket} wait-for -S flood", "Enter"], check=True
    )
    subprocess.run([*tmux, "wait-for", "flood"], check=True, timeout=120)
    elapsed = time.perf_counter() - started
    shown = subprocess.run([*tmux, "capture-pane", "-p", "-t", "bench"], capture_output=True, text=True).stdout
    assert LAST_LINE in shown, shown
    return elapsed


def measure() -> dict[str, Any]:
    if shutil.which("tmux") is None:
        raise SystemExit("tmux is not installed (make system-tools installs it)")
    with private_dirs() as folder:
        path = flood_file(work_dir(folder))
        socket = f"polter-bench-{os.getpid()}"
        bash = shutil.which("bash") or "/bin/bash"
        subprocess.run(
            [
                "tmux",
                "-L",
                socket,
                "-f",
                "/dev/null",
                "new-session",
                "-d",
                "-s",
                "bench",
                "-x",
                str(SIZE[0]),
                "-y",
                str(SIZE[1] - 1),
                f"env PS1='$ ' {bash} --norc --noprofile",
            ],
            check=True,
        )
        start_session("flood", write_config(folder, 1))
        polter_times: list[float] = []
        tmux_times: list[float] = []

        async def run() -> None:
            async with window("flood", SIZE) as (app, pilot):
                [pane] = app.session_screen.grid.panes
                await until(
                    lambda: (
                        pane.terminal.screen_model is not None
                        and "$" in "\n".join(pane.terminal.screen_model.display())
                    )
                )
                for _ in range(ROUNDS):
                    tmux_times.append(tmux_round(socket, path))
                    polter_times.append(await polter_round(app, pilot, path))

        try:
            asyncio.run(run())
        finally:
            kill_session("flood")
            subprocess.run(["tmux", "-L", socket, "kill-server"], check=False)
        size = path.stat().st_size
    polter_best, tmux_best = min(polter_times), min(tmux_times)
    return {
        "file_mb": round(size / 1e6, 2),
        "polter_s": [round(value, 3) for value in polter_times],
        "tmux_s": [round(value, 3) for value in tmux_times],
        "polter_best_s": round(polter_best, 3),
        "tmux_best_s": round(tmux_best, 3),
        "polter_median_s": round(statistics.median(polter_times), 3),
        "tmux_median_s": round(statistics.median(tmux_times), 3),
        "polter_mb_per_s": round(size / polter_best / 1e6, 2),
        "ratio_best": round(polter_best / tmux_best, 2),
        "ratio_median": round(statistics.median(polter_times) / statistics.median(tmux_times), 2),
        "target_ratio": TARGET_RATIO,
        "meets_target": polter_best / tmux_best <= TARGET_RATIO,
        "load_average": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count(),
    }


def main() -> None:
    figures = measure()
    print(f"{figures['file_mb']} MB coloured cat until its last line is on the screen, {ROUNDS} rounds each:")
    print(
        f"  Polter (host daemon + window): {figures['polter_s']} s, best {figures['polter_best_s']} s "
        f"({figures['polter_mb_per_s']} MB/s)"
    )
    print(f"  tmux (detached pane):          {figures['tmux_s']} s, best {figures['tmux_best_s']} s")
    verdict = "meets" if figures["meets_target"] else "MISSES"
    print(
        f"  Polter / tmux: {figures['ratio_best']}x best, {figures['ratio_median']}x median; {verdict} the target "
        f"of <= {TARGET_RATIO}x (load average {figures['load_average']} on {figures['cpus']} CPUs)"
    )
    print(json.dumps({"benchmark": "flood", **figures}))


if __name__ == "__main__":
    main()
