"""From the command line and ``polter.toml`` to the panes: adapters detected and why, roles, servers, errors."""

from __future__ import annotations

import stat
import textwrap
from pathlib import Path
from typing import Any

import pytest

from polter.adapters.plugins import AdapterRegistry, discover
from polter.cli import build_parser
from polter.errors import ConfigError
from polter.launch.config import NotifySettings
from polter.paths import config_dir
from polter.launch.config import (
    DEFAULT_ROLES,
    PaneSetup,
    SavedSession,
    load_config,
    load_session,
    parse_pane_option,
    save_session,
)
from polter.cli.app import plan
from polter.launch.planning import plan_panes


@pytest.fixture
def registry() -> AdapterRegistry:
    return discover(user=Path("/nonexistent"), entry_points=False)


@pytest.fixture
def path_with(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """``path_with("codex")``: a PATH on which only these commands exist (fake executables)."""

    def make(*commands: str) -> Path:
        folder = tmp_path / "bin"
        folder.mkdir(exist_ok=True)
        for command in commands:
            program = folder / command
            program.write_text("#!/bin/sh\n")
            program.chmod(program.stat().st_mode | stat.S_IXUSR)
        monkeypatch.setenv("PATH", str(folder))
        monkeypatch.setenv("SHELL", "/bin/sh")
        return folder

    return make


def launch(*argv: str, registry: AdapterRegistry | None = None) -> Any:
    return plan(build_parser().parse_args(list(argv)), registry)


def write_config(text: str) -> Path:
    path = config_dir() / "polter.toml"
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def test_no_config_opens_four_panes_with_the_first_agent_cli_found(registry: AdapterRegistry, path_with: Any) -> None:
    path_with("codex", "gemini")
    plans = launch(registry=registry).plans
    assert [plan.adapter.name for plan in plans] == ["codex"] * 4
    assert [plan.setup.role for plan in plans] == list(DEFAULT_ROLES)
    assert plans[0].why == "detected" and "Codex CLI is the first agent CLI found on PATH" in plans[0].reason


def test_without_an_agent_cli_the_panes_are_shells_and_say_why(registry: AdapterRegistry, path_with: Any) -> None:
    path_with()
    plans = launch("--panes", "2", registry=registry).plans
    assert [plan.adapter.name for plan in plans] == ["shell", "shell"]
    assert plans[0].why == "no agent CLI found"
    assert "looked for: claude, codex, gemini, opencode, qwen" in plans[0].reason


def test_pane_options_choose_adapter_and_role(registry: AdapterRegistry, path_with: Any) -> None:
    path_with("claude")
    plans = launch(
        "--pane", "claude-code:coder", "--pane", "codex:reviewer", "--pane", ":researcher", registry=registry
    ).plans
    assert [(plan.adapter.name, plan.setup.role, plan.why) for plan in plans] == [
        ("claude-code", "coder", ""),
        ("codex", "reviewer", "not installed"),
        ("claude-code", "researcher", "detected"),
    ]
    assert "codex is not installed" in plans[1].reason
    with pytest.raises(ConfigError, match="--pane: no adapter named 'nope'"):
        launch("--pane", "nope:coder", registry=registry)
    with pytest.raises(ConfigError, match="--pane: 'Bad!:x'"):
        parse_pane_option("Bad!:x")


def test_the_config_file_names_panes_layout_prefix_and_servers(
    registry: AdapterRegistry, path_with: Any, tmp_path: Path
) -> None:
    path_with()
    write_config(f"""
        layout = "columns"
        prefix = "ctrl+a"
        palette_key = "f2"
        ask_timeout = 30

        [[panes]]
        adapter = "shell"
        role = "ops"
        cwd = "{tmp_path}"
        title = "deploys"

        [[panes]]
        role = "reviewer"

        [servers.time]
        command = "uvx"
        args = ["mcp-server-time"]
        env = {{ TZ = "${{TZ:-UTC}}" }}
    """)
    result = launch(registry=registry)
    assert (result.layout, result.prefix, result.palette_key, result.ask_timeout) == ("columns", "ctrl+a", "f2", 30)
    assert [(plan.adapter.name, plan.setup.role, plan.setup.title) for plan in result.plans] == [
        ("shell", "ops", "deploys"),
        ("shell", "reviewer", None),
    ]
    assert result.plans[0].setup.cwd == tmp_path and "configured in" in result.plans[0].reason
    assert result.servers["time"].env == {"TZ": "${TZ:-UTC}"}  # the gateway expands it
    assert launch("--layout", "rows", registry=registry).layout == "rows"  # the command line wins
    assert launch("--palette-key", "ctrl+p", registry=registry).palette_key == "ctrl+p"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('layout = "diagonal"\n', r"polter.toml:1: layout: Input should be 'grid', 'columns' or 'rows'"),
        (
            '[[panes]]\nadapter = "shell"\n\n[[panes]]\nrole = "x"\nwho = 1\n',
            r"polter.toml:6: panes\[1\].who: unknown key",
        ),
        ('[[panes]]\nadapter = "nope"\n', r"polter.toml:2: panes\[0\].adapter: no adapter named 'nope'"),
        ("[[panes]\n", r"polter.toml:1: invalid TOML"),
        ('[servers.time]\nargs = ["x"]\n', r"polter.toml:1: servers.time.command: Field required"),
        ('layout = "grid"\nnotify_command = []\n', r"polter.toml:2: notify_command: List should have at least 1"),
        ('notify_events = ["waiting", "finished"]\n', r"polter.toml:1: notify_events\[1\]: Input should be 'waiting'"),
        ('notify_terminal = "osc8"\n', r"polter.toml:1: notify_terminal: Input should be 'auto', 'osc9'"),
        ('prefix = "ctrl+a"\nnotify_quiet = -1\n', r"polter.toml:2: notify_quiet: Input should be greater than or equal to 0"),
        ('notify_desktop = "yes"\n', r"polter.toml:1: notify_desktop: Input should be a valid boolean"),
        ('[[panes]]\nrole = "x"\nnotify = "no"\n', r"polter.toml:3: panes\[0\].notify: Input should be a valid boolean"),
    ],
)
def test_config_problems_name_file_line_and_field(
    registry: AdapterRegistry, path_with: Any, text: str, message: str
) -> None:
    path_with()
    write_config(text)
    with pytest.raises(ConfigError, match=message):
        launch(registry=registry)


def test_the_config_file_says_how_and_when_to_notify(registry: AdapterRegistry, path_with: Any) -> None:
    path_with()
    assert launch(registry=registry).notify == NotifySettings()  # waiting and done, desktop, auto, 1 s; no command
    write_config("""
        notify_command = ["ntfy", "publish", "polter"]
        notify_events = ["waiting"]
        notify_desktop = false
        notify_terminal = "bell"
        notify_quiet = 2.5

        [[panes]]
        adapter = "shell"
        notify = false

        [[panes]]
        adapter = "shell"
    """)
    result = launch(registry=registry)
    assert result.notify == NotifySettings(
        command=["ntfy", "publish", "polter"], events=["waiting"], desktop=False, terminal="bell", quiet=2.5
    )
    assert [plan.setup.notify for plan in result.plans] == [False, True]


def test_an_explicit_config_must_exist(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="missing.toml: the config file does not exist"):
        load_config(tmp_path / "missing.toml")
    assert load_config().panes == []  # no default file: the defaults


def test_the_terraria_backend_is_managed_when_tshock_url_is_set(
    registry: AdapterRegistry, path_with: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    path_with()
    assert "terraria" not in launch(registry=registry).servers
    monkeypatch.setenv("TSHOCK_URL", "http://127.0.0.1:7878")
    server = launch(registry=registry).servers["terraria"]
    assert server.args == ["-m", "polter", "terraria", "serve"]  # TSHOCK_* reach it through the environment


def test_the_demo_runs_scripted_agents_under_the_terraria_roles(registry: AdapterRegistry, path_with: Any) -> None:
    path_with()
    result = launch("--demo", registry=registry)
    assert [plan.setup.role for plan in result.plans] == [
        "terraria-admin",
        "terraria-moderator",
        "terraria-researcher",
        "terraria-researcher",
    ]
    assert [plan.setup.command is not None for plan in result.plans] == [True, True, True, False]
    assert result.backends and result.hint and "make it rain" in result.hint


def test_a_saved_session_round_trips_and_a_missing_one_says_so(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="no saved session to restore"):
        load_session(tmp_path)
    save_session(SavedSession(layout="rows", panes=[PaneSetup(adapter="codex", role="ops", cwd=tmp_path)]), tmp_path)
    restored = load_session(tmp_path)
    assert restored.layout == "rows" and restored.panes[0].cwd == tmp_path and restored.panes[0].adapter == "codex"


def test_plan_panes_keeps_relative_directories_relative_to_the_start(
    registry: AdapterRegistry, path_with: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path_with()
    monkeypatch.chdir(tmp_path)
    [plan] = plan_panes([PaneSetup(cwd=Path("sub"))], registry, source="", where=lambda index: {})
    assert plan.setup.cwd == tmp_path / "sub" and plan.setup.role == "coder"
