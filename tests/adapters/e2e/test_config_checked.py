"""Qwen Code and opencode, whose models the tests cannot fake: the real CLIs read the configuration their
adapters write, connect to every endpoint with the pane's token, switch the user's own servers off, and
carry the skill switches (checked with the CLIs' own inspection commands)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.tiny_mcp import TinyMcp

from polter.adapters import PaneToPrepare, TestMode

from .agent_pane import run_once
from .conftest import RealCli, real_cli, seed_opencode_plugin_sdk, write_test_skills

pytestmark = pytest.mark.e2e

TOKEN = "tok-e2e-config"
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def make_pane(url: str, tmp_path: Path, home: Path, project: Path) -> PaneToPrepare:
    """Test mode keeps the CLIs offline (no update checks, no model catalogue downloads)."""
    return PaneToPrepare(pane_id="p1", gateway_url=url, servers=("time",), runtime_dir=tmp_path / "runtime", cwd=project,
                token=TOKEN, home=home, skill_decision=lambda name: "deny" if name == "secret-skill" else "allow",
                test_mode=TestMode(model_base_url="http://127.0.0.1:9"))


def inspect(cli: RealCli, pane: PaneToPrepare, home: Path, *command: str) -> str:
    """Run one of the CLI's own inspection commands with the pane's configuration; its output, uncoloured."""
    _prepared, result = run_once(cli.adapter, pane, list(command), home=home, path_dirs=[cli.bin_dir], launch_args=False)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return ANSI.sub("", result.stdout)


def test_qwen_code_connects_to_every_endpoint(tmp_path: Path, home: Path, project: Path) -> None:
    cli = real_cli("qwen-code")
    user_settings = home / ".qwen" / "settings.json"
    user_settings.parent.mkdir(exist_ok=True)
    user_settings.write_text(json.dumps({"mcpServers": {"mine": {"httpUrl": "http://127.0.0.1:9/mine"}}}))
    with TinyMcp(TOKEN, ["time", "polter"]) as mcp:
        pane = make_pane(mcp.url, tmp_path, home, project)
        output = inspect(cli, pane, home, "mcp", "list")
        assert f"time: {mcp.url}/mcp/time (http) - Connected" in output
        assert f"polter: {mcp.url}/mcp/polter (http) - Connected" in output
        assert "mine" not in output, "the user's own server does not reach the pane"
        assert mcp.authorized_paths() == {"/mcp/time", "/mcp/polter"}


def test_opencode_connects_to_every_endpoint_and_switches_the_users_servers_off(
    tmp_path: Path, home: Path, project: Path
) -> None:
    cli = real_cli("opencode")
    seed_opencode_plugin_sdk(home, project)
    user_config = home / ".config" / "opencode" / "opencode.json"
    user_config.parent.mkdir(parents=True, exist_ok=True)
    user_config.write_text(json.dumps({"mcp": {"mine": {"type": "remote", "url": "http://127.0.0.1:9/mine"}}}))
    write_test_skills(project)
    with TinyMcp(TOKEN, ["time", "polter"]) as mcp:
        pane = make_pane(mcp.url, tmp_path, home, project)
        output = inspect(cli, pane, home, "mcp", "list")
        assert re.search(r"✓ time\s+connected", output) and re.search(r"✓ polter\s+connected", output), output
        assert re.search(r"○ mine\s+disabled", output), output
        assert mcp.authorized_paths() == {"/mcp/time", "/mcp/polter"}

        agent = inspect(cli, pane, home, "debug", "agent", "build")
        rules = re.findall(r'"permission": "skill",\s*"pattern": "([^"]+)",\s*"action": "(\w+)"', agent)
        assert ("secret-skill", "deny") in rules, agent[-2000:]


def test_codex_has_only_the_gateway_servers_and_no_apps_or_plugins(tmp_path: Path, home: Path, project: Path) -> None:
    """Codex's apps (its built-in codex_apps MCP server) and plugins are off in the pane's CODEX_HOME, and its MCP
    servers are the gateway's alone, as Codex itself reports them."""
    cli = real_cli("codex")
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text('[mcp_servers.mine]\nurl = "http://127.0.0.1:9/mine"\n[features]\napps = true\n')
    pane = make_pane("http://127.0.0.1:9", tmp_path, home, project).model_copy(update={"test_mode": None})
    rows = [line.split() for line in inspect(cli, pane, home, "features", "list").splitlines()]
    features = {row[0]: row[-1] for row in rows if len(row) >= 3}  # name, stage (maybe two words), value
    assert (features["apps"], features["plugins"]) == ("false", "false"), features
    servers = json.loads(inspect(cli, pane, home, "mcp", "list", "--json"))
    assert sorted(server["name"] for server in servers) == ["polter", "time"], servers
