"""The tutorial in docs/adapters.md builds a working adapter: its final code loads as a plugin and keeps
the contract."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from polter.adapters import AgentState, HookAnswer, Pane, discover, load_plugin, write_pane_files

from .conftest import TOKEN, deny_skills, write_skill

DOC = Path(__file__).resolve().parents[2] / "docs" / "adapters.md"


def tutorial_adapter_source() -> str:
    section = DOC.read_text().split("### 7. The whole adapter", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]


class Screen:
    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()

    def display(self) -> list[str]:
        return self.lines


def test_the_tutorial_adapter_keeps_the_contract(tmp_path: Path, make_pane: Callable[..., Pane], home: Path, project: Path) -> None:
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "acme.py").write_text(tutorial_adapter_source())
    [acme] = load_plugin(plugins / "acme.py")
    assert discover(user=plugins, entry_points=False).get("acme").display_name == "Acme"

    write_skill(home / ".acme" / "skills", "deploy")
    write_skill(project / ".acme" / "skills", "lint")
    pane = make_pane(skill_decision=deny_skills("deploy"))
    assert {skill.name: skill.scope for skill in acme.skills(project, home)} == {"deploy": "user", "lint": "project"}
    prepared = acme.prepare(pane)
    [config_file] = write_pane_files(pane.runtime_dir, prepared.files)
    config = json.loads(config_file.read_text())
    assert {name: entry["url"] for name, entry in config["mcpServers"].items()} == pane.endpoints
    assert TOKEN not in config_file.read_text() and prepared.launch.env["POLTER_TOKEN"] == TOKEN
    assert config["disabledSkills"] == ["deploy"] and prepared.hidden_skills == ("deploy",)
    assert config["hooks"]["beforeTool"]["command"].endswith("polter.cli.hook acme")

    request = acme.hook_request({"tool": "mcp.time.get_current_time", "args": {"timezone": "UTC"}})
    assert (request.kind, request.server, request.tool, request.arguments) == ("mcp_tool", "time", "get_current_time", {"timezone": "UTC"})
    assert acme.hook_request({"tool": "shell", "args": {}}).kind == "other"
    assert acme.hook_answer(HookAnswer(decision="deny", reason="no")).exit_code == 2

    assert acme.state(Screen("Allow this tool? [y/n]")) == AgentState.WAITING
    assert acme.state(Screen("thinking… esc to interrupt")) == AgentState.WORKING
    assert acme.state(Screen("acme> ")) == AgentState.IDLE
