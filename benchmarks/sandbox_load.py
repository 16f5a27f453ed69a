"""What the pane sandbox costs a pane under load: the 5 MB coloured ``cat`` (``flood.py``) and the keystroke echo
while another pane floods (``terminal_latency.py``), with the panes sandboxed as always and, as the reference,
outside the sandbox (plain shell panes under a role that opts its shell out, ``$POLTER_BENCH_UNCONFINED``).

Each benchmark runs as its own process, sandboxed and unconfined alternately (``ROUNDS`` times each), so machine
load hits both alike. Target: unchanged within noise. Run: ``.venv/bin/python benchmarks/sandbox_load.py``; the
last line is JSON.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROUNDS = 2


def run(script: str, unconfined: bool) -> dict[str, Any]:
    env = {**os.environ}
    env.pop("POLTER_BENCH_UNCONFINED", None)
    if unconfined:
        env["POLTER_BENCH_UNCONFINED"] = "1"
    done = subprocess.run(
        [sys.executable, str(HERE / script)], env=env, capture_output=True, text=True, timeout=1800, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{script} failed:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


def main() -> None:
    figures: dict[str, dict[str, list[float]]] = {
        "flood_best_s": {"sandboxed": [], "unconfined": []},
        "echo_flood_p50_ms": {"sandboxed": [], "unconfined": []},
        "echo_flood_p99_ms": {"sandboxed": [], "unconfined": []},
        "echo_idle_p50_ms": {"sandboxed": [], "unconfined": []},
    }
    for _ in range(ROUNDS):
        for unconfined in (False, True):
            variant = "unconfined" if unconfined else "sandboxed"
            flood = run("flood.py", unconfined)
            figures["flood_best_s"][variant].append(flood["polter_best_s"])
            echo = run("terminal_latency.py", unconfined)
            figures["echo_flood_p50_ms"][variant].append(echo["flood"]["p50_ms"])
            figures["echo_flood_p99_ms"][variant].append(echo["flood"]["p99_ms"])
            figures["echo_idle_p50_ms"][variant].append(echo["idle"]["p50_ms"])
    summary = {}
    print(f"the pane sandbox under load, {ROUNDS} runs each, alternating (load {os.getloadavg()[0]:.2f}):")
    for name, by_variant in figures.items():
        sandboxed, unconfined = (statistics.median(by_variant[v]) for v in ("sandboxed", "unconfined"))
        ratio = sandboxed / unconfined if unconfined else float("nan")
        summary[name] = {"sandboxed": by_variant["sandboxed"], "unconfined": by_variant["unconfined"]}
        summary[name]["ratio"] = round(ratio, 2)  # type: ignore[assignment]
        print(f"  {name:20} sandboxed {by_variant['sandboxed']}  unconfined {by_variant['unconfined']}  x{ratio:.2f}")
    print(json.dumps({"benchmark": "sandbox_load", **summary}))


if __name__ == "__main__":
    main()
