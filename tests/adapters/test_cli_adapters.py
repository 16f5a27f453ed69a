"""`polter adapters`, `polter adapters show` and `polter adapters new` (whose scaffold's own test must pass)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from polter.adapters.plugins import API_VERSION, user_plugins_dir


def polter(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "polter", *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, **(env or {})}, cwd=cwd)


def fake_cli(folder: Path, name: str, output: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    program = folder / name
    program.write_text(f"#!/bin/sh\necho '{output}'\n")
    program.chmod(0o755)


def test_the_list_shows_each_adapter_with_the_version_installed(tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    fake_cli(bin_dir, "claude", "2.1.332 (Claude Code)")
    fake_cli(bin_dir, "codex", "codex-cli 0.171.0")
    result = polter("adapters", "--json", env={"PATH": f"{bin_dir}:/usr/bin:/bin", "SHELL": "/bin/sh"})
    assert result.returncode == 0, result.stderr
    rows = {row["name"]: row for row in json.loads(result.stdout)["adapters"]}
    assert rows["claude-code"]["version"] == "2.1.332" and rows["claude-code"]["installed"] is True
    assert rows["codex"]["version"] == "0.171.0" and rows["codex"]["mcp_liveness"] == "cold"
    assert rows["gemini-cli"]["installed"] is False
    table = polter("adapters", env={"PATH": f"{bin_dir}:/usr/bin:/bin"})
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["NAME", "CLI", "VERSION", "MCP", "SKILLS", "SOURCE"]
    assert any(line.split()[:4] == ["claude-code", "Claude", "Code", "2.1.332"] for line in lines)
    assert any("gemini-cli" in line and "not installed" in line for line in lines)


def test_a_broken_user_plugin_is_reported_and_the_rest_listed() -> None:
    user_plugins_dir().mkdir(parents=True)
    (user_plugins_dir() / "broken.py").write_text("API_VERSION = 1\nimport does_not_exist\n")
    result = polter("adapters")
    assert result.returncode == 1
    assert f"polter: plugin not loaded: {user_plugins_dir() / 'broken.py'}: import failed: ModuleNotFoundError" in result.stderr
    assert "claude-code" in result.stdout


def test_a_plugin_for_another_api_version_is_reported_with_both_versions(tmp_path: Path) -> None:
    """A real plugin, scaffolded for this version, then marked as written for the next one: `polter adapters`
    names the file and both versions, lists the others, and never runs the plugin (it would leave a marker)."""
    assert polter("adapters", "new", "acme").returncode == 0
    plugin = user_plugins_dir() / "acme" / "__init__.py"
    marker = tmp_path / "imported"
    source = plugin.read_text()
    assert f"\nAPI_VERSION = {API_VERSION}\n" in source
    plugin.write_text(
        source.replace(f"\nAPI_VERSION = {API_VERSION}\n", f"\nAPI_VERSION = {API_VERSION + 1}\n")
        + f"\nPath({str(marker)!r}).touch()\n"
    )
    result = polter("adapters")
    assert result.returncode == 1
    assert (
        f"polter: plugin not loaded: {plugin.parent}: written for plugin API version {API_VERSION + 1}, but this "
        f"Polter's is {API_VERSION}: not loaded" in result.stderr
    ), result.stderr
    assert "acme" not in result.stdout and "claude-code" in result.stdout
    assert not marker.exists()


def test_show_lists_the_skills_with_their_source(tmp_path: Path) -> None:
    home = tmp_path / "home"
    skill = home / ".claude" / "skills" / "deploy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: deploy\ndescription: ships\n---\n")
    result = polter("adapters", "show", "claude-code", "--cwd", str(tmp_path), env={"HOME": str(home)})
    assert result.returncode == 0, result.stderr
    assert "still bypasses Polter:" in result.stdout
    assert f"deploy                       user      {skill / 'SKILL.md'}" in result.stdout
    data = json.loads(polter("adapters", "show", "codex", "--json", env={"HOME": str(home)}).stdout)
    assert data["info"]["name"] == "codex" and data["source"] == "bundled"
    unknown = polter("adapters", "show", "vim")
    assert unknown.returncode == 1 and "no adapter named 'vim'" in unknown.stderr


def test_new_scaffolds_a_plugin_whose_own_test_passes(tmp_path: Path) -> None:
    result = polter("adapters", "new", "acme-agent", "--dir", str(tmp_path / "plugins"))
    assert result.returncode == 0, result.stderr
    folder = tmp_path / "plugins" / "acme_agent"
    assert sorted(path.name for path in folder.iterdir()) == ["__init__.py", "test_acme_agent.py"]
    run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", str(folder)],
                         capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "5 passed" in run.stdout
    again = polter("adapters", "new", "acme-agent", "--dir", str(tmp_path / "plugins"))
    assert again.returncode == 2 and "already exists" in again.stderr


def test_new_goes_to_the_user_plugin_folder_and_is_discovered() -> None:
    assert polter("adapters", "new", "acme").returncode == 0
    listed = json.loads(polter("adapters", "--json").stdout)
    [row] = [row for row in listed["adapters"] if row["name"] == "acme"]
    assert row["source"] == "user" and row["installed"] is False


@pytest.mark.parametrize("name", ["Acme", "1cli", "a_b", ""])
def test_new_rejects_bad_names(name: str) -> None:
    result = polter("adapters", "new", name)
    assert result.returncode == 2 and "NAME:" in result.stderr
