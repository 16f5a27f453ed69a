"""What a pane's sandbox makes of the CLI's own files (polter.host.confined.cli_files), from the adapter's answer:
Polter's files read-only, the CLI's state writable, the folders of its settings and code held read-only, and its
private files copied."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from polter.adapters import PaneFile, PreparedPane, StateHome
from polter.adapters.plugins import RuntimeDir, write_pane_files
from polter.host.confined import PaneSockets, cli_files, every_clis_config
from polter.terminal.launch import LaunchSpec


def test_a_moved_homes_state_is_writable_and_the_rest_of_the_users_folder_is_held(tmp_path: Path) -> None:
    user = tmp_path / "home" / ".cli"
    (user / "extensions").mkdir(parents=True)
    (user / "projects.json").write_text('{"projects": {}}')
    home = StateHome(
        folder="cli",
        user_folder=user,
        keep=("sessions/", "history.jsonl", "projects.json", "extensions/"),
        copied=("projects.json",),
        shared=("extensions/", "trusted.json"),
    )
    prepared = PreparedPane(
        launch=LaunchSpec(argv=("cli",)), files={"cli/settings.json": PaneFile(text="{}")}, homes=(home,)
    )
    runtime = tmp_path / "run" / "p1"
    RuntimeDir(runtime).create()
    write_pane_files(runtime, prepared.files, prepared.homes)
    other = tmp_path / "home" / ".other-cli"
    files = cli_files(runtime, prepared, own=(user,), others=(other, user))
    assert files.polter_files == (runtime / "cli" / "settings.json",)
    assert files.protected == (user / "settings.json", other), "the user's own settings; another CLI's folder whole"
    assert files.state == (runtime / "cli", user / "sessions", user / "history.jsonl"), "not the copied one"
    assert files.held == (user,)
    assert (runtime / "cli" / "projects.json").read_text() == '{"projects": {}}', "the pane's own copy"
    assert (runtime / "cli" / "extensions").resolve() == user / "extensions", "shared: linked, and held read-only"


def test_a_private_file_is_copied_fresh_and_a_missing_one_made_first(tmp_path: Path) -> None:
    """Claude Code's ``~/.claude.json`` holds its state and the user's MCP servers: the pane works on a copy."""
    home = tmp_path / "home"
    (home / ".claude").mkdir(parents=True)
    state_file = home / ".claude.json"
    prepared = PreparedPane(
        launch=LaunchSpec(argv=("claude",)), state_folders=(home / ".claude" / "projects",), private_files=(state_file,)
    )
    runtime = tmp_path / "run" / "p1"
    RuntimeDir(runtime).create()
    own = (home / ".claude", state_file)
    files = cli_files(runtime, prepared, own, others=())
    [(copy, original)] = files.private_copies
    assert original == state_file and json.loads(state_file.read_text()) == {}, "made first, as an empty object"
    assert copy.parent == runtime / "private" and json.loads(copy.read_text()) == {}
    assert files.held == (home / ".claude",) and files.state == (home / ".claude" / "projects",)
    assert files.protected == (), "the private file is the pane's copy, not held"
    state_file.write_text('{"numStartups": 3}')
    copy.write_text('{"mcpServers": {"planted": {"command": "sh"}}}')  # what the pane wrote in its copy
    [(copy, _original)] = cli_files(runtime, prepared, own, others=()).private_copies
    assert json.loads(copy.read_text()) == {"numStartups": 3}, "each start copies the user's file anew"
    assert json.loads(state_file.read_text()) == {"numStartups": 3}


def test_a_folder_the_cli_makes_at_its_start_exists_before_it_and_is_not_writable(tmp_path: Path) -> None:
    """opencode creates its cache's ``bin`` at every start and fails when it cannot (a read-only home): the folder is
    made first, empty, and stays out of the CLI's writable state (its cache holds code the human's opencode runs)."""
    home = tmp_path / "home"
    cache = home / ".cache" / "opencode" / "bin"
    prepared = PreparedPane(launch=LaunchSpec(argv=("opencode",)), made_folders=(cache,))
    runtime = tmp_path / "run" / "p1"
    RuntimeDir(runtime).create()
    files = cli_files(runtime, prepared, own=(), others=())
    assert cache.is_dir() and not any(cache.iterdir())
    assert not any(path == cache or cache.is_relative_to(path) for path in files.state), files.state


def test_a_made_folder_must_be_absolute() -> None:
    with pytest.raises(ValueError, match="'cache/opencode' must be an absolute path"):
        PreparedPane(launch=LaunchSpec(argv=("opencode",)), made_folders=(Path("cache/opencode"),))


def test_every_clis_config_but_the_panes_own() -> None:
    from polter.adapters.plugins import discover

    registry = discover()
    home = Path("/home/someone")
    codex = registry.get("codex")
    found = every_clis_config(home, codex)
    assert home / ".codex" not in found
    assert {
        home / ".claude",
        home / ".claude.json",
        home / ".gemini",
        home / ".qwen",
        home / ".config" / "opencode",
    } <= set(found)


def test_a_session_removes_the_sockets_folders_its_killed_predecessors_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A host killed with SIGKILL leaves its panes' sockets' folder; the next session's start removes it, and
    leaves those of hosts that still run."""
    (tmp_path / "run").mkdir(mode=0o700)
    monkeypatch.setenv("POLTER_RUNTIME_DIR", str(tmp_path / "run"))
    gone = subprocess.Popen(["true"])
    gone.wait()
    panes = tmp_path / "run" / "panes"
    left = panes / str(gone.pid) / "gateway"
    left.mkdir(parents=True)
    (left / "gateway.sock").touch()
    running = panes / str(os.getppid()) / "gateway"
    running.mkdir(parents=True)

    sockets = PaneSockets.of_this_session()

    assert sockets.root == panes / str(os.getpid())
    assert not (panes / str(gone.pid)).exists()
    assert running.is_dir()
