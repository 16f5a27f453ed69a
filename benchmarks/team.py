"""The team tools' speed: ``send`` to an idle pane until the text is in its program's input, and ``wait`` from the
state change to its return (issue 23: p50 <= 50 ms and <= 200 ms).

A session host in this process (its real gateway process), two panes of the bundled scripted agent
(``python -m polter.demo.agent``) on PTYs under a role whose [team] lets pane 1 send to and wait on pane 2, and the
official MCP client with pane 1's token. Same-run references:

- send: the host pasting the same text into the pane itself (no gateway, no MCP) until it shows, so the figure says
  what the tool adds to typing;
- wait, hooks: the state change's own timestamp, the moment the host took the agent's Stop report
  (``reported_at``): the scripted agent reports its turns through the gateway's hook path with its pane's token, as
  a CLI's state hooks do; it works (``work 0.6``: a line every 0.2 s), reports Stop, and ``wait`` until done returns;
- wait, screen: a second session whose agents report nothing (``POLTER_DEMO_NO_REPORTS``: a program without hooks);
  the state change's own timestamp is the moment the screen rule turns the agent idle (its last output plus
  ``ACTIVE_SECONDS``).

Run: ``.venv/bin/python benchmarks/team.py [rounds]``; prints the figures and ``uptime``'s load.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _sessions import private_dirs, until  # noqa: E402

ROLE = """description = "bench lead"
[servers]
default = "allow"
[tools]
default = "allow"
[skills]
default = "allow"
[team]
send = ["*"]
wait = ["*"]
messages_per_minute = 10000
"""
AGENT = [sys.executable, "-m", "polter.demo.agent"]


def _p(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _figures(name: str, values: list[float]) -> str:
    return (f"{name}: p50 {statistics.median(values):.1f} ms, p99 {_p(values, 0.99):.1f} ms, max {max(values):.1f} ms "
            f"({len(values)} rounds)")  # fmt: skip


async def rounds_of(rounds: int, *, reports: bool) -> dict[str, list[float]]:
    """One session, ``rounds`` rounds: the figures (ms) by name."""
    from polter.adapters.plugins import discover
    from polter.demo.agent import NO_REPORTS
    from polter.gateway.client import pane_client
    from polter.host.agent_state import ACTIVE_SECONDS
    from polter.host.session_host import SessionHost
    from polter.launch.config import PaneSetup
    from polter.launch.planning import Launch, PanePlan
    from polter.protocol import FLOOR_SERVER, AgentState
    from polter.wire import messages as wire
    from polter.wire.client import SessionClient
    from polter.wire.registry import session_files

    figures: dict[str, list[float]] = {"pastes": [], "sends": [], "waits": []}
    with private_dirs() as scratch:
        if not reports:
            os.environ[NO_REPORTS] = "1"  # the panes inherit it: their agents report nothing
        roles = scratch / "config" / "roles"
        roles.mkdir(parents=True)
        (roles / "bench-lead.toml").write_text(ROLE)
        shell = discover(entry_points=False).get("shell")
        plans = [PanePlan(PaneSetup(adapter="shell", role="bench-lead", command=AGENT), shell, "bench")
                 for _ in range(2)]  # fmt: skip
        host = SessionHost(session_files("bench-team"), Launch(plans, discover(entry_points=False)))
        await host.start()
        runner = asyncio.create_task(host.run())
        client = None
        try:
            await until(lambda: host.ready)
            client = await SessionClient.connect(host.files, on_event=lambda event: None, on_lost=lambda why: None)
            for pane in host.panes:
                client.send(wire.ResizeInput(pane=pane.id, columns=120, lines=40))
            target = host.panes[1]

            def shows(text: str) -> bool:
                screen = target.terminal.screen
                return screen is not None and any(text in row for row in screen.display())

            async def idle() -> None:
                await until(lambda: target.read_agent_state() is AgentState.IDLE and not host.team.queued(target))

            await until(lambda: shows("you>"))
            token = host.panes[0].agent.token  # type: ignore[union-attr]
            async with pane_client(FLOOR_SERVER, url=host.workspace.url, token=token) as mcp:
                for index in range(rounds):
                    await idle()
                    marker = f"ref{index}x"
                    started = time.perf_counter()
                    target.terminal.paste(marker)
                    await until(lambda marker=marker: shows(marker), interval=0.0005)
                    figures["pastes"].append((time.perf_counter() - started) * 1000)
                    target.terminal.key("ctrl+u")  # the line discipline forgets it
                    await asyncio.sleep(host.team.settle)
                    await idle()
                    marker = f"sent{index}x"
                    started = time.perf_counter()
                    await mcp.call_tool("send", {"pane": 2, "message": marker})
                    await until(lambda marker=marker: shows(marker), interval=0.0005)
                    figures["sends"].append((time.perf_counter() - started) * 1000)
                    await idle()

                    await mcp.call_tool("send", {"pane": 2, "message": "work 0.6"})
                    waited = await mcp.call_tool("wait", {"pane": 2, "until": "done", "timeout": 30})
                    returned = time.monotonic()
                    if waited.is_error:
                        continue
                    changed = target.reported_at if reports else target.terminal.last_output + ACTIVE_SECONDS
                    figures["waits"].append((returned - changed) * 1000)
        finally:
            os.environ.pop(NO_REPORTS, None)
            if client is not None:
                await client.aclose()
            await host.end("the benchmark is over")
            await runner
    return figures


async def main(rounds: int) -> None:
    hooked = await rounds_of(rounds, reports=True)
    screen = await rounds_of(rounds, reports=False)
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"{rounds} rounds a session; {load}")
    print(_figures("reference, the host pasting into the pane until it shows", hooked["pastes"] + screen["pastes"]))
    print(_figures("send to an idle pane until the text shows (its agent reports)", hooked["sends"]))
    print(_figures("send to an idle pane until the text shows (no hooks)", screen["sends"]))
    print(_figures("wait until done, from the host taking the agent's Stop report to the return", hooked["waits"]))
    print(_figures("wait until done, no hooks: from the screen's state change (last output + 1.5 s) to the return",
                   screen["waits"]))  # fmt: skip


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20))
