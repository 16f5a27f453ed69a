"""`polter servers import`: finds the user's servers in Claude Code, Codex and Gemini CLI configs."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from polter.cli import main
from polter.servers import HttpServer, StdioServer, load_servers


@pytest.fixture
def user(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".codex").mkdir(parents=True)
    (home / ".gemini").mkdir()
    (project / ".gemini").mkdir(parents=True)
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("CODEX_HOME", raising=False)
    (home / ".claude.json").write_text(json.dumps({
        "mcpServers": {"github": {"type": "http", "url": "https://gh.invalid/mcp",
                                  "headers": {"Authorization": "Bearer ${GH_TOKEN}"}},
                       "legacy-sse": {"type": "sse", "url": "https://old.invalid/sse"}},
        "projects": {str(project.resolve()): {"mcpServers": {"local-db": {"command": "db-mcp", "args": ["--ro"]}}}},
    }))
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {
        "time": {"command": "uvx", "args": ["mcp-server-time"], "env": {"TZ": "UTC"}},
        "polter": {"type": "http", "url": "http://127.0.0.1:9/mcp/polter",
                   "headers": {"Authorization": "Bearer ${POLTER_TOKEN}"}},
    }}))
    (home / ".codex" / "config.toml").write_text(textwrap.dedent("""
        [mcp_servers.docs]
        url = "https://docs.invalid/mcp"
        bearer_token_env_var = "DOCS_TOKEN"
        env_http_headers = { "X-Team" = "TEAM_ID" }

        [mcp_servers.off]
        command = "nope"
        enabled = false

        [mcp_servers.time]
        command = "uvx"
        args = ["mcp-server-time"]
        env = { TZ = "UTC" }
    """))
    (home / ".gemini" / "settings.json").write_text(json.dumps({"mcpServers": {
        "search": {"httpUrl": "https://search.invalid/mcp", "headers": {"X-Key": "$SEARCH_KEY"}},
        "sse-one": {"url": "https://sse.invalid/sse"},
        "time": {"command": "other-time"},
    }}))
    return home, project


def test_import_shows_what_it_found_and_writes_nothing_without_write(user: tuple[Path, Path],
                                                                      capsys: pytest.CaptureFixture[str],
                                                                      tmp_path: Path) -> None:
    home, project = user
    servers_file = tmp_path / "servers.toml"
    assert main(["servers", "import", "--home", str(home), "--project", str(project), "--servers",
                 str(servers_file), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    found = {entry["name"]: entry for entry in report["found"]}
    assert set(found) == {"time", "local-db", "github", "docs", "search"}
    assert found["time"]["client"] == "claude-code" and found["time"]["source"].endswith(".mcp.json")
    assert found["docs"]["headers"] == {"X-Team": "${TEAM_ID}", "Authorization": "Bearer ${DOCS_TOKEN}"}
    assert found["search"]["headers"] == {"X-Key": "${SEARCH_KEY}"}
    skipped = {(entry["name"], entry["client"]): entry["why"] for entry in report["skipped"]}
    assert "Polter's own gateway" in skipped[("polter", "claude-code")]
    assert "sse transport is not supported" in skipped[("legacy-sse", "claude-code")]
    assert "legacy SSE" in skipped[("sse-one", "gemini-cli")]
    assert "disabled" in skipped[("off", "codex")]
    assert "name is taken" in skipped[("time", "gemini-cli")]
    assert ("time", "codex") not in skipped, "an identical duplicate is not a conflict"
    assert not servers_file.exists()
    # The table a human reads says where each server came from, and still writes nothing.
    servers_file.write_text("# mine\n", encoding="utf-8")
    assert main(["servers", "import", "--home", str(home), "--project", str(project), "--servers",
                 str(servers_file)]) == 0
    table = capsys.readouterr().out
    assert all(name in table for name in found) and "codex" in table and "gemini-cli" in table
    assert "nothing written; run again with --write" in table
    assert servers_file.read_text(encoding="utf-8") == "# mine\n"


def test_import_write_appends_new_servers_and_keeps_the_file(user: tuple[Path, Path], tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    home, project = user
    servers_file = tmp_path / "servers.toml"
    servers_file.write_text('# my servers\n[servers.time]\ncommand = "my-own-time"\n')
    assert main(["servers", "import", "--home", str(home), "--project", str(project), "--servers",
                 str(servers_file), "--from", "claude-code", "--write"]) == 0
    assert "wrote 2 new server(s)" in capsys.readouterr().out
    text = servers_file.read_text()
    assert text.startswith("# my servers\n") and "imported from claude-code" in text
    monkeypatch.setenv("GH_TOKEN", "t")
    servers = load_servers(servers_file)
    assert servers["time"] == StdioServer(command="my-own-time"), "existing entries are kept"
    assert servers["local-db"] == StdioServer(command="db-mcp", args=["--ro"])
    assert servers["github"] == HttpServer(url="https://gh.invalid/mcp", headers={"Authorization": "Bearer t"})
