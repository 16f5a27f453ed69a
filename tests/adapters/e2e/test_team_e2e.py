"""The real Claude Code works with other panes through the floor server's team tools (docs/team.md): in a pane of a
real session host, against the fake model API (scripted to call the tools), it opens a pane with a task, hands a
shell pane work, waits for it to be done and reads the answer; the audit shows every call. A role that may open
helpers only is refused a lead's pane with the reason, through the same CLI.
"""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

import pytest
from support.fake_models import FakeModelServer, Rule
from support.gateway import write_roles
from support.session import hosted
from support.waiting import wait_until

from polter.adapters import TestMode
from polter.adapters.plugins import discover
from polter.paths import config_dir
from polter.protocol import FLOOR_SERVER
from polter.session.config import PaneSetup
from polter.session.host import SessionHost
from polter.session.launch import Launch, PanePlan
from polter.session.panes import HostPane

from .agent_pane import OFFLINE
from .conftest import real_cli
from .test_state_hooks_e2e import screen_of, type_line
from .unhooked import adjusted

pytestmark = pytest.mark.e2e

ALLOW = """
[servers]
default = "allow"
[tools]
default = "allow"
[skills]
default = "allow"
[builtins]
default = "allow"
"""
ROLES = {
    "e2e-lead": f"""description = "Leads the others"
{ALLOW}
[team]
send = ["*"]
wait = ["*"]
open = ["e2e-helper"]
close = ["@opened"]
""",
    "e2e-helper": f"""description = "Helps; opens nothing"
{ALLOW}
[team]
send = ["@sender"]
""",
    "e2e-researcher": f"""description = "May open helpers only"
{ALLOW}
[team]
open = ["e2e-helper"]
""",
}


def text_of(pane: HostPane) -> str:
    screen = pane.terminal.screen
    if screen is None:
        return ""
    return "\n".join(row.rstrip() for row in [screen.text(y) for y in range(-screen.history_size, 0)] + screen.display())


async def listed_polters_tools(host: SessionHost) -> None:
    """Wait until Claude Code has asked the gateway for its tools (in a TUI it connects after its prompt shows, and
    a prompt typed before that reaches the model without Polter's tools)."""
    deadline = time.monotonic() + 60
    while not any(info.title == "claude" and info.clients for info in await host.workspace.client.panes()):
        assert time.monotonic() < deadline, "Claude Code did not reach the gateway in 60 s"
        await asyncio.sleep(0.1)


@pytest.fixture
def offline(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, value in OFFLINE.items():
        monkeypatch.setenv(name, value)
    return home


@pytest.mark.parametrize("role", ["e2e-lead", "e2e-researcher"])
async def test_claude_code_opens_a_pane_hands_work_waits_and_reads_it(
    role: str, tmp_path: Path, offline: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli = real_cli("claude-code")
    monkeypatch.setenv("PATH", f"{cli.bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin")
    monkeypatch.setenv("PS1", "$ ")
    write_roles(config_dir() / "roles", ROLES)
    tool = f"mcp__{FLOOR_SERVER}__{{}}".format
    rules = [
        Rule(when="open a helper", call=tool("open"),
             arguments={"adapter": "shell", "role": "e2e-helper", "task": "; echo opened-by-claude-$((3*3))"}),
        Rule(when="open a lead", call=tool("open"), arguments={"adapter": "shell", "role": "e2e-lead", "task": "hi"}),
        Rule(when="hand it over", call=tool("send"), arguments={"pane": 2, "message": "; sleep 1; echo handed-$((2*2))"}),
        Rule(when="wait for it", call=tool("wait"), arguments={"pane": 2, "until": "done", "timeout": 60}),
        Rule(when="read it", call=tool("read"), arguments={"pane": 2, "lines": 20}),
    ]  # fmt: skip
    shell = discover(entry_points=False).get("shell")
    claude_code = adjusted(cli.adapter, env={"ENABLE_TOOL_SEARCH": "false"})  # MCP tools in the model's list
    with FakeModelServer(rules) as model:
        plans = [
            PanePlan(PaneSetup(adapter="claude-code", role=role, cwd=project, title="claude"), claude_code, "the test"),
            PanePlan(PaneSetup(adapter="shell", role="e2e-helper", cwd=project, title="worker",
                               command=["bash", "--norc", "--noprofile"]), shell, "the test"),
        ]  # fmt: skip
        launch = Launch(plans, discover(entry_points=False), test_mode=TestMode(model_base_url=model.url))
        async with hosted(launch=launch) as host:
            await wait_until(lambda: host.ready, timeout=60, message="the session's panes")
            claude, worker = host.panes
            for pane in (claude, worker):
                pane.resize(120, 40)
            await wait_until(lambda: "? for shortcuts" in screen_of(claude), timeout=120, message=lambda: screen_of(claude))
            await wait_until(lambda: "$" in screen_of(worker), timeout=30)
            await listed_polters_tools(host)

            if role == "e2e-researcher":  # it may open helpers, not a lead: refused, with the reason, no pane opened
                await type_line(claude, "open a lead")
                def opens() -> list[object]:
                    return [row for row in host.workspace.audit_rows
                            if row.server == FLOOR_SERVER and row.name == "open" and row.layer == "call"]  # fmt: skip

                await wait_until(opens, timeout=90, message=lambda: text_of(claude))
                [row] = opens()
                assert row.decision == "deny" and row.rule == "team.open", row  # type: ignore[attr-defined]
                await wait_until(lambda: any('team.open is ["e2e-helper"]' in (request.tool_result or "")
                                             for request in model.requests), timeout=60)  # fmt: skip
                assert len(host.panes) == 2
                return
            await type_line(claude, "open a helper")
            await wait_until(lambda: len(host.panes) == 3, timeout=90, message=lambda: text_of(claude))
            opened = host.panes[2]
            opened.resize(100, 30)
            await wait_until(lambda: "opened-by-claude-9" in text_of(opened), timeout=60, message=lambda: text_of(opened))
            assert opened.agent is not None and opened.agent.role == "e2e-helper"

            for words, expect in (("hand it over", "typed into pane 2"), ("wait for it", '"state":"done"'),
                                 ("read it", "handed-4")):
                before = text_of(claude).count("FINAL")
                await type_line(claude, words)
                await wait_until(lambda: text_of(claude).count("FINAL") > before, timeout=90,  # noqa: B023
                                 message=lambda: text_of(claude))  # fmt: skip
                assert expect in model.requests[-1].tool_result or expect in text_of(claude), words  # type: ignore[operator]
            assert "[from pane 1 · e2e-lead] ; sleep 1; echo handed-$((2*2))" in text_of(worker)
            calls = [(row.name, row.decision) for row in host.workspace.audit_rows
                     if row.server == FLOOR_SERVER and row.layer == "call"]  # fmt: skip
            assert [name for name, _ in calls] == ["open", "send", "wait", "read"], calls
            assert all(decision == "allow" for _, decision in calls), calls
