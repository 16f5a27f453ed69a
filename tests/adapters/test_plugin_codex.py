"""The Codex adapter: a per-pane CODEX_HOME with the gateway servers, the veto hook, skill switches and the
user's own config and login carried over."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest

from polter.adapters import Adapter, HookAnswer, PaneToPrepare, TestMode
from polter.adapters.plugins import AdapterRegistry, write_pane_files
from polter.protocol import BuiltinsPolicy

from .conftest import TOKEN, deny_skills, write_skill


@pytest.fixture
def codex(bundled: AdapterRegistry) -> Adapter:
    return bundled.get("codex")


def config_of(pane: PaneToPrepare, adapter: Adapter) -> dict:
    prepared = adapter.prepare(pane)
    write_pane_files(pane.runtime_dir, prepared.files)
    text = (pane.runtime_dir / "codex" / "config.toml").read_text()
    assert TOKEN not in text
    return tomllib.loads(text)


def test_the_gateway_endpoints_are_the_only_servers(codex: Adapter, make_pane: Callable[..., PaneToPrepare], home: Path) -> None:
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(
        'model = "gpt-9"\n[mcp_servers.github]\ncommand = "gh-mcp"\n[hooks]\nStop = []\n'
        '[projects."/src/x"]\ntrust_level = "trusted"\n[features]\napps = true\nshell_snapshot = true\n'
    )
    pane = make_pane()
    config = config_of(pane, codex)
    assert config["mcp_servers"] == {
        name: {"url": f"http://127.0.0.1:4321/mcp/{name}", "bearer_token_env_var": "POLTER_TOKEN",
               "default_tools_approval_mode": "approve"}
        for name in ("time", "everything", "polter")
    }
    assert config["model"] == "gpt-9" and config["projects"] == {"/src/x": {"trust_level": "trusted"}}
    # Apps (the built-in codex_apps MCP server) and plugins would add servers past the gateway.
    assert config["features"] == {"apps": False, "plugins": False, "shell_snapshot": True}
    prepared = codex.prepare(pane)
    assert prepared.launch.env["CODEX_HOME"] == str(pane.file("codex"))
    assert prepared.launch.argv[1:] == ("--dangerously-bypass-hook-trust",)


def test_the_veto_hook_runs_before_every_tool(codex: Adapter, make_pane: Callable[..., PaneToPrepare]) -> None:
    pane = make_pane()
    config = config_of(pane, codex)
    [entry] = config["hooks"]["PreToolUse"]
    assert entry["matcher"] == ".*"
    command = f"/opt/polter/bin/python -m polter.cli.hook codex {pane.cwd} {pane.runtime_dir}"
    assert entry["hooks"] == [{"type": "command", "command": command, "timeout": 600}]
    assert "sandbox_mode" not in config, "no role given: Codex's own sandbox settings stay the user's"


def test_the_sandbox_follows_the_role(codex: Adapter, make_pane: Callable[..., PaneToPrepare]) -> None:
    reader = config_of(make_pane(builtins=BuiltinsPolicy(default="ask", deny=["write", "web"])), codex)
    assert (reader["sandbox_mode"], reader["web_search"]) == ("read-only", "disabled")
    writer = config_of(make_pane(builtins=BuiltinsPolicy(default="allow", ask=["write(@outside)"])), codex)
    assert writer["sandbox_mode"] == "workspace-write" and "web_search" not in writer


def test_codex_state_is_kept_in_the_users_home(codex: Adapter, make_pane: Callable[..., PaneToPrepare], home: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Login, conversations, history and databases are the user's ~/.codex, linked whether they exist or not."""
    (home / ".codex" / "sessions").mkdir(parents=True)
    (home / ".codex" / "auth.json").write_text('{"tokens": {}}')
    pane = make_pane()
    prepared = codex.prepare(pane)
    [state] = prepared.homes
    assert (state.folder, state.user_folder) == ("codex", home / ".codex")
    assert {"auth.json", "sessions/", "history.jsonl", "state_5.sqlite", "rules/"} <= set(state.keep)
    assert {"rules/", "hooks.json", "AGENTS.md"} <= set(state.shared), "the human's Codex runs them"
    assert not {"rules", "AGENTS.md"} & set(state.state()) and "hooks.json" not in state.kept(), "never linked"
    assert "codex/auth.json" not in prepared.files
    [config] = state.edited_configs  # a folder's trust, recorded by Codex in the pane's config.toml, is the user's
    assert config.file == "config.toml" and {"mcp_servers", "hooks"} <= set(config.polter_keys)
    assert "projects" not in config.polter_keys and state.sqlite_path_records == ("state_5.sqlite",)
    write_pane_files(pane.runtime_dir, prepared.files, prepared.homes)
    for name in ("auth.json", "sessions", "history.jsonl"):
        assert (pane.runtime_dir / "codex" / name).resolve() == (home / ".codex" / name).resolve()
    monkeypatch.setenv("CODEX_HOME", str(home / "elsewhere"))
    assert codex.prepare(make_pane()).homes[0].user_folder == home / "elsewhere"


def test_denied_skills_are_switched_off_and_allowed_user_skills_carried(
    codex: Adapter, make_pane: Callable[..., PaneToPrepare], home: Path, project: Path
) -> None:
    write_skill(home / ".codex" / "skills", "mine")
    write_skill(home / ".codex" / "skills", "secret")
    write_skill(home / ".codex" / "skills" / ".system", "imagegen")
    write_skill(home / ".agents" / "skills", "agents-one")
    write_skill(project / ".agents" / "skills", "repo-skill")
    pane = make_pane(skill_decision=deny_skills("secret", "imagegen", "repo-skill"))
    scopes = {skill.name: skill.scope for skill in codex.skills(project, home)}
    assert scopes == {"imagegen": "bundled", "openai-docs": "bundled", "skill-creator": "bundled", "skill-installer": "bundled",
                      "mine": "user", "secret": "user", "agents-one": "user", "repo-skill": "project"}
    prepared = codex.prepare(pane)
    assert prepared.hidden_skills == ("imagegen", "repo-skill", "secret")
    assert prepared.files["codex/skills/mine"].link_to == home / ".codex" / "skills" / "mine"
    assert "codex/skills/secret" not in prepared.files
    config = config_of(pane, codex)
    assert config["skills"]["config"] == [{"name": name, "enabled": False} for name in ("imagegen", "repo-skill", "secret")]


def test_a_projects_own_servers_are_switched_off(codex: Adapter, make_pane: Callable[..., PaneToPrepare], project: Path) -> None:
    (project / ".codex").mkdir()
    (project / ".codex" / "config.toml").write_text('[mcp_servers.db]\ncommand = "x"\n[mcp_servers."my.api"]\nurl = "y"\n'
                                                     '[mcp_servers.time]\nurl = "z"\n')
    prepared = codex.prepare(make_pane())
    assert prepared.launch.argv[2:] == ("-c", "mcp_servers.db.enabled=false", "-c", 'mcp_servers."my.api".enabled=false')
    assert any("'time'" in warning for warning in prepared.warnings)


def test_an_unreadable_user_config_is_a_warning(codex: Adapter, make_pane: Callable[..., PaneToPrepare], home: Path) -> None:
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text("model = \n")
    prepared = codex.prepare(make_pane())
    assert "not carried over" in prepared.warnings[0]


def test_test_mode_uses_the_fake_model_and_trusts_the_project(codex: Adapter, make_pane: Callable[..., PaneToPrepare], project: Path) -> None:
    pane = make_pane(test_mode=TestMode(model_base_url="http://127.0.0.1:7777"))
    config = config_of(pane, codex)
    assert config["model_provider"] == "polter-test"
    assert config["model_providers"]["polter-test"]["base_url"] == "http://127.0.0.1:7777/v1"
    assert config["model_providers"]["polter-test"]["wire_api"] == "responses"
    assert config["projects"][str(project)] == {"trust_level": "trusted"}
    assert codex.prepare(pane).launch.env["POLTER_TEST_MODEL_KEY"] == "polter-test-key"


def test_hook_translation(codex: Adapter) -> None:
    request = codex.hook_request({"hook_event_name": "PreToolUse", "tool_name": "mcp__time__get_current_time",
                                  "tool_input": {"timezone": "UTC"}, "turn_id": "t"})
    assert (request.kind, request.server, request.tool) == ("mcp_tool", "time", "get_current_time")
    shell = codex.hook_request({"tool_name": "Bash", "tool_input": {"command": "ls | xargs rm"}, "cwd": "/p"})
    assert (shell.kind, shell.builtin, shell.command, shell.cwd) == ("builtin", "shell", "ls | xargs rm", "/p")
    patch = "*** Begin Patch\n*** Add File: notes/a.md\n+hi\n*** Update File: b.py\n*** Move to: c.py\n@@\n-x\n+y\n*** Delete File: ../d\n*** End Patch\n"
    patched = codex.hook_request({"tool_name": "apply_patch", "tool_input": {"command": patch}, "cwd": "/p"})
    assert (patched.builtin, patched.paths) == ("write", ["notes/a.md", "b.py", "c.py", "../d"])
    assert codex.hook_request({"tool_name": "spawn_agent", "tool_input": {}}).builtin == "agent"
    assert codex.hook_request({"tool_name": "update_plan", "tool_input": {}}).builtin == "meta"
    reply = codex.hook_answer(HookAnswer(decision="deny", reason="no"))
    assert json.loads(reply.stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
