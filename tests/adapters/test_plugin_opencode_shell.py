"""opencode (config in OPENCODE_CONFIG_CONTENT, a veto plugin) and the plain shell."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from polter.adapters import HookAnswer, PaneToPrepare, TestMode
from polter.adapters.plugins import AdapterRegistry, write_pane_files

from .conftest import TOKEN, deny_skills, write_skill


def test_opencode_uses_only_the_gateway_servers(bundled: AdapterRegistry, make_pane: Callable[..., PaneToPrepare], home: Path, project: Path) -> None:
    opencode = bundled.get("opencode")
    (home / ".config" / "opencode").mkdir(parents=True)
    (home / ".config" / "opencode" / "opencode.jsonc").write_text(
        '{\n  // mine\n  "mcp": {"github": {"type": "local", "command": ["gh"]},},\n  "theme": "x // not a comment"\n}\n')
    (project / "opencode.json").write_text(json.dumps({"mcp": {"db": {"type": "remote", "url": "http://x"}}}))
    write_skill(home / ".claude" / "skills", "secret")
    pane = make_pane(skill_decision=deny_skills("secret"))
    prepared = opencode.prepare(pane)
    config = json.loads(prepared.launch.env["OPENCODE_CONFIG_CONTENT"])
    assert config["mcp"]["github"] == {"enabled": False} and config["mcp"]["db"] == {"enabled": False}
    assert config["mcp"]["time"] == {"type": "remote", "url": "http://127.0.0.1:4321/mcp/time",
                                     "headers": {"Authorization": "Bearer {env:POLTER_TOKEN}"}, "enabled": True, "oauth": False}
    assert config["permission"] == {"skill": {"secret": "deny"}}
    [plugin] = write_pane_files(pane.runtime_dir, prepared.files)
    source = plugin.read_text()
    assert f'"http://127.0.0.1:4321/hook/opencode/payload?project={pane.cwd}&runtime={pane.runtime_dir}"' in source
    assert "process.env.POLTER_TOKEN" in source, "the plugin posts to the gateway itself (no process per call)"
    assert TOKEN not in source and TOKEN not in prepared.launch.env["OPENCODE_CONFIG_CONTENT"]
    assert config["plugin"] == [pane.file("opencode/polter-veto.js").as_uri()], "a file URL: no npm install per start"
    assert "OPENCODE_CONFIG_DIR" not in prepared.launch.env


def test_opencode_hook_translation(bundled: AdapterRegistry) -> None:
    opencode = bundled.get("opencode")
    request = opencode.hook_request({"tool_name": "time_now", "tool_input": {}, "mcp": {"server": "time", "tool": "now"}})
    assert (request.kind, request.server, request.tool) == ("mcp_tool", "time", "now")
    assert opencode.hook_request({"tool_name": "skill", "tool_input": {"name": "x"}}).skill == "x"
    assert opencode.hook_answer(HookAnswer(decision="deny", reason="no")).exit_code == 2


def test_the_shell_gets_the_token_and_the_gateway(bundled: AdapterRegistry, make_pane: Callable[..., PaneToPrepare], monkeypatch) -> None:
    monkeypatch.setenv("SHELL", "/bin/bash")
    prepared = bundled.get("shell").prepare(make_pane())
    assert prepared.launch.argv == ("/bin/bash",)
    assert prepared.launch.env == {"POLTER_GATEWAY_URL": "http://127.0.0.1:4321", "POLTER_TOKEN": TOKEN}
    assert prepared.files == {}
    detection = bundled.get("shell").detect()
    assert detection.installed == os.access("/bin/bash", os.X_OK)


def test_opencode_test_mode_uses_a_bundled_provider_on_the_fake_model(bundled: AdapterRegistry, make_pane: Callable[..., PaneToPrepare]) -> None:
    prepared = bundled.get("opencode").prepare(make_pane(test_mode=TestMode(model_base_url="http://127.0.0.1:7")))
    config = json.loads(prepared.launch.env["OPENCODE_CONFIG_CONTENT"])
    provider = config["provider"]["polter-test"]
    assert provider["npm"] == "@ai-sdk/anthropic" and provider["options"]["baseURL"] == "http://127.0.0.1:7/v1"
    assert config["model"] == "polter-test/fake-model"
    assert prepared.launch.env["OPENCODE_DISABLE_MODELS_FETCH"] == "1"


def test_opencode_names_the_state_it_keeps_in_place(
    bundled: AdapterRegistry, make_pane: Callable[..., PaneToPrepare], home: Path, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its data and state folders (the log, the database) are writable in a confined pane; its config is not named."""
    opencode = bundled.get("opencode")
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    prepared = opencode.prepare(make_pane(confined=True))
    assert prepared.state_folders == (tmp_path / "data" / "opencode", home / ".local" / "state" / "opencode")


def test_opencode_names_the_folders_it_makes_at_its_start(
    bundled: AdapterRegistry, make_pane: Callable[..., PaneToPrepare], home: Path, tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Its cache's ``bin`` (where ``$XDG_CACHE_HOME`` says) and its config folder: made to exist, never writable."""
    opencode = bundled.get("opencode")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    prepared = opencode.prepare(make_pane(confined=True))
    assert prepared.made_folders == (tmp_path / "cache" / "opencode" / "bin", home / ".config" / "opencode")
    assert not set(prepared.made_folders) & set(prepared.state_folders)
