"""The real CLIs work with other panes through the floor server's team tools (docs/team.md), in panes of a real
session host, against the fake model API (scripted to call the tools):

- Claude Code as ``coder`` opens a Codex ``reviewer`` pane with a task; Codex sends its answer to the pane that gave it
  the task (the only one its role may send to), and it arrives in Claude Code as a prompt marked with its sender;
  Claude Code waits for the reviewer to be done and reads its screen; the audit shows the four kinds of call;
- a message due before a pane's CLI has started waits until the CLI can take it, and is submitted (each of the
  five CLIs);
- a role that may open helpers only is refused a lead's pane with the reason, through the same CLI;
- Gemini CLI sends to the bundled scripted agent, waits for it and reads what it did.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from pathlib import Path

import pytest
from support.fake_models import FakeModelServer, Rule
from support.gateway import write_roles
from support.session import hosted
from support.waiting import wait_until
from support.workspace_app import SCRIPTED_AGENT

from polter.adapters import TestMode
from polter.adapters.plugins import discover
from polter.paths import config_dir
from polter.protocol import FLOOR_SERVER, AgentState
from polter.launch.config import PaneSetup
from polter.host.session_host import SessionHost
from polter.launch.planning import Launch, PanePlan
from polter.host.panes import HostPane

from .agent_pane import OFFLINE
from .conftest import real_cli, seed_opencode_plugin_sdk
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


def asked(model: FakeModelServer) -> list[tuple[str, str]]:
    """What each request to the fake model ended with (a failure shows whether a CLI's prompt reached it)."""
    return [(request.protocol, request.prompt[-120:]) for request in model.requests]


def text_of(pane: HostPane) -> str:
    screen = pane.terminal.screen
    if screen is None:
        return ""
    return "\n".join(
        row.rstrip() for row in [screen.text(y) for y in range(-screen.history_size, 0)] + screen.display()
    )


async def listed_polters_tools(host: SessionHost, title: str = "claude") -> None:
    """Wait until the CLI of the pane ``title`` has asked the gateway for its tools (in a TUI it connects after its
    prompt shows, and a prompt typed before that reaches the model without Polter's tools)."""
    deadline = time.monotonic() + 60
    while not any(info.title == title and info.clients for info in await host.workspace.client.panes()):
        assert time.monotonic() < deadline, f"the CLI of {title} did not reach the gateway in 60 s"
        await asyncio.sleep(0.1)


async def prompt_with_polters_tools(pane: HostPane, model: FakeModelServer, line: str, wanted: str) -> None:
    """Type ``line`` until the model is offered ``wanted`` with it: a CLI connected to the gateway may still send
    its first prompt before Polter's tools are in its list (the model then answers with no call)."""
    for _attempt in range(3):
        asked = len(model.requests)
        await type_line(pane, line)
        await wait_until(lambda: len(model.requests) > asked, timeout=90, message=lambda: text_of(pane))
        if any(wanted in request.tools for request in model.requests[asked:]):
            return
        await asyncio.sleep(2)  # (the CLI's tool list arrives in the background: give it a moment, then ask again)
    raise AssertionError(f"the model was never offered {wanted}: {model.requests[-1].tools}")


@pytest.fixture
def offline(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No way out but 127.0.0.1, once the module's CLIs are installed (npm needs the registry)."""
    for cli in ("claude-code", "codex", "gemini-cli", "qwen-code", "opencode"):
        real_cli(cli)
    for name, value in OFFLINE.items():
        monkeypatch.setenv(name, value)
    return home


async def test_claude_code_as_coder_opens_a_codex_reviewer_waits_for_it_and_reads_its_answer(
    tmp_path: Path, offline: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    claude, codex = real_cli("claude-code"), real_cli("codex")
    monkeypatch.setenv("PATH", f"{claude.bin_dir}:{codex.bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin")
    tool = f"mcp__{FLOOR_SERVER}__{{}}".format
    rules = [
        Rule(when="open a reviewer", call=tool("open"),
             arguments={"adapter": "codex", "role": "reviewer", "task": "Look over the change and answer"}),
        Rule(when="wait for it", call=tool("wait"), arguments={"pane": 2, "until": "done", "timeout": 240}),
        Rule(when="read it", call=tool("read"), arguments={"pane": 2, "lines": 40}),
        Rule(when="Look over the change", call=tool("send"), arguments={"pane": 1, "message": "Reviewed: ship it"}),
    ]  # fmt: skip (the last one is the reviewer's: Codex's model answers its task by sending to pane 1)
    claude_code = adjusted(claude.adapter, env={"ENABLE_TOOL_SEARCH": "false"})  # MCP tools in the model's list
    with FakeModelServer(rules) as model:
        plans = [PanePlan(PaneSetup(adapter="claude-code", role="coder", cwd=project, title="claude"), claude_code,
                          "the test")]  # fmt: skip
        launch = Launch(plans, discover(entry_points=False), test_mode=TestMode(model_base_url=model.url))
        async with hosted(launch=launch) as host:
            await wait_until(lambda: host.ready, timeout=60, message="the session's panes")
            [lead] = host.panes
            lead.resize(120, 40)
            await wait_until(lambda: "? for shortcuts" in screen_of(lead), timeout=120, message=lambda: screen_of(lead))
            await listed_polters_tools(host)

            await ask(lead, model, "open a reviewer", '"pane":2')  # its structured result
            reviewer = host.panes[1]
            reviewer.resize(120, 40)
            assert reviewer.agent is not None and (reviewer.agent.adapter.name, reviewer.agent.role) == (
                "codex",
                "reviewer",
            )
            await wait_until(lambda: any("[from pane 1 · coder] Look over the change" in request.prompt
                                         for request in model.requests if request.protocol == "openai"),
                             timeout=180, message=lambda: f"{text_of(reviewer)}\nthe model was asked: {asked(model)}")  # fmt: skip
            # The reviewer's answer, sent to the pane that gave it the task: typed into Claude Code once it is idle,
            # a prompt its model reads with the sender named (not the human's words).
            await wait_until(lambda: any("[from pane 2 · reviewer] Reviewed: ship it" in request.prompt
                                         for request in model.requests if request.protocol == "anthropic"),
                             timeout=180, message=lambda: text_of(lead))  # fmt: skip
            assert lead.task_from == (reviewer.id, "pane 2 · reviewer")
            await ask(lead, model, "wait for it", '"state":"done"')
            await ask(lead, model, "read it", "[from pane 1 · coder] Look over the change")
            calls = [(row.name, row.decision) for row in host.workspace.audit_rows
                     if row.server == FLOOR_SERVER and row.layer == "call"]  # fmt: skip
            assert calls == [("open", "allow"), ("send", "allow"), ("wait", "allow"), ("read", "allow")], calls
            [sent] = [row for row in host.workspace.audit_rows
                      if row.server == FLOOR_SERVER and row.name == "send" and row.layer == "call"]  # fmt: skip
            assert sent.pane == reviewer.id and 'to pane 1 (coder): "Reviewed: ship it"' in sent.reason, sent


PROTOCOLS = {"claude-code": "anthropic", "codex": "openai", "gemini-cli": "gemini", "qwen-code": "chat",
             "opencode": "anthropic"}
"""The model API each CLI speaks in test mode (what the fake model records as the request's protocol)."""


@pytest.mark.parametrize("name", list(PROTOCOLS))
async def test_a_message_for_a_pane_whose_cli_has_not_started_is_submitted_once_the_cli_can_take_it(
    name: str, tmp_path: Path, offline: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pane's program starts only once a window gives it a size (late on a loaded machine, or when the session
    is detached), so a message can be due before the CLI has the terminal. Typed then, the tty echoed it (it looked
    drawn) and the CLI never submitted it: Codex and Claude Code read it later as keys with its Enter as a newline
    (the prompt stayed in their input box), Gemini CLI, Qwen Code and opencode lost it."""
    cli = real_cli(name)
    monkeypatch.setenv("PATH", f"{cli.bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin")
    if name == "opencode":
        seed_opencode_plugin_sdk(offline, project)
    with FakeModelServer() as model:
        plans = [PanePlan(PaneSetup(adapter=name, role="reviewer", cwd=project, title=name), cli.adapter,
                          "the test")]  # fmt: skip
        launch = Launch(plans, discover(entry_points=False), test_mode=TestMode(model_base_url=model.url))
        async with hosted(launch=launch) as host:
            await wait_until(lambda: host.ready, timeout=60, message="the session's panes")
            [pane] = host.panes
            assert not pane.terminal.started
            assert "queued" in host.team.send(pane, "the test", "pane 9 · lead", "Look over the change")
            pane.resize(120, 40)
            await wait_until(lambda: any("[from pane 9 · lead] Look over the change" in request.prompt
                                         for request in model.requests if request.protocol == PROTOCOLS[name]),
                             timeout=120, message=lambda: f"{text_of(pane)}\nthe model was asked: {asked(model)}")  # fmt: skip


async def ask(pane: HostPane, model: FakeModelServer, words: str, expect: str) -> None:
    """The human types ``words`` into the CLI; its model calls a team tool, whose result holds ``expect``."""
    before = text_of(pane).count("FINAL")
    await wait_until(lambda: pane.agent_state is AgentState.IDLE, timeout=60, message=lambda: text_of(pane))
    await type_line(pane, words)
    deadline = time.monotonic() + 240
    while text_of(pane).count("FINAL") <= before:  # a CLI busy a moment more may take the Enter as a newline
        assert time.monotonic() < deadline, text_of(pane)
        with contextlib.suppress(AssertionError):
            await wait_until(lambda: text_of(pane).count("FINAL") > before, timeout=15)
        if text_of(pane).count("FINAL") <= before and pane.agent_state is AgentState.IDLE:
            pane.terminal.send(b"\r")
    results = [request.tool_result or "" for request in model.requests if request.tool_result]
    assert any(expect in result for result in results[-3:]) or expect in text_of(pane), (words, results[-3:])


async def test_a_role_that_may_open_helpers_only_is_refused_a_leads_pane(
    tmp_path: Path, offline: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli = real_cli("claude-code")
    monkeypatch.setenv("PATH", f"{cli.bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin")
    write_roles(config_dir() / "roles", ROLES)
    tool = f"mcp__{FLOOR_SERVER}__{{}}".format
    rules = [
        Rule(when="open a lead", call=tool("open"), arguments={"adapter": "codex", "role": "e2e-lead", "task": "hi"})
    ]
    claude_code = adjusted(cli.adapter, env={"ENABLE_TOOL_SEARCH": "false"})
    with FakeModelServer(rules) as model:
        plans = [PanePlan(PaneSetup(adapter="claude-code", role="e2e-researcher", cwd=project, title="claude"),
                          claude_code, "the test")]  # fmt: skip
        launch = Launch(plans, discover(entry_points=False), test_mode=TestMode(model_base_url=model.url))
        async with hosted(launch=launch) as host:
            await wait_until(lambda: host.ready, timeout=60, message="the session's panes")
            [claude] = host.panes
            claude.resize(120, 40)
            await wait_until(
                lambda: "? for shortcuts" in screen_of(claude), timeout=120, message=lambda: screen_of(claude)
            )
            await listed_polters_tools(host)
            await prompt_with_polters_tools(claude, model, "open a lead", tool("open"))

            def opens() -> list[object]:
                return [row for row in host.workspace.audit_rows
                        if row.server == FLOOR_SERVER and row.name == "open" and row.layer == "call"]  # fmt: skip

            await wait_until(opens, timeout=90, message=lambda: text_of(claude))
            [row] = opens()
            assert row.decision == "deny" and row.rule == "team.open", row  # type: ignore[attr-defined]
            await wait_until(lambda: any('team.open is ["e2e-helper"]' in (request.tool_result or "")
                                         for request in model.requests), timeout=60)  # fmt: skip
            assert len(host.panes) == 1


async def test_gemini_cli_hands_the_scripted_agent_work_waits_for_it_and_reads_it(
    tmp_path: Path, offline: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli = real_cli("gemini-cli")
    monkeypatch.setenv("PATH", f"{cli.bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin")
    write_roles(config_dir() / "roles", ROLES)
    tool = f"mcp_{FLOOR_SERVER}_{{}}".format
    rules = [
        Rule(when="hand it over", call=tool("send"), arguments={"pane": 2, "message": "work 1.2"}),
        Rule(when="wait for it", call=tool("wait"), arguments={"pane": 2, "until": "done", "timeout": 60}),
        Rule(when="read it", call=tool("read"), arguments={"pane": 2, "lines": 20}),
    ]
    shell = discover(entry_points=False).get("shell")
    with FakeModelServer(rules) as model:
        plans = [
            PanePlan(PaneSetup(adapter="gemini-cli", role="e2e-lead", cwd=project, title="gemini"), cli.adapter,
                     "the test"),
            PanePlan(PaneSetup(adapter="shell", role="e2e-helper", cwd=project, title="scripted",
                               command=SCRIPTED_AGENT), shell, "the test"),
        ]  # fmt: skip
        launch = Launch(plans, discover(entry_points=False), test_mode=TestMode(model_base_url=model.url))
        async with hosted(launch=launch) as host:
            await wait_until(lambda: host.ready, timeout=60, message="the session's panes")
            gemini, scripted = host.panes
            for pane in (gemini, scripted):
                pane.resize(120, 40)
            await wait_until(lambda: "Type your message" in screen_of(gemini), timeout=120,
                             message=lambda: screen_of(gemini))  # fmt: skip
            await wait_until(lambda: "you>" in screen_of(scripted), timeout=30, message=lambda: screen_of(scripted))
            await listed_polters_tools(host, "gemini")
            for words, expect in (("hand it over", "typed into pane 2"), ("wait for it", "Worked 1.2 s: done."),
                                  ("read it", "[from pane 1 · e2e-lead] work 1.2")):  # fmt: skip
                await ask(gemini, model, words, expect)
            assert "A message from pane 1 · e2e-lead's agent" in text_of(scripted)
            calls = [(row.name, row.decision) for row in host.workspace.audit_rows
                     if row.server == FLOOR_SERVER and row.layer == "call"]  # fmt: skip
            assert calls == [("send", "allow"), ("wait", "allow"), ("read", "allow")], calls
