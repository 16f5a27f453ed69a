"""Attaching to a session whose four panes hold full scrollbacks, and what everything Polter runs weighs.

A real session host daemon with four bash panes, each of which printed 12,000 coloured lines (so each
keeps a full 10,000-line scrollback), and nobody attached. Then:

- **attach**: a new window (the app, headless, in this process) until every pane shows its last
  line — the first complete frame. The same-run reference is a bare protocol client that only
  receives the four screens (no Textual), and the time Textual needs to show an empty app;
- **memory**: a real ``polter attach`` in a terminal (a PTY of 160×45) stays attached, and the
  resident (RSS) and proportional (PSS: shared pages split fairly) memory of that window, the host
  and the gateway are read from ``/proc``; the reference is a bare Python interpreter's RSS.

Targets: first complete frame within 500 ms; everything Polter runs under 150 MB.
Run: ``.venv/bin/python benchmarks/attach.py``. The last line is JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _sessions import (  # noqa: E402
    children,
    command_line,
    kill_session,
    memory_kib,
    private_dirs,
    start_session,
    until,
    window,
    write_config,
)

SIZE = (160, 45)
LINES = 12_000
TARGET_ATTACH_MS = 500.0
TARGET_MEMORY_MB = 150.0
ROUNDS = 5


async def fill(name: str) -> None:
    """Every pane prints ``LINES`` coloured lines and a last line that names the pane; then detach."""
    async with window(name, SIZE) as (app, pilot):
        for number, pane in enumerate(app.session_screen.grid.panes, 1):
            pane.terminal.focus()
            await until(lambda: app.focused is pane.terminal)  # noqa: B023
            command = (f"for i in $(seq 1 {LINES}); do printf '\\e[3%dm%05d\\e[0m the quick brown fox\\n' "
                       f"$((i % 7 + 1)) $i; done; echo last-of-{number}")
            await pilot.press(*command, "enter")
        for number, pane in enumerate(app.session_screen.grid.panes, 1):
            await until(lambda: f"last-of-{number}" in [row.strip() for row in pane.terminal.screen_model.display()],  # noqa: B023
                        timeout=180)


async def attach_once(name: str, target: Any = None) -> float:
    """From the start of a window until every pane has drawn its last line (``target``: the session reached
    otherwise, e.g. over ssh: benchmarks/remote.py)."""
    import polter.window  # noqa: F401
    from polter.wire.registry import session_files
    from polter.window.app import PolterApp

    seen: set[int] = set()
    started = time.perf_counter()
    app = PolterApp(target if target is not None else session_files(name))
    async with app.run_test(size=SIZE) as _pilot:
        await until(lambda: app._session_screen is not None and len(app.session_screen.grid.panes) == 4, interval=0.001)
        for number, pane in enumerate(app.session_screen.grid.panes, 1):
            render_line = pane.terminal.render_line

            def timed(y: int, render_line: Any = render_line, number: int = number) -> Any:
                strip = render_line(y)
                if f"last-of-{number}" in strip.text:
                    seen.add(number)
                return strip

            pane.terminal.render_line = timed  # type: ignore[method-assign]
            pane.terminal.refresh()
        await until(lambda: len(seen) == 4, interval=0.001)
        elapsed = time.perf_counter() - started
    return elapsed


async def protocol_once(name: str) -> float:
    """The reference: a protocol client that only receives the four screens."""
    from polter.wire import messages as wire
    from polter.wire.client import SessionClient
    from polter.wire.registry import session_files

    frames: set[str] = set()
    started = time.perf_counter()
    client = await SessionClient.connect(
        session_files(name), on_event=lambda event: frames.add(event.pane) if isinstance(event, wire.FrameEvent) else None
    )
    await until(lambda: len(frames) == 4, interval=0.0005)
    elapsed = time.perf_counter() - started
    await client.aclose()
    return elapsed


async def empty_app_once() -> float:
    """The reference: Textual showing an app with nothing in it, headless."""
    from textual.app import App

    started = time.perf_counter()
    async with App().run_test(size=SIZE) as pilot:
        await pilot.pause()
        elapsed = time.perf_counter() - started
    return elapsed


def memory(name: str, host: int) -> dict[str, Any]:
    """RSS and PSS (MB) of a real attached window, the host and the gateway."""
    from polter.host.hosted_terminal import HostedTerminal
    from polter.terminal.launch import LaunchSpec

    async def measure() -> dict[str, Any]:
        terminal = HostedTerminal(LaunchSpec(argv=(sys.executable, "-m", "polter", "attach", name)))
        terminal.start(*SIZE)
        try:
            await until(lambda: terminal.screen is not None and "last-of-4" in "\n".join(terminal.screen.display()),
                        timeout=60)
            await asyncio.sleep(3)  # settled: the window has drawn what it shows, the host compacted its scrollback
            assert terminal.process is not None
            gateway = next(pid for pid in children(host) if "polter gateway" in command_line(pid))
            figures = {"window": memory_kib(terminal.process.pid), "host": memory_kib(host),
                       "gateway": memory_kib(gateway)}
        finally:
            await terminal.close()
        bare = subprocess.run([sys.executable, "-c", "print(next(line.split()[1] for line in open('/proc/self/status') "
                               "if line.startswith('VmRSS')))"], capture_output=True, text=True, check=True)
        figures["python_bare"] = {"rss": int(bare.stdout)}
        return figures

    kib = asyncio.run(measure())
    result: dict[str, Any] = {part: {key: round(value / 1024, 1) for key, value in values.items()}
                              for part, values in kib.items()}
    for kind in ("rss", "pss"):
        result[f"total_{kind}_mb"] = round(sum(kib[part][kind] for part in ("window", "host", "gateway")) / 1024, 1)
    return result


def measure() -> dict[str, Any]:
    with private_dirs() as folder:
        host = start_session("attach", write_config(folder, 4))
        try:
            asyncio.run(fill("attach"))
            attach = [asyncio.run(attach_once("attach")) for _ in range(ROUNDS)]
            protocol = [asyncio.run(protocol_once("attach")) for _ in range(ROUNDS)]
            empty = [asyncio.run(empty_app_once()) for _ in range(ROUNDS)]
            weights = memory("attach", host)
        finally:
            kill_session("attach")
    best = min(attach)
    return {
        "panes": 4,
        "scrollback_lines_each": 10_000,
        "attach_ms": [round(value * 1000, 1) for value in attach],
        "attach_best_ms": round(best * 1000, 1),
        "protocol_only_best_ms": round(min(protocol) * 1000, 1),
        "empty_textual_app_best_ms": round(min(empty) * 1000, 1),
        "target_attach_ms": TARGET_ATTACH_MS,
        "attach_meets_target": best * 1000 < TARGET_ATTACH_MS,
        "memory": weights,
        "target_memory_mb": TARGET_MEMORY_MB,
        "memory_meets_target": weights["total_rss_mb"] < TARGET_MEMORY_MB,
        "load_average": round(os.getloadavg()[0], 2),
        "cpus": os.cpu_count(),
    }


def main() -> None:
    figures = measure()
    print("attach to 4 panes with 10,000 lines of scrollback each, until every pane shows its last line:")
    print(f"  window: {figures['attach_ms']} ms (best {figures['attach_best_ms']} ms; target < {TARGET_ATTACH_MS:.0f})")
    print(f"  references: the protocol alone {figures['protocol_only_best_ms']} ms, an empty Textual app "
          f"{figures['empty_textual_app_best_ms']} ms")
    weights = figures["memory"]
    print("memory (MB), a real window attached:")
    for part in ("window", "host", "gateway"):
        print(f"  {part:8} RSS {weights[part]['rss']:6.1f}   PSS {weights[part]['pss']:6.1f}")
    print(f"  total    RSS {weights['total_rss_mb']:6.1f}   PSS {weights['total_pss_mb']:6.1f}   (target < "
          f"{TARGET_MEMORY_MB:.0f}; a bare Python: RSS {weights['python_bare']['rss']} MB)")
    print(f"  load average {figures['load_average']} on {figures['cpus']} CPUs")
    print(json.dumps({"benchmark": "attach", **figures}))


if __name__ == "__main__":
    main()
