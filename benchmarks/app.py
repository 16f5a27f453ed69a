"""What the gateway costs the app's user, against references measured in the same run (headless, real
PTYs in a session host in the same process, the real gateway process, ``mcp-server-time`` as the upstream):

- start-up: ``polter`` with four shell panes under roles (the gateway and its upstream started, every
  pane registered, then every prompt on screen) against the same four shells with no gateway;
- an ask: from a pane's MCP call that its role asks about to the modal on screen, against the round
  trip of an allowed call of the same server through the same gateway.

Run: ``.venv/bin/python benchmarks/app.py``. The last line is JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from support.waiting import wait_until  # noqa: E402  (the tests' one way to wait: poll with a deadline)

until = partial(wait_until, timeout=120)

ROUNDS = 3
CALLS = 15
SIZE = (160, 44)
BASH = shutil.which("bash") or "/bin/bash"
ROLES = {
    "clock": '[servers]\ndefault = "allow"\n[tools]\ndefault = "allow"\nask = ["time/convert_time"]\n',
}


def prompts(app: object) -> bool:
    panes = app.session_screen.grid.panes  # type: ignore[attr-defined]
    return len(panes) == 4 and all(
        pane.terminal.screen_model is not None and "$" in "\n".join(pane.terminal.screen_model.display())
        for pane in panes)


def plain_app() -> object:
    from support.session import HostedApp

    from polter.terminal.launch import LaunchSpec

    spec = LaunchSpec(argv=(BASH, "--norc", "--noprofile"), env={"PS1": "$ "}, title="bash")
    return HostedApp([spec] * 4)


def workspace_app() -> object:
    from support.session import HostedApp

    from polter.adapters.plugins import discover
    from polter.servers import StdioServer
    from polter.launch.config import PaneSetup
    from polter.launch.planning import Launch, PanePlan

    shell = discover(entry_points=False).get("shell")
    plans = [PanePlan(PaneSetup(adapter="shell", role="clock", command=[BASH, "--norc", "--noprofile"]), shell, "")
             for _ in range(4)]
    time_server = StdioServer(command=sys.executable, args=["-m", "mcp_server_time", "--local-timezone", "UTC"])
    return HostedApp(launch=Launch(plans, servers={"time": time_server}))


async def startup(make: Callable[[], object]) -> float:
    start = time.perf_counter()
    app = make()
    async with app.run_test(size=SIZE):  # type: ignore[attr-defined]
        await until(lambda: app._session_screen is not None and app.session_screen.ready and prompts(app))  # type: ignore[attr-defined]
        return (time.perf_counter() - start) * 1000


async def ask_latency() -> tuple[float, float]:
    """Median ms of an allowed call's round trip, and of an asked call until its modal shows."""
    from polter.gateway.client import pane_client
    from polter.window.ask_screen import AskScreen

    app = workspace_app()
    async with app.run_test(size=SIZE) as pilot:  # type: ignore[attr-defined]
        await until(lambda: app._session_screen is not None and app.session_screen.ready and prompts(app))  # type: ignore[attr-defined]
        host = app.host  # type: ignore[attr-defined]
        agent = host.panes[0].agent
        allowed, asked = [], []
        async with pane_client("time", url=host.workspace.url, token=agent.token) as client:
            for _ in range(CALLS):
                start = time.perf_counter()
                await client.call_tool("get_current_time", {"timezone": "UTC"})
                allowed.append((time.perf_counter() - start) * 1000)
            for _ in range(CALLS):
                start = time.perf_counter()
                call = asyncio.create_task(client.call_tool("convert_time", {
                    "source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}))
                await until(lambda: isinstance(app.screen, AskScreen))  # type: ignore[attr-defined]
                asked.append((time.perf_counter() - start) * 1000)
                modal = app.screen  # type: ignore[attr-defined]
                await until(lambda: modal.armed)  # noqa: B023
                await pilot.press("d")
                await call
                await until(lambda: not isinstance(app.screen, AskScreen))  # type: ignore[attr-defined]
        return statistics.median(allowed), statistics.median(asked)


async def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="polter-bench-app-"))
    os.environ["POLTER_CONFIG_DIR"] = str(scratch / "config")
    os.environ["POLTER_STATE_DIR"] = str(scratch / "state")
    os.environ["POLTER_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="pb-")  # the sessions' sockets (a short path)
    os.environ["PS1"] = "$ "  # the agent panes take the environment; the plain ones set it themselves
    roles = scratch / "config" / "roles"
    roles.mkdir(parents=True)
    for name, text in ROLES.items():
        (roles / f"{name}.toml").write_text(text, encoding="utf-8")
    try:
        plain, gated = [], []
        for _ in range(ROUNDS):  # interleaved, so both see the same machine
            plain.append(await startup(plain_app))
            gated.append(await startup(workspace_app))
        allowed, asked = await ask_latency()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    figures = {"startup_plain_ms": statistics.median(plain), "startup_with_gateway_ms": statistics.median(gated),
               "allowed_call_ms": allowed, "ask_to_modal_ms": asked}
    print(f"start-up, four shells, no gateway        {figures['startup_plain_ms']:8.0f} ms (reference)")
    print(f"start-up, four shells under roles        {figures['startup_with_gateway_ms']:8.0f} ms "
          f"({figures['startup_with_gateway_ms'] / figures['startup_plain_ms']:.1f}× the reference)")
    print(f"allowed call round trip (median)         {allowed:8.1f} ms (reference)")
    print(f"asked call until the modal shows (median){asked:8.1f} ms ({asked / allowed:.1f}× the reference)")
    print(json.dumps({"benchmark": "app", "rounds": ROUNDS, "calls": CALLS,
                      **{key: round(value, 1) for key, value in figures.items()},
                      "startup_ratio": round(figures["startup_with_gateway_ms"] / figures["startup_plain_ms"], 2),
                      "ask_ratio": round(asked / allowed, 2)}))


if __name__ == "__main__":
    asyncio.run(main())
