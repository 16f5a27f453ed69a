"""The team tools' speed: ``send`` to an idle pane until the text is in its program's input, and ``wait`` from the
state change to its return (issue 23: p50 <= 50 ms and <= 200 ms).

A session host in this process (its real gateway process, two bash panes on PTYs under a role whose [team] lets
pane 1 send to and wait on pane 2), the official MCP client with pane 1's token. Same-run references:

- send: the host pasting the same text into the pane itself (no gateway, no MCP) until it shows, so the figure
  says what the tool adds to typing;
- wait: the moment the host's reading of pane 2 turned idle (its own timestamp), taken from inside the host.

Run: ``.venv/bin/python benchmarks/team.py [rounds]``; prints the figures and ``uptime``'s load. One run on the
2-core development machine (2026-12-02, load 2.7, 20 rounds): the reference paste 1.7 ms; send p50 15.3 ms (max
37.6); wait p50 5.6 ms, max 1554 ms. The host reads a pane a wait is on every 50 ms (``TICK``), so the state change
itself, which the screen shows 1.5 s after a program's last output, is seen at most 50 ms late; the outlier is a
round whose reading turned idle within ``SETTLE`` (1 s) of the message being typed, which ``done`` waits out.
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
from _sessions import BASH, private_dirs, until  # noqa: E402

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


async def main(rounds: int) -> None:
    from polter.adapters.plugins import discover
    from polter.gateway.client import pane_client
    from polter.protocol import FLOOR_SERVER, AgentState
    from polter.session import protocol as wire
    from polter.session.client import SessionClient
    from polter.session.config import PaneSetup
    from polter.session.host import SessionHost
    from polter.session.launch import Launch, PanePlan
    from polter.session.registry import session_files

    with private_dirs() as scratch:
        roles = scratch / "config" / "roles"
        roles.mkdir(parents=True)
        (roles / "bench-lead.toml").write_text(ROLE)
        shell = discover(entry_points=False).get("shell")
        plans = [PanePlan(PaneSetup(adapter="shell", role="bench-lead", command=[BASH, "--norc", "--noprofile"]),
                          shell, "bench") for _ in range(2)]  # fmt: skip
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

            await until(lambda: shows("$"))
            token = host.panes[0].agent.token  # type: ignore[union-attr]
            sends, pastes, waits = [], [], []
            async with pane_client(FLOOR_SERVER, url=host.workspace.url, token=token) as mcp:
                for index in range(rounds):
                    await idle()
                    marker = f"ref{index}x"
                    started = time.perf_counter()
                    target.terminal.paste(f"# {marker}")
                    await until(lambda marker=marker: shows(marker), interval=0.0005)
                    pastes.append((time.perf_counter() - started) * 1000)
                    target.terminal.key("ctrl+c")
                    await asyncio.sleep(host.team.settle)
                    await idle()
                    marker = f"sent{index}x"
                    started = time.perf_counter()
                    await mcp.call_tool("send", {"pane": 2, "message": f"; true {marker}"})
                    await until(lambda marker=marker: shows(marker), interval=0.0005)
                    sends.append((time.perf_counter() - started) * 1000)
                    await idle()
                    turned: list[float] = []
                    watcher = asyncio.ensure_future(_idle_at(target, turned))
                    await mcp.call_tool("send", {"pane": 2, "message": "; sleep 0.3"})
                    await mcp.call_tool("wait", {"pane": 2, "until": "done", "timeout": 30})
                    returned = time.perf_counter()
                    watcher.cancel()
                    if turned:
                        waits.append((returned - turned[0]) * 1000)
        finally:
            if client is not None:
                await client.aclose()
            await host.end("the benchmark is over")
            await runner
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"{rounds} rounds; {load}")
    print(f"reference, the host pasting into the pane until it shows: p50 {statistics.median(pastes):.1f} ms")
    print(f"send to an idle pane until the text shows: p50 {statistics.median(sends):.1f} ms, "
          f"max {max(sends):.1f} ms")  # fmt: skip
    if waits:
        print(f"wait until done, from the host's reading turning idle to the return: p50 "
              f"{statistics.median(waits):.1f} ms, max {max(waits):.1f} ms ({len(waits)} rounds)")  # fmt: skip


async def _idle_at(pane: object, turned: list[float]) -> None:
    """The moment the host's own reading of ``pane`` turns idle after working (the state change's timestamp)."""
    from polter.protocol import AgentState

    seen_working = False
    while True:
        state = pane.agent_state  # type: ignore[attr-defined]
        if state is AgentState.WORKING:
            seen_working = True
        elif seen_working and state is AgentState.IDLE and not turned:
            turned.append(time.perf_counter())
            return
        await asyncio.sleep(0.001)


if __name__ == "__main__":
    os.environ.setdefault("PS1", "$ ")
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20))
