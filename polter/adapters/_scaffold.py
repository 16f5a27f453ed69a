"""``polter adapters new NAME``: a working adapter skeleton for a new CLI, with a test of the contract."""

from __future__ import annotations

import re
from pathlib import Path

from polter.adapters._contract import API_VERSION
from polter.errors import ConfigError
from polter.protocol import ADAPTER_NAME

__all__ = ["scaffold_adapter"]

_ADAPTER = '''\
"""{display} adapter for Polter (made by `polter adapters new {name}`).

Fill in the TODOs for your CLI, then run `pytest {folder}` to check the contract.
docs/adapters.md walks through each method.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from polter.adapters import (
    Adapter,
    AdapterInfo,
    AgentState,
    HookRequest,
    Liveness,
    PaneFile,
    PaneToPrepare,
    PreparedPane,
    ScreenView,
    Skill,
    hook_shell_command,
    mcp_tool_request,
    project_dirs,
    scan_skills,
    split_by_decision,
    split_tool_name,
)

API_VERSION = {api_version}
"""The version of the plugin API (polter.adapters) this plugin is written for."""


class {cls}(Adapter):
    info = AdapterInfo(
        name="{name}",
        display_name="{display}",
        command="{name}",  # TODO: the executable on PATH
        mcp_liveness=Liveness.COLD,  # TODO: HOT if the CLI re-lists tools on notifications/tools/list_changed
        skills_liveness=Liveness.COLD,
        tool_veto=True,
        limitations=("TODO: what the CLI still loads or does that bypasses Polter.",),
    )

    def skills(self, cwd: Path, home: Path | None = None) -> list[Skill]:
        """TODO: the folders your CLI loads skills from."""
        home = home or Path.home()
        found = scan_skills(home / ".{name}" / "skills", "user")
        for directory in project_dirs(cwd, home):
            found += scan_skills(directory / ".{name}" / "skills", "project")
        return found

    def prepare(self, pane: PaneToPrepare) -> PreparedPane:
        _shown, hidden = split_by_decision(self.skills(pane.cwd, pane.user_home), pane)
        # TODO: your CLI's MCP config format. The CLI expands ${{POLTER_TOKEN}} from its environment:
        # never write the token itself into a file.
        config = {{
            "mcpServers": {{
                name: {{"type": "http", "url": url, "headers": {{"Authorization": "Bearer ${{POLTER_TOKEN}}"}}}}
                for name, url in pane.endpoints.items()
            }},
            "hooks": {{"preToolUse": {{"command": hook_shell_command(pane.hook_argv(self.name))}}}},
            "disabledSkills": sorted(skill.name for skill in hidden),
        }}
        files = {{"{name}/config.json": PaneFile(text=json.dumps(config, indent=2))}}
        argv = (self.executable(), "--config", str(pane.file("{name}/config.json")))
        env = pane.polter_env()
        if pane.test_mode is not None:  # TODO: how your CLI is pointed at another model API
            env["{env_prefix}_BASE_URL"] = pane.test_mode.model_base_url
            env["{env_prefix}_API_KEY"] = pane.test_mode.api_key
        launch = self.launch(pane, argv, env=env)
        return PreparedPane(launch=launch, files=files, hidden_skills=tuple(sorted(s.name for s in hidden)))

    def hook_request(self, payload: Mapping[str, Any]) -> HookRequest:
        """TODO: how your CLI names MCP tools in its hook payload."""
        tool = str(payload.get("tool_name") or "")
        parts = split_tool_name(tool, prefix="mcp__", separator="__")
        if parts is None:
            return HookRequest(kind="other", cli_tool=tool)
        return mcp_tool_request(tool, *parts, payload)

    # hook_answer: the default answers a deny with exit code 2 and the reason on stderr; override it if your
    # CLI expects JSON on stdout.

    def state(self, screen: ScreenView) -> AgentState | None:
        """TODO: what your CLI's screen shows while it asks, works, or waits for a prompt."""
        text = "\\n".join(screen.display())
        if re.search(r"Allow|Approve|Do you want", text):
            return AgentState.WAITING
        if re.search(r"esc to (interrupt|cancel)", text):
            return AgentState.WORKING
        if re.search(r"^> ", text, re.MULTILINE):
            return AgentState.IDLE
        return None


adapter = {cls}
'''

_TEST = '''\
"""Contract checks for the {display} adapter: run with `pytest {folder}`."""

from __future__ import annotations

from pathlib import Path

import pytest

from polter.adapters import AgentState, HookAnswer, PaneToPrepare
from polter.adapters.plugins import load_plugin, write_pane_files

PLUGIN = Path(__file__).resolve().parent
TOKEN = "pane-token-that-must-not-reach-a-file"


@pytest.fixture
def adapter():
    (found,) = load_plugin(PLUGIN)
    return found


@pytest.fixture
def pane(tmp_path: Path) -> PaneToPrepare:
    home = tmp_path / "home"
    skill = home / ".{name}" / "skills" / "deploy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\\nname: deploy\\ndescription: ships it\\n---\\n")
    return PaneToPrepare(
        pane_id="p1",
        gateway_url="http://127.0.0.1:9",
        servers=("time", "github"),
        runtime_dir=tmp_path / "runtime",
        cwd=tmp_path,
        token=TOKEN,
        home=home,
        skill_decision=lambda name: "deny" if name == "deploy" else "allow",
    )


def test_the_adapter_describes_itself(adapter) -> None:
    assert adapter.name == "{name}"
    assert adapter.info.limitations


def test_prepare_points_the_cli_at_every_gateway_endpoint_without_writing_the_token(
    adapter, pane: PaneToPrepare
) -> None:
    prepared = adapter.prepare(pane)
    written = write_pane_files(pane.runtime_dir, prepared.files)
    text = "".join(path.read_text() for path in written if path.is_file())
    for url in pane.endpoints.values():
        assert url in text
    assert TOKEN not in text
    assert prepared.launch.env["POLTER_TOKEN"] == TOKEN


def test_a_denied_skill_is_hidden(adapter, pane: PaneToPrepare) -> None:
    assert "deploy" in adapter.prepare(pane).hidden_skills


def test_the_hook_translates_both_ways(adapter) -> None:
    request = adapter.hook_request({{"tool_name": "mcp__time__get_current_time", "tool_input": {{"timezone": "UTC"}}}})
    assert (request.kind, request.server, request.tool) == ("mcp_tool", "time", "get_current_time")
    assert request.arguments == {{"timezone": "UTC"}}
    deny = adapter.hook_answer(HookAnswer(decision="deny", reason="not in this role"))
    assert deny.exit_code == 2 or "deny" in deny.stdout
    assert adapter.hook_answer(HookAnswer(decision="allow")).exit_code == 0


class Screen:
    def __init__(self, *lines: str) -> None:
        self.lines = list(lines)

    def display(self) -> list[str]:
        return self.lines


def test_state_is_read_from_the_screen(adapter) -> None:
    assert adapter.state(Screen("Do you want to run this tool?")) == AgentState.WAITING
    assert adapter.state(Screen("thinking (esc to interrupt)")) == AgentState.WORKING
    assert adapter.state(Screen("> ")) == AgentState.IDLE
'''


def scaffold_adapter(name: str, directory: Path, *, force: bool = False) -> list[Path]:
    """Write ``directory/<module>/__init__.py`` (the adapter) and its test; return the files written."""
    if not re.fullmatch(ADAPTER_NAME, name):
        raise ConfigError("must start with a letter and use lowercase letters, digits and '-'", field="NAME")
    module = name.replace("-", "_")
    folder = directory / module
    if folder.exists() and not force:
        raise ConfigError(f"{folder} already exists (use --force to overwrite)", field="NAME")
    words = name.split("-")
    values = {
        "name": name,
        "display": " ".join(word.capitalize() for word in words),
        "cls": "".join(word.capitalize() for word in words),
        "env_prefix": module.upper(),
        "folder": str(folder),
        "api_version": str(API_VERSION),
    }
    folder.mkdir(parents=True, exist_ok=True)
    files = {folder / "__init__.py": _ADAPTER.format(**values), folder / f"test_{module}.py": _TEST.format(**values)}
    for path, text in files.items():
        path.write_text(text, encoding="utf-8")
    return list(files)
