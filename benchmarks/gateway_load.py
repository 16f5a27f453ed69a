"""The gateway under load, with its upstream killed in the middle: latencies and throughput against the
unloaded latency measured in the same run.

The scenario is ``tests/support/load.py`` (the same one ``tests/gateway/test_load.py`` asserts on): a real
``polter gateway`` process and upstream, 4 panes each sending 1,000 calls at once (reads allowed, writes
denied, launches gated on a word half the panes typed, publishes asked and left to time out), half in the
2025-era protocol and half in 2026-07-28, and the upstream SIGKILLed once a third are answered.

Figures: p50/p99 of every call's latency on the wire (request out to answer read) by tool and by protocol
era, the time calls queued in the client for one of a pane's connections, calls/s over the whole load,
the unloaded reference (sequential calls before the load) and the loaded p50's ratio to it, what the
upstream ran, how long it was down, the gateway's RSS and CPU time at the end, and the CPU time of the
load's own clients (on a 2-core machine they compete with the gateway: calls/s is the whole system's).

Run: ``.venv/bin/python benchmarks/gateway_load.py [--panes 4] [--calls 1000] [--connections 100]``.
The last line is JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from support.load import LEGACY, LoadResult, percentile, run_load  # noqa: E402


def by_era(result: LoadResult) -> dict[str, dict[str, float]]:
    eras = {pane.index: pane.era for pane in result.panes}
    figures = {}
    for era in sorted(set(eras.values())):
        latencies = [call.latency for call in result.load_calls if eras[call.pane] == era and call.tool != "publish"]
        name = "2025-era session" if era == LEGACY else f"{era} (no session)"
        figures[name] = {
            "p50_ms": round(percentile(latencies, 0.5) * 1000, 1),
            "p99_ms": round(percentile(latencies, 0.99) * 1000, 1),
        }
    return figures


async def main(options: argparse.Namespace) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="polter-load-") as directory:
        result = await run_load(
            Path(directory), panes=options.panes, calls=options.calls, connections=options.connections,
            ask_timeout=options.ask_timeout,
        )  # fmt: skip
    figures = result.figures()
    figures["by_era_all_but_asks"] = by_era(result)
    reference, loaded = figures["reference_unloaded"], figures["all_but_asks"]
    print(
        f"{figures['calls']} calls from {figures['panes']} panes in {figures['seconds']} s: "
        f"{figures['calls_per_s']} calls/s; {options.connections} connections per pane"
    )
    print(f"unloaded reference (one call at a time): p50 {reference['p50_ms']} ms, p99 {reference['p99_ms']} ms")
    print(
        f"under load, all but the asks: p50 {loaded['p50_ms']} ms, p99 {loaded['p99_ms']} ms "
        f"({figures['p50_ratio_to_unloaded']}x the unloaded p50)"
    )
    for tool, summary in figures["by_tool"].items():
        print(
            f"  {tool:8} p50 {summary['p50_ms']:8.1f} ms  p99 {summary['p99_ms']:8.1f} ms  {figures['outcomes'][tool]}"
        )
    for era, summary in figures["by_era_all_but_asks"].items():
        print(f"  {era:28} p50 {summary['p50_ms']:8.1f} ms  p99 {summary['p99_ms']:8.1f} ms")
    queued = figures["queued_in_client"]
    print(f"queued in the client for a connection: p50 {queued['p50_ms']} ms, p99 {queued['p99_ms']} ms")
    print(
        f"upstream down {figures['upstream_down_s']} s ({figures['restarts']} restart); it ran "
        f"{figures['upstream_ran']}; statuses {figures['statuses']}; audit call rows {figures['audit_call_rows']}"
    )
    print(
        f"gateway at the end: RSS {figures['gateway_rss_mb']} MB, CPU {figures['gateway_cpu_s']} s "
        f"({figures['gateway_cpu_ms_per_call']} ms per call); the load's clients: CPU {figures['client_cpu_s']} s"
    )
    return figures


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--panes", type=int, default=4)
    parser.add_argument("--calls", type=int, default=1000, help="calls per pane, all sent at once")
    parser.add_argument("--connections", type=int, default=100, help="open HTTP connections per pane")
    parser.add_argument("--ask-timeout", type=float, default=2.0, help="seconds an unanswered ask waits")
    print(json.dumps(asyncio.run(main(parser.parse_args()))))
