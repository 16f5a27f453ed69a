"""The Gemini CLI adapter (and Qwen Code, its fork): a per-pane settings home, allowed server names, the
BeforeTool veto hook and disabled skills."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from polter.adapters import Adapter, HookAnswer, PaneToPrepare, TestMode
from polter.adapters.plugins import AdapterRegistry, write_pane_files
from polter.protocol import BuiltinsPolicy

from .conftest import TOKEN, deny_skills, write_skill


@pytest.fixture
def gemini(bundled: AdapterRegistry) -> Adapter:
    return bundled.get("gemini-cli")


def settings_of(pane: PaneToPrepare, adapter: Adapter, folder: str = "gemini-cli/.gemini") -> dict:
    prepared = adapter.prepare(pane)
    write_pane_files(pane.runtime_dir, prepared.files)
    text = (pane.runtime_dir / folder / "settings.json").read_text()
    assert TOKEN not in text
    return json.loads(text)


def test_only_the_gateway_servers_are_allowed(gemini: Adapter, make_pane: Callable[..., PaneToPrepare], home: Path) -> None:
    (home / ".gemini").mkdir()
    (home / ".gemini" / "settings.json").write_text(json.dumps({
        "mcpServers": {"github": {"command": "gh"}}, "mcp": {"allowed": ["github"]},
        "ui": {"theme": "Dracula"}, "skills": {"disabled": ["old"]},
    }))
    pane = make_pane()
    settings = settings_of(pane, gemini)
    assert settings["mcpServers"] == {
        name: {"httpUrl": f"http://127.0.0.1:4321/mcp/{name}", "headers": {"Authorization": "Bearer ${POLTER_TOKEN}"},
               "trust": True}
        for name in ("time", "everything", "polter")
    }
    assert settings["mcp"] == {"allowed": ["time", "everything", "polter"]}
    assert settings["ui"] == {"theme": "Dracula"}, "the user's other settings are kept"
    prepared = gemini.prepare(pane)
    assert prepared.launch.env["GEMINI_CLI_HOME"] == str(pane.file("gemini-cli"))
    assert prepared.launch.argv[1:] == ("--allowed-mcp-server-names", "time", "--allowed-mcp-server-names",
                                        "everything", "--allowed-mcp-server-names", "polter")


def test_the_before_tool_hook_vetoes_every_tool(gemini: Adapter, make_pane: Callable[..., PaneToPrepare]) -> None:
    pane = make_pane()
    settings = settings_of(pane, gemini)
    [entry] = settings["hooks"]["BeforeTool"]
    assert entry["matcher"] == ".*"
    command = f"/opt/polter/bin/python -m polter.cli.hook gemini-cli {pane.cwd} {pane.runtime_dir}"
    assert entry["hooks"][0]["command"] == command
    assert settings["hooksConfig"] == {"enabled": True, "disabled": []}
    assert "tools" not in settings


def test_tools_the_role_denies_outright_are_excluded(gemini: Adapter, make_pane: Callable[..., PaneToPrepare]) -> None:
    policy = BuiltinsPolicy(default="ask", deny=["write", "shell(git push*)", "web", "save_memory"])
    settings = settings_of(make_pane(builtins=policy), gemini)
    assert settings["tools"]["exclude"] == ["google_web_search", "replace", "save_memory", "web_fetch", "write_file"]


def test_skills_are_disabled_and_allowed_user_skills_linked(
    gemini: Adapter, make_pane: Callable[..., PaneToPrepare], home: Path, project: Path
) -> None:
    write_skill(home / ".gemini" / "skills", "mine")
    write_skill(home / ".agents" / "skills", "secret")
    write_skill(project / ".gemini" / "skills", "repo-skill")
    write_skill(home / ".gemini" / "extensions" / "ext" / "skills", "ext-skill")
    pane = make_pane(skill_decision=deny_skills("secret", "skill-creator", "ext-skill"))
    scopes = {skill.name: skill.scope for skill in gemini.skills(project, home)}
    assert scopes == {"antigravity-support": "bundled", "skill-creator": "bundled", "ext-skill": "extension",
                      "mine": "user", "secret": "user", "repo-skill": "project"}
    prepared = gemini.prepare(pane)
    assert prepared.hidden_skills == ("ext-skill", "secret", "skill-creator")
    assert settings_of(pane, gemini)["skills"]["disabled"] == ["ext-skill", "secret", "skill-creator"]
    assert prepared.files["gemini-cli/.gemini/skills/mine"].link_to == home / ".gemini" / "skills" / "mine"
    assert "gemini-cli/.gemini/skills/secret" not in prepared.files


@pytest.mark.parametrize(("name", "pane_folder", "user_folder"),
                         [("gemini-cli", "gemini-cli/.gemini", ".gemini"), ("qwen-code", "qwen-code", ".qwen")])
def test_the_clis_state_is_kept_in_the_users_home(name: str, pane_folder: str, user_folder: str,
                                                  bundled: AdapterRegistry, make_pane: Callable[..., PaneToPrepare], home: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Logins, chats, history and trusted folders are the user's own folder's, linked whether they exist or not."""
    adapter = bundled.get(name)
    (home / user_folder).mkdir()
    (home / user_folder / "oauth_creds.json").write_text("{}")
    pane = make_pane()
    prepared = adapter.prepare(pane)
    [state] = prepared.homes
    assert (state.folder, state.user_folder) == (pane_folder, home / user_folder)
    assert {"oauth_creds.json", "tmp/", "installation_id"} <= set(state.keep)
    assert {"trustedFolders.json", ".env", "extensions/", "commands/"} <= set(state.shared), "the human's CLI runs them"
    assert not {".env", "extensions", "trustedFolders.json"} & set(state.state()), "not the CLI's state to write"
    assert f"{pane_folder}/oauth_creds.json" not in prepared.files
    [config] = state.edited_configs  # the sign-in chosen at a first start is written into settings.json
    assert config.file == "settings.json" and {"mcpServers", "mcp", "hooks", "skills"} <= set(config.polter_keys)
    assert "security" not in config.polter_keys
    write_pane_files(pane.runtime_dir, prepared.files, prepared.homes)
    assert (pane.runtime_dir / pane_folder / "oauth_creds.json").read_text() == "{}"
    monkeypatch.setenv(adapter.home_env, str(home / "elsewhere"))
    assert adapter.prepare(make_pane()).homes[0].user_folder.is_relative_to(home / "elsewhere")


def test_a_workspace_that_switches_hooks_off_is_reported(gemini: Adapter, make_pane: Callable[..., PaneToPrepare], project: Path) -> None:
    (project / ".gemini").mkdir()
    (project / ".gemini" / "settings.json").write_text(json.dumps({"hooksConfig": {"disabled": ["polter-veto"]}}))
    [warning] = gemini.prepare(make_pane()).warnings
    assert "switches hooks off" in warning


def test_test_mode(gemini: Adapter, make_pane: Callable[..., PaneToPrepare]) -> None:
    pane = make_pane(test_mode=TestMode(model_base_url="http://127.0.0.1:8888"))
    prepared = gemini.prepare(pane)
    assert prepared.launch.env["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:8888"
    assert prepared.launch.argv[-3:] == ("--skip-trust", "-m", "gemini-2.5-flash")
    assert settings_of(pane, gemini)["security"] == {"auth": {"selectedType": "gemini-api-key"}}


@pytest.mark.parametrize("test_mode", [None, TestMode(model_base_url="http://127.0.0.1:8888")])
def test_ci_markers_are_dropped_so_the_interactive_ui_starts(
    gemini: Adapter, make_pane: Callable[..., PaneToPrepare], monkeypatch: pytest.MonkeyPatch, test_mode: TestMode | None
) -> None:
    for name in ("CI", "CI_JOB_ID", "CONTINUOUS_INTEGRATION"):
        monkeypatch.setenv(name, "true")
    launch = gemini.prepare(make_pane(test_mode=test_mode)).launch
    environment = launch.environment()
    assert not {"CI", "CI_JOB_ID", "CONTINUOUS_INTEGRATION"} & environment.keys()
    assert environment["PATH"] == os.environ["PATH"]


def test_hook_translation(gemini: Adapter) -> None:
    request = gemini.hook_request({
        "hook_event_name": "BeforeTool", "tool_name": "mcp_my_server_do_it", "tool_input": {"a": 1},
        "mcp_context": {"server_name": "my_server", "tool_name": "do_it", "url": "http://x"},
    })
    assert (request.server, request.tool, request.arguments) == ("my_server", "do_it", {"a": 1})
    assert gemini.hook_request({"tool_name": "mcp_time_now"}).server == "time"
    skill = gemini.hook_request({"tool_name": "activate_skill", "tool_input": {"name": "deploy"}})
    assert (skill.kind, skill.skill) == ("skill", "deploy")
    shell = gemini.hook_request({"tool_name": "run_shell_command", "tool_input": {"command": "ls", "dir_path": "src"},
                                 "cwd": "/p"})
    assert (shell.kind, shell.builtin, shell.command, shell.cwd) == ("builtin", "shell", "ls", "/p/src")
    written = gemini.hook_request({"tool_name": "write_file", "tool_input": {"file_path": "a/../b.txt"}, "cwd": "/p"})
    assert (written.builtin, written.paths, written.cwd) == ("write", ["a/../b.txt"], "/p")
    fetch = gemini.hook_request({"tool_name": "web_fetch", "tool_input": {"prompt": "Sum up https://a.org/x and http://b.io."}})
    assert (fetch.builtin, fetch.urls) == ("web", ["https://a.org/x", "http://b.io"])
    assert json.loads(gemini.hook_answer(HookAnswer(decision="deny", reason="no")).stdout) == {
        "decision": "deny", "reason": "Polter: no"}


def test_qwen_code_uses_its_own_home(bundled: AdapterRegistry, make_pane: Callable[..., PaneToPrepare], home: Path) -> None:
    qwen = bundled.get("qwen-code")
    write_skill(home / ".qwen" / "skills", "q")
    pane = make_pane(skill_decision=deny_skills("q"))
    prepared = qwen.prepare(pane)
    assert prepared.launch.env["QWEN_HOME"] == str(pane.file("qwen-code"))
    assert prepared.hidden_skills == ("q",)
    settings = settings_of(pane, qwen, "qwen-code")
    assert set(settings["mcpServers"]) == {"time", "everything", "polter"}
    [entry] = settings["hooks"]["PreToolUse"]
    assert entry["matcher"] == ".*"
    assert settings["disableAllHooks"] is False and "hooksConfig" not in settings
    request = qwen.hook_request({"tool_name": "mcp__time__now", "tool_input": {}})
    assert (request.server, request.tool) == ("time", "now")
    assert qwen.hook_request({"tool_name": "skill", "tool_input": {"skill": "q"}}).skill == "q"
    assert json.loads(qwen.hook_answer(HookAnswer(decision="deny", reason="no")).stdout)["hookSpecificOutput"]["permissionDecision"] == "deny"
    test_env = qwen.prepare(make_pane(test_mode=TestMode(model_base_url="http://127.0.0.1:1"))).launch.env
    assert test_env["OPENAI_BASE_URL"] == "http://127.0.0.1:1/v1"
