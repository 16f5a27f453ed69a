"""The Claude Code adapter's launch config, skill hiding and hook translation (the real CLI: tests/adapters/e2e)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from polter.adapters import Adapter, HookAnswer, PaneToPrepare, TestMode
from polter.adapters.plugins import AdapterRegistry, write_pane_files

from .conftest import TOKEN, deny_skills, write_skill


@pytest.fixture
def claude(bundled: AdapterRegistry) -> Adapter:
    return bundled.get("claude-code")


def written(pane: PaneToPrepare, adapter: Adapter) -> tuple[list[str], dict[str, dict], str]:
    prepared = adapter.prepare(pane)
    paths = write_pane_files(pane.runtime_dir, prepared.files)
    texts = {str(path.relative_to(pane.runtime_dir)): path.read_text() for path in paths}
    return list(prepared.launch.argv), {name: json.loads(text) for name, text in texts.items()}, "".join(texts.values())


def test_every_gateway_endpoint_is_the_only_mcp_config(claude: Adapter, make_pane: Callable[..., PaneToPrepare]) -> None:
    pane = make_pane()
    argv, files, text = written(pane, claude)
    servers = files["claude/mcp.json"]["mcpServers"]
    assert servers == {
        name: {"type": "http", "url": f"http://127.0.0.1:4321/mcp/{name}",
               "headers": {"Authorization": "Bearer ${POLTER_TOKEN}"}, "alwaysLoad": True}
        for name in ("time", "everything", "polter")
    }
    assert argv[1:] == ["--mcp-config", str(pane.file("claude/mcp.json")), "--strict-mcp-config",
                        "--settings", str(pane.file("claude/settings.json")), "--permission-mode", "default"]
    assert TOKEN not in text


def test_the_veto_hook_blocks_when_it_fails(claude: Adapter, make_pane: Callable[..., PaneToPrepare]) -> None:
    _argv, files, _text = written(make_pane(), claude)
    settings = files["claude/settings.json"]
    [entry] = settings["hooks"]["PreToolUse"]
    assert entry["matcher"] == "*", "every tool: MCP tools, skills and Claude Code's own"
    [hook] = entry["hooks"]
    pane = make_pane()
    assert hook["type"] == "http", "no process per call: Claude Code posts the payload to the gateway itself"
    assert hook["url"] == (
        f"http://127.0.0.1:4321/hook/claude-code/payload?project={pane.cwd}&runtime={pane.runtime_dir}"
    )
    assert hook["headers"] == {"Authorization": "Bearer $POLTER_TOKEN"} and hook["allowedEnvVars"] == ["POLTER_TOKEN"]
    assert hook["onFailure"] == "block"
    assert settings["disableAllHooks"] is False, "a user's disableAllHooks must not switch the veto off"
    assert settings["tui"] == "default"
    assert settings["permissions"]["allow"] == ["mcp__time", "mcp__everything", "mcp__polter"]


def test_denied_skills_are_switched_off_wherever_they_come_from(
    claude: Adapter, make_pane: Callable[..., PaneToPrepare], home: Path, project: Path
) -> None:
    write_skill(home / ".claude" / "skills", "deploy")
    write_skill(project / "src" / ".claude" / "skills", "nested-ok")
    write_skill(project / ".claude" / "skills", "wipe-db")
    pane = make_pane(cwd=project / "src", skill_decision=deny_skills("deploy", "wipe-db", "simplify"))
    (project / "src").mkdir(exist_ok=True)
    names = {skill.name: skill.scope for skill in claude.skills(pane.cwd, home)}
    assert names["deploy"] == "user" and names["wipe-db"] == "project" and names["nested-ok"] == "project"
    assert names["simplify"] == "bundled"
    prepared = claude.prepare(pane)
    assert prepared.hidden_skills == ("deploy", "simplify", "wipe-db")
    _argv, files, _text = written(pane, claude)
    settings = files["claude/settings.json"]
    assert settings["skillOverrides"] == {"deploy": "off", "simplify": "off", "wipe-db": "off"}
    assert settings["permissions"]["deny"] == ["Skill(deploy)", "Skill(simplify)", "Skill(wipe-db)"]


def test_an_asked_skill_stays_visible(claude: Adapter, make_pane: Callable[..., PaneToPrepare], home: Path) -> None:
    write_skill(home / ".claude" / "skills", "deploy")
    assert claude.prepare(make_pane(skill_decision=lambda name: "ask")).hidden_skills == ()


def test_plugin_skills_are_listed_with_their_plugin(claude: Adapter, home: Path, project: Path) -> None:
    install = home / "plugin-cache" / "helper"
    write_skill(install / "skills", "lint")
    registry = home / ".claude" / "plugins" / "installed_plugins.json"
    registry.parent.mkdir(parents=True)
    registry.write_text(json.dumps({"version": 2, "plugins": {"helper@market": [{"scope": "user", "installPath": str(install)}]}}))
    [skill] = [s for s in claude.skills(project, home) if s.scope == "plugin"]
    assert (skill.name, skill.origin) == ("helper:lint", "plugin helper@market")


def test_test_mode_skips_onboarding_and_trust(claude: Adapter, make_pane: Callable[..., PaneToPrepare], project: Path) -> None:
    pane = make_pane(test_mode=TestMode(model_base_url="http://127.0.0.1:5555", model="claude-fake"))
    prepared = claude.prepare(pane)
    env = prepared.launch.env
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:5555" and env["ANTHROPIC_MODEL"] == "claude-fake"
    assert env["CLAUDE_CONFIG_DIR"] == str(pane.file("claude/config"))
    assert "ANTHROPIC_API_KEY" in prepared.launch.unset_env
    seeded = json.loads(prepared.files["claude/config/.claude.json"].text or "")
    assert seeded["hasCompletedOnboarding"] is True
    assert seeded["projects"][str(project)] == {"hasTrustDialogAccepted": True}
    assert "CLAUDE_CONFIG_DIR" not in claude.prepare(make_pane()).launch.env, "real use keeps the user's login"


def test_hook_payloads_become_polter_requests(claude: Adapter) -> None:
    request = claude.hook_request({
        "session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "mcp__my_server__do_it",
        "tool_input": {"x": 1}, "tool_use_id": "t", "mcp_server": {"name": "my.server", "source": "dynamic"},
    })
    assert (request.kind, request.server, request.tool, request.arguments) == ("mcp_tool", "my.server", "do_it", {"x": 1})
    skill = claude.hook_request({"tool_name": "Skill", "tool_input": {"skill": "deploy", "args": "now"}})
    assert (skill.kind, skill.skill) == ("skill", "deploy")
    bash = claude.hook_request({"tool_name": "Bash", "tool_input": {"command": "ls && git push"}, "cwd": "/p"})
    assert (bash.kind, bash.builtin, bash.command, bash.cwd) == ("builtin", "shell", "ls && git push", "/p")
    write = claude.hook_request({"tool_name": "Write", "tool_input": {"file_path": "/p/a.py", "content": "x"}})
    assert (write.builtin, write.paths) == ("write", ["/p/a.py"])
    grep = claude.hook_request({"tool_name": "Grep", "tool_input": {"pattern": "x"}, "cwd": "/p"})
    assert (grep.builtin, grep.paths) == ("read", ["/p"]), "no path: the folder it searches"
    fetch = claude.hook_request({"tool_name": "WebFetch", "tool_input": {"url": "https://x.org/a", "prompt": "?"}})
    assert (fetch.builtin, fetch.urls) == ("web", ["https://x.org/a"])
    assert claude.hook_request({"tool_name": "Task", "tool_input": {"subagent_type": "Explore"}}).agent == "Explore"
    assert claude.hook_request({"tool_name": "TodoWrite", "tool_input": {}}).builtin == "meta"
    assert claude.hook_request({"tool_name": "CronCreate", "tool_input": {}}).builtin == "CronCreate"


def test_a_deny_is_a_permission_decision(claude: Adapter) -> None:
    reply = claude.hook_answer(HookAnswer(decision="deny", reason="researchers cannot write", rule="tools.deny"))
    assert reply.exit_code == 0
    assert json.loads(reply.stdout) == {"hookSpecificOutput": {
        "hookEventName": "PreToolUse", "permissionDecision": "deny",
        "permissionDecisionReason": "Polter: researchers cannot write (rule: tools.deny)"}}
    allowed = json.loads(claude.hook_answer(HookAnswer(decision="allow")).stdout)["hookSpecificOutput"]
    assert allowed == {"hookEventName": "PreToolUse", "permissionDecision": "allow"}, "Claude Code need not ask again"


def test_in_place_its_state_is_writable_in_a_confined_pane_and_its_settings_are_not(
    claude: Adapter, make_pane: Callable[..., PaneToPrepare], home: Path
) -> None:
    """Outside test mode Claude Code keeps its state where it always does: each state entry of ``~/.claude`` is the
    pane's to write; its settings, plugins, skills, agents and commands are not (``~/.claude`` is held read-only),
    and ``~/.claude.json``, which also holds the user's MCP servers and trusted folders, is the pane's own copy."""
    prepared = claude.prepare(make_pane())
    state = set(prepared.state_folders)
    assert {home / ".claude" / "projects", home / ".claude" / "history.jsonl"} <= state
    shared = {"settings.json", "plugins", "skills", "agents", "commands", "CLAUDE.md", ".claude.json"}
    assert not {path.name for path in state} & shared
    assert claude.human_config(home) == (home / ".claude", home / ".claude.json"), "held read-only in every pane"
    assert prepared.private_files == (home / ".claude.json",)
