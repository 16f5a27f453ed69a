"""The tutorial in docs/adapters.md builds a working adapter: its final code loads as a plugin and keeps
the contract."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from polter.adapters import AgentState, HookAnswer, PaneToPrepare
from polter.adapters.plugins import discover, load_plugin, user_plugins_dir, write_pane_files

from .conftest import TOKEN, deny_skills, write_skill

DOC = Path(__file__).resolve().parents[2] / "docs" / "adapters.md"


def tutorial_code(step: str) -> str:
    """The first Python block of a tutorial step (``### 7. The whole adapter``)."""
    section = DOC.read_text().split(f"### {step}", 1)[1]
    return re.search(r"```python\n(.*?)```", section, re.S).group(1)  # type: ignore[union-attr]


def tutorial_adapter_source() -> str:
    return tutorial_code("7. The whole adapter")


def replace_functions(source: str, replacements: str) -> str:
    """``source`` with each top-level function that ``replacements`` defines swapped for that definition."""
    new = {node.name: ast.get_source_segment(replacements, node) for node in ast.parse(replacements).body
           if isinstance(node, ast.FunctionDef)}
    lines = source.splitlines(keepends=True)
    for node in sorted(ast.parse(source).body, key=lambda node: node.lineno, reverse=True):
        if isinstance(node, ast.FunctionDef) and node.name in new:
            lines[node.lineno - 1 : node.end_lineno] = [new.pop(node.name) + "\n"]
    assert not new, f"the tutorial replaces functions the scaffold's test lacks: {sorted(new)}"
    return "".join(lines)


def polter(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "polter", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})})


def test_the_tutorial_followed_step_by_step(tmp_path: Path) -> None:
    """Step 1 (scaffold), step 7 (the adapter), step 8 (its test), pytest, then `polter adapters` with acme installed."""
    assert polter("adapters", "new", "acme").returncode == 0
    folder = user_plugins_dir() / "acme"
    (folder / "__init__.py").write_text(tutorial_adapter_source())
    test_file = folder / "test_acme.py"
    test_file.write_text(replace_functions(test_file.read_text(), tutorial_code("8. Fit the test to acme")))
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", str(folder)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert run.returncode == 0 and "5 passed" in run.stdout, run.stdout + run.stderr

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "acme").write_text("#!/bin/sh\necho 'acme 1.4.2'\n")
    (bin_dir / "acme").chmod(0o755)
    listed = polter("adapters", env={"PATH": f"{bin_dir}:{os.environ['PATH']}"})
    assert listed.returncode == 0, listed.stderr
    assert ["acme", "Acme", "1.4.2", "cold", "cold", "user"] in [line.split() for line in listed.stdout.splitlines()]


class Screen:
    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()

    def display(self) -> list[str]:
        return self.lines


def test_the_tutorial_adapter_keeps_the_contract(tmp_path: Path, make_pane: Callable[..., PaneToPrepare], home: Path, project: Path) -> None:
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
