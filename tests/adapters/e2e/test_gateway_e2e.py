"""The real Claude Code, Codex, Gemini CLI, Qwen Code and opencode behind the real gateway, configured only by
their adapters.

Each CLI runs against a fake model API (scripted to call tools) and `polter gateway` over real upstreams
(`time`: mcp-server-time, `everything`: @modelcontextprotocol/server-everything). Shown for each:

- it reaches every gateway endpoint with the pane's token (the gateway knows the pane only from it);
- it is offered only the tools the role lets it see (what the fake model received);
- a call the role denies is refused by the hook (before the gateway's tools/call) and, with the hook
  out of the way, by the gateway itself;
- a denied skill is not offered, and one denied after start is refused by the hook where the CLI has one;
- a role switch reaches a hot CLI (Claude Code, Gemini CLI, opencode) without a restart, in both directions
  (a tool the new role allows is offered, one it denies is no longer offered or is refused); Codex and
  Qwen Code (cold) keep their old list, but their calls are decided by the new role.

Non-interactive runs (`-p`, `exec`, `run`) prove the single-turn points (Qwen Code against the fake's OpenAI
Chat Completions); every CLI also runs as a TUI in a PTY pane for the role switches.
"""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest
from support.fake_models import FakeModelServer, ModelRequest, Rule

from polter.adapters import Adapter, PaneToPrepare, TestMode

from ..conftest import files_containing
from . import offers
from .agent_pane import Agent, run_once
from .conftest import real_cli, seed_opencode_plugin_sdk, write_test_skills
from .gateway_process import PolterGateway
from .offers import offered_skills
from .unhooked import adjusted

pytestmark = pytest.mark.e2e

ROLES = {
    "e2e-worker": """
        description = "Works with both servers; converting times is denied; reading the clock is gated"
        [servers]
        default = "allow"
        [tools]
        default = "allow"
        deny = ["time/convert_time"]
        [skills]
        default = "allow"
        deny = ["secret-skill"]
        [gates]
        "time/get_current_time" = ["what time"]
    """,
    "e2e-converter": """
        description = "As e2e-worker, and converting times is allowed too"
        extends = "e2e-worker"
        [tools]
        default = "allow"
        allow = ["time/convert_time"]
        deny = []
    """,
    "e2e-reader": """
        description = "No everything server tools, and no skills"
        [servers]
        default = "allow"
        [tools]
        default = "allow"
        deny = ["everything/*", "time/convert_time"]
        [skills]
        default = "deny"
    """,
}


class Naming:
    """How each CLI names a gateway tool, and its non-interactive invocation."""

    def __init__(self, mcp: str, before: list[str], after: list[str], ready: str) -> None:
        self.mcp, self.before, self.after, self.ready = mcp, before, after, ready

    def tool(self, server: str, tool: str) -> str:
        return self.mcp.format(server=server, tool=tool)


CLIS = {
    "claude-code": Naming("mcp__{server}__{tool}", [], ["-p"], "? for shortcuts"),
    "codex": Naming("mcp__{server}__{tool}", ["exec"], ["--skip-git-repo-check"], "Ask Codex to do anything"),
    "gemini-cli": Naming("mcp_{server}_{tool}", [], ["-p"], "Type your message"),
    "qwen-code": Naming("mcp__{server}__{tool}", [], ["-p"], "Type your message"),
    "opencode": Naming("{server}_{tool}", [], ["run"], "Ask anything"),
}
LISTS_PROJECT_SKILLS = {"claude-code", "codex", "gemini-cli", "qwen-code"}
"""In `opencode run`, opencode 1.18.33 lists only its built-in skill to the model; its TUI lists the project's
too (test_role_switches_in_the_tui)."""
SKILL_CALLS = {"claude-code": ("Skill", {"skill": "ok-skill"}), "gemini-cli": ("activate_skill", {"name": "ok-skill"}),
               "qwen-code": ("skill", {"skill": "ok-skill"}), "opencode": ("skill", {"name": "ok-skill"})}
"""How the model uses a skill in the CLIs that have a skill tool."""



def rules_for(naming: Naming) -> list[Rule]:
    return [
        Rule(when="please echo", call=naming.tool("everything", "echo"), arguments={"message": "hi from the pane"}),
        Rule(when="time is it", call=naming.tool("time", "get_current_time"), arguments={"timezone": "UTC"}),
    ]


def hook_rows(rows: list[dict[str, Any]], name: str) -> list[tuple[str, str]]:
    return [(row["layer"], row["decision"]) for row in rows if row["name"] == name and row["layer"] in ("hook", "call")]


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> PolterGateway:
    """One gateway for the module's tests (a start costs seconds): each test registers its own panes and reads
    only their audit rows, so no test sees another's."""
    with PolterGateway(tmp_path_factory.mktemp("gateway-e2e"), ROLES) as running:
        yield running


def make_pane(gateway: PolterGateway, token: str, tmp_path: Path, home: Path, project: Path, model: FakeModelServer,
              role: str, **overrides: Any) -> PaneToPrepare:
    return PaneToPrepare(pane_id="e2e", gateway_url=gateway.url, servers=("time", "everything"), runtime_dir=tmp_path / "runtime",
                cwd=project, token=token, home=home, test_mode=TestMode(model_base_url=model.url),
                skill_decision=gateway.skill_policy(role), **overrides)


@pytest.mark.parametrize("name", ["claude-code", "codex", "gemini-cli", "qwen-code", "opencode"])
def test_listing_hook_and_gateway_refusals(name: str, gateway: PolterGateway, tmp_path: Path, home: Path,
                                           project: Path) -> None:
    cli, naming = real_cli(name), CLIS[name]
    write_test_skills(project)
    if name == "opencode":
        seed_opencode_plugin_sdk(home, project)
    pane_id, token = gateway.register("e2e-worker")
    clock = naming.tool("time", "get_current_time")
    after_echo = Rule(when="", after="hi from the pane", call=clock, arguments={"timezone": "UTC"})
    with FakeModelServer([*rules_for(naming), after_echo]) as model:
        pane = make_pane(gateway, token, tmp_path, home, project, model, "e2e-worker")

        def run(prompt: str, adapter: Adapter = cli.adapter) -> ModelRequest:
            start = len(model.requests)
            _prepared, result = run_once(adapter, pane, [*naming.after, prompt], before_args=naming.before,
                                         home=home, path_dirs=[cli.bin_dir])
            assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
            return model.wait_for(lambda request: prompt in request.prompt and bool(request.tools), start=start)

        # One turn, two calls: an allowed one goes through hook and gateway, and then (the model's next call after
        # its result) one the role denies. The offered tools follow the role.
        first = run("please echo hi")
        assert first.reply.startswith(f"call {naming.tool('everything', 'echo')}")
        assert naming.tool("time", "get_current_time") in first.tools  # gated, so visible
        assert naming.tool("polter", "whoami") in first.tools  # the floor server
        assert naming.tool("time", "convert_time") not in first.tools  # denied: not listed
        echoed = model.wait_for(lambda request: request.tool_result is not None and "hi from the pane" in request.tool_result)
        assert "Polter" not in (echoed.tool_result or "")
        rows = gateway.audit(pane_id)
        assert {row["pane"] for row in rows} == {pane_id} and {row["role"] for row in rows} == {"e2e-worker"}
        assert {row["server"] for row in rows if row["layer"] == "listing"} >= {"time", "everything"}
        assert hook_rows(rows, "echo") == [("hook", "allow"), ("call", "allow")]

        # The skill the role denies is not offered; the others are.
        skills = offered_skills(first)
        assert "secret-skill" not in skills, skills
        assert ("ok-skill" in skills) is (name in LISTS_PROJECT_SKILLS), skills
        assert skills, "every CLI lists some skills to the model"

        # The call the role denies (the gate: the human never said "what time" in the pane) was refused by the
        # hook, before the gateway's tools/call.
        assert echoed.reply.startswith(f"call {clock}"), echoed.reply
        refused = model.wait_for(lambda request: request.tool_result is not None and "gated" in request.tool_result)
        assert "Polter:" in (refused.tool_result or "")
        assert hook_rows(gateway.audit(pane_id), "get_current_time") == [("hook", "deny")]

        # With the hook out of the way (a CLI that skips it), the gateway itself refuses the call.
        run("what time is it now", adapter=adjusted(cli.adapter, hook=False))
        refused = model.wait_for(lambda request: request.tool_result is not None and "forbidden, not broken" in request.tool_result)
        assert "Polter refused time/get_current_time" in (refused.tool_result or "")
        assert hook_rows(gateway.audit(pane_id), "get_current_time") == [("hook", "deny"), ("call", "deny")]

    # The token stayed in the CLI's environment: the CLI wrote it into no file of the user's or the project's,
    # and the pane's runtime dir (where any literal copy would have to live) is gone.
    assert not files_containing(token, home, project)
    assert not pane.runtime_dir.exists()


@pytest.mark.parametrize("name", ["claude-code", "gemini-cli", "codex", "qwen-code", "opencode"])
async def test_role_switches_in_the_tui(name: str, gateway: PolterGateway, tmp_path: Path, home: Path,
                                        project: Path) -> None:
    """The TUI in a real PTY pane, its role switched twice while it runs.

    1. e2e-worker → e2e-converter adds `time/convert_time`: a hot CLI re-lists on the gateway's
       list_changed and offers it on the next turn, without a restart; Codex (cold) does not.
    2. → e2e-reader removes the `everything` tools and `time/convert_time`: Gemini CLI and opencode stop
       offering them.
       Claude Code 2.1.332 keeps the conversation's tool definitions: it tells the model that the tool it
       added during the conversation is gone, and refuses the model's call to `everything/echo` itself
       ("No such tool available", before the hook). Codex and Qwen Code (cold) keep their list; the call is
       refused by the hook, which asks the gateway under the new role.
    3. A skill listed since the start and denied by e2e-reader is refused by the hook (Codex has no skill tool).
    4. Claude Code only: after `/clear` the new conversation is offered neither removed tool.
    """
    cli, naming = real_cli(name), CLIS[name]
    removes_hot = name in ("gemini-cli", "opencode")
    adds_hot = cli.adapter.info.mcp_liveness.value == "hot"
    write_test_skills(project)
    if name == "opencode":
        seed_opencode_plugin_sdk(home, project)
    pane_id, token = gateway.register("e2e-worker")
    rules = rules_for(naming)
    if name in SKILL_CALLS:
        tool, arguments = SKILL_CALLS[name]
        rules.append(Rule(when="use the ok skill", call=tool, arguments=arguments))
    echo, convert = naming.tool("everything", "echo"), naming.tool("time", "convert_time")

    async def switch(role: str, *changed: str) -> None:
        gateway.set_role(pane_id, role)
        if adds_hot:  # the CLI lists each server whose tools changed again after its list_changed, under the new role
            for server in changed:  # (one by one: a prompt typed after the first listing met the other's old list)
                await asyncio.to_thread(gateway.wait_for_audit, pane_id,
                                        lambda row, server=server: row["layer"] == "listing" and row["role"] == role
                                        and row["server"] == server)

    with FakeModelServer(rules) as model:
        pane = make_pane(gateway, token, tmp_path, home, project, model, "e2e-worker")
        async with Agent(cli.adapter, pane, home=home, path_dirs=[cli.bin_dir]) as agent:
            await agent.wait_for(naming.ready, timeout=120)
            for server in ("time", "everything"):  # the TUI connects its MCP servers in the background
                await asyncio.to_thread(gateway.wait_for_audit, pane_id,
                                        lambda row, server=server: row["layer"] == "listing" and row["server"] == server)
            await agent.wait_until_quiet(1.0)
            assert cli.adapter.state(agent.screen) == "idle", agent.text()

            await agent.type("hello there")
            before = await answer(model, "hello there")
            await agent.wait_for("Hello from fake model", timeout=60)
            assert echo in before.tools and convert not in before.tools
            assert "ok-skill" in offered_skills(before) and "secret-skill" not in offered_skills(before)

            await switch("e2e-converter", "time")
            await agent.type("hello again")
            added = await answer(model, "hello again")
            assert (convert in added.tools) is adds_hot, added.tools

            await switch("e2e-reader", "time", "everything")
            await agent.type("please echo hi")
            removed = await answer(model, "please echo hi")
            if removes_hot:
                assert echo not in removed.tools and not removed.reply.startswith("call")
            elif adds_hot:  # Claude Code 2.1.332 keeps the conversation's tool definitions, but refuses calls
                assert echo in removed.tools and convert in removed.tools
                # The tool added during the conversation (deferred) is announced as gone; the one offered up
                # front is not, and Claude Code refuses the model's call to it itself.
                assert withdrawn_tools(removed) == {convert}, withdrawn_tools(removed)
                refused = await result_containing(model, "No such tool available: " + echo, after=removed)
                assert "does not offer this tool" in (refused.tool_result or "")
                assert hook_rows(gateway.audit(pane_id), "echo") == [], "refused before the hook"
            else:  # Codex, Qwen Code: cold, the tool is still there; the hook asks the gateway, which says no
                assert echo in removed.tools, "a cold CLI keeps the list it started with"
                refused = await result_containing(model, "Polter:", after=removed)
                assert "everything/*" in (refused.tool_result or "")
                assert hook_rows(gateway.audit(pane_id), "echo") == [("hook", "deny")]

            if name in SKILL_CALLS:  # listed since the start (skills are cold), denied now: the hook refuses it
                await agent.type("use the ok skill")
                asked = await answer(model, "use the ok skill")
                refused = await result_containing(model, "Polter:", after=asked)
                assert "ok-skill" in (refused.tool_result or "")
                assert [(row["layer"], row["decision"]) for row in gateway.audit(pane_id) if row["name"] == "ok-skill"] == [
                    ("hook", "deny")]
            if name == "claude-code":  # a new conversation is offered only what the role allows now
                await agent.wait_until_quiet(1.5)
                await agent.type("/clear")
                await agent.wait_until_quiet(1.5)
                await agent.type("hello once more")
                fresh = await answer(model, "hello once more")
                assert echo not in fresh.tools and convert not in fresh.tools, fresh.tools
                assert naming.tool("time", "get_current_time") in fresh.tools, fresh.tools
                assert not withdrawn_tools(fresh)
            await agent.wait_until_quiet(1.5)
            assert cli.adapter.state(agent.screen) == "idle", agent.text()


WITHDRAWN = re.compile(r"The following (?:deferred )?tools are (?:no longer available|not offered right now)[^:]*:(.*?)(?:\n\n|$)", re.S)


def withdrawn_tools(request: ModelRequest) -> set[str]:
    """Tools Claude Code told the model in this request's conversation that it no longer has."""
    text = "\n".join(offers.strings(request.body))
    return {name for match in WITHDRAWN.finditer(text) for name in re.findall(r"mcp__[\w-]+", match.group(1))}


async def answer(model: FakeModelServer, prompt: str) -> ModelRequest:
    """The agent's request for the human's ``prompt`` (not a side request, such as opencode's title, without tools)."""
    return await asyncio.to_thread(model.wait_for, lambda request: request.prompt.endswith(prompt) and bool(request.tools), 90)


async def result_containing(model: FakeModelServer, text: str, after: ModelRequest) -> ModelRequest:
    """The first tool result containing ``text`` that the model received after the request ``after``."""
    start = model.requests.index(after) + 1
    return await asyncio.to_thread(
        model.wait_for, lambda request: request.tool_result is not None and text in request.tool_result, 90, start=start)
