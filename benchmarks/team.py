"""The team tools' speed: ``send`` to an idle pane until the text is in its program's input, and ``wait`` from the
state change to its return (issue 23: p50 <= 50 ms and <= 200 ms).

A session host in this process (its real gateway process), two panes of the bundled scripted agent
(``python -m polter.demo.agent``) on PTYs under a role whose [team] lets pane 1 send to and wait on pane 2, and the
official MCP client with pane 1's token. Same-run references:

- send: the host pasting the same text into the pane itself (no gateway, no MCP) until it shows, so the figure says
  what the tool adds to typing;
- wait, screen: the state change's own timestamp, the moment the screen rule turns the agent idle (its last output
  plus ``ACTIVE_SECONDS``); the agent works (``work 0.6``: a line every 0.2 s), goes quiet, and ``wait`` until done
  returns;
- wait, hooks: the state change's own timestamp, the moment the host took the CLI's Stop report (``reported_at``);
  the report is posted with the pane's token, as a CLI's hook does, while the agent still draws its work.

Run: ``.venv/bin/python benchmarks/team.py [rounds]``; prints the figures and ``uptime``'s load.
"""

from __future__ import annotations

import asyncio
import json
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


async def main(rounds: int) -> None:
    import httpx

    from polter.adapters.plugins import discover
    from polter.gateway.client import pane_client
    from polter.protocol import FLOOR_SERVER, AgentState
    from polter.wire import messages as wire
    from polter.host.agent_state import ACTIVE_SECONDS
    from polter.wire.client import SessionClient
    from polter.launch.config import PaneSetup
    from polter.host.session_host import SessionHost
    from polter.launch.planning import Launch, PanePlan
    from polter.wire.registry import session_files

    with private_dirs() as scratch:
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
            target_token = target.agent.token  # type: ignore[union-attr]

            def shows(text: str) -> bool:
                screen = target.terminal.screen
                return screen is not None and any(text in row for row in screen.display())

            async def idle() -> None:
                await until(lambda: target.read_agent_state() is AgentState.IDLE and not host.team.queued(target))

            async def report(payload: dict[str, object]) -> None:
                headers = {"Authorization": f"Bearer {target_token}", "Content-Type": "application/json"}
                async with httpx.AsyncClient(base_url=host.workspace.url or "", headers=headers) as http:
                    (
                        await http.post("/hook/claude-code/state", content=json.dumps(payload).encode())
                    ).raise_for_status()

            await until(lambda: shows("you>"))
            token = host.panes[0].agent.token  # type: ignore[union-attr]
            sends, pastes, screen_waits, hook_waits = [], [], [], []
            async with pane_client(FLOOR_SERVER, url=host.workspace.url, token=token) as mcp:
                for index in range(rounds):
                    await idle()
                    marker = f"ref{index}x"
                    started = time.perf_counter()
                    target.terminal.paste(marker)
                    await until(lambda marker=marker: shows(marker), interval=0.0005)
                    pastes.append((time.perf_counter() - started) * 1000)
                    target.terminal.key("ctrl+u")  # the line discipline forgets it
                    await asyncio.sleep(host.team.settle)
                    await idle()
                    marker = f"sent{index}x"
                    started = time.perf_counter()
                    await mcp.call_tool("send", {"pane": 2, "message": marker})
                    await until(lambda marker=marker: shows(marker), interval=0.0005)
                    sends.append((time.perf_counter() - started) * 1000)
                    await idle()

                    await mcp.call_tool("send", {"pane": 2, "message": "work 0.6"})
                    waited = await mcp.call_tool("wait", {"pane": 2, "until": "done", "timeout": 30})
                    returned = time.monotonic()
                    if not waited.is_error:
                        screen_waits.append((returned - (target.terminal.last_output + ACTIVE_SECONDS)) * 1000)
                    await idle()

                    await mcp.call_tool("send", {"pane": 2, "message": "work 1.5"})
                    await until(lambda: shows("Working for 1.5 s"))
                    await report({"hook_event_name": "UserPromptSubmit", "prompt": "work 1.5"})
                    waiting = asyncio.ensure_future(mcp.call_tool("wait", {"pane": 2, "until": "done", "timeout": 30}))
                    await until(lambda: host.team.membership(target).waits)
                    await report({"hook_event_name": "Stop", "last_assistant_message": "done"})
                    waited = await waiting
                    returned = time.monotonic()
                    if not waited.is_error:
                        hook_waits.append((returned - target.reported_at) * 1000)
        finally:
            if client is not None:
                await client.aclose()
            await host.end("the benchmark is over")
            await runner
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    print(f"{rounds} rounds; {load}")
    print(_figures("reference, the host pasting into the pane until it shows", pastes))
    print(_figures("send to an idle pane until the text shows", sends))
    print(_figures("wait until done, from the screen's state change (last output + 1.5 s) to the return", screen_waits))
    print(_figures("wait until done, from the host taking the CLI's Stop report to the return", hook_waits))


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20))
