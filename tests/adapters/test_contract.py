"""The adapter contract's models: what a pane tells an adapter, and what an adapter may return."""

from __future__ import annotations

import stat
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from pydantic import ValidationError

from polter.adapters import (
    Adapter,
    AdapterInfo,
    Detection,
    HookAnswer,
    LaunchSpec,
    Liveness,
    PaneFile,
    PaneToPrepare,
    PreparedPane,
    TestMode,
)
from polter.adapters.plugins import AdapterRegistry, RuntimeDir, write_pane_files

from .conftest import TOKEN, files_containing


class Minimal(Adapter):
    info = AdapterInfo(name="minimal", display_name="Minimal", command="minimal-cli-not-installed",
                       mcp_liveness=Liveness.COLD, skills_liveness=Liveness.COLD)

    def prepare(self, pane: PaneToPrepare) -> PreparedPane:
        return PreparedPane(launch=LaunchSpec(argv=(self.executable(),), env=pane.polter_env()))


def test_every_pane_gets_the_floor_server_once(make_pane: Callable[..., PaneToPrepare]) -> None:
    pane = make_pane(servers=("time", "polter", "time"), gateway_url="http://127.0.0.1:9/")
    assert pane.endpoints == {"time": "http://127.0.0.1:9/mcp/time", "polter": "http://127.0.0.1:9/mcp/polter"}


def test_the_token_travels_in_the_environment_only(make_pane: Callable[..., PaneToPrepare]) -> None:
    pane = make_pane()
    assert pane.polter_env() == {"POLTER_GATEWAY_URL": "http://127.0.0.1:4321", "POLTER_TOKEN": TOKEN}
    assert TOKEN not in repr(pane)


def test_the_hook_command_defaults_to_this_python(make_pane: Callable[..., PaneToPrepare]) -> None:
    assert make_pane(hook_command=()).hook_argv("codex") == (sys.executable, "-m", "polter.cli.hook", "codex")


def test_a_broken_skill_policy_shows_the_skill(make_pane: Callable[..., PaneToPrepare]) -> None:
    def broken(_name: str) -> str:
        raise RuntimeError("policy unavailable")

    assert make_pane(skill_decision=broken).decide_skill("anything") == "allow"


def test_info_must_be_adapter_info() -> None:
    with pytest.raises(TypeError, match="must be an AdapterInfo"):
        type("Bad", (Adapter,), {"info": {"name": "bad"}, "prepare": lambda self, pane: None})


def test_adapter_names_are_command_line_friendly() -> None:
    with pytest.raises(ValidationError):
        AdapterInfo(name="Claude Code", display_name="x", command="x", mcp_liveness="hot", skills_liveness="hot")


def test_files_stay_inside_the_runtime_dir() -> None:
    launch = LaunchSpec(argv=("x",))
    for bad in ("/etc/passwd", "../escape", "a/../../b"):
        with pytest.raises(ValidationError, match="inside the runtime dir"):
            PreparedPane(launch=launch, files={bad: PaneFile(text="")})
    with pytest.raises(ValidationError):
        PaneFile()
    with pytest.raises(ValidationError):
        PaneFile(text="a", link_to=Path("/a"))


def test_detect_reads_the_version_of_the_program_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    program = tmp_path / "minimal-cli-not-installed"
    program.write_text("#!/bin/sh\necho 'minimal-cli 3.14.1 (build 7)'\n")
    program.chmod(0o755)
    assert Minimal().detect() == Detection(installed=False)
    monkeypatch.setenv("PATH", f"{tmp_path}:/usr/bin:/bin")
    detection = Minimal().detect()
    assert (detection.installed, detection.version, detection.path) == (True, "3.14.1", program)


def test_detect_explains_an_unreadable_version(tmp_path: Path) -> None:
    program = tmp_path / "cli"
    program.write_text("#!/bin/sh\necho 'no version here' >&2\nexit 3\n")
    program.chmod(0o755)
    detection = Minimal(executable=program).detect()
    assert detection.installed and detection.version is None and detection.error == "no version here"


def test_the_default_hook_answer_vetoes_with_exit_code_2() -> None:
    deny = Minimal().hook_answer(HookAnswer(decision="deny", reason="not in this role", rule="tools.deny: time/*"))
    assert deny.exit_code == 2 and deny.stderr == "Polter: not in this role (rule: tools.deny: time/*)"
    assert Minimal().hook_answer(HookAnswer(decision="allow")).exit_code == 0


def test_pane_files_are_private_and_removed_with_the_pane(tmp_path: Path) -> None:
    login = tmp_path / "auth.json"
    login.write_text("{}")
    runtime = tmp_path / "panes" / "p1"
    with RuntimeDir(runtime) as path:
        written = write_pane_files(path, {
            "cli/config.json": PaneFile(text="{}"),
            "cli/bin/tool": PaneFile(text="#!/bin/sh\n", mode=0o700),
            "cli/auth.json": PaneFile(link_to=login),
        })
        assert stat.S_IMODE(path.stat().st_mode) == 0o700
        assert stat.S_IMODE((path / "cli" / "bin").stat().st_mode) == 0o700
        assert stat.S_IMODE(written[0].stat().st_mode) == 0o600
        assert stat.S_IMODE(written[1].stat().st_mode) == 0o700
        assert written[2].is_symlink() and written[2].resolve() == login
        write_pane_files(path, {"cli/config.json": PaneFile(text='{"again": 1}')})
        assert written[0].read_text() == '{"again": 1}'
        assert not list((path / "cli").glob(".config.json.*")), "no temporary file is left behind"
    assert not runtime.exists()
    assert login.exists(), "removing the pane never follows a link into the user's files"


@pytest.mark.parametrize("name", ["claude-code", "codex", "gemini-cli", "qwen-code", "opencode", "shell"])
@pytest.mark.parametrize("test_mode", [False, True])
def test_no_bundled_adapter_writes_the_token_anywhere(name: str, test_mode: bool, bundled: AdapterRegistry,
                                                      make_pane: Callable[..., PaneToPrepare], home: Path, project: Path) -> None:
    """The token reaches the CLI only as $POLTER_TOKEN: not in a runtime file, an argument, another variable,
    the user's home or the project; every file goes into the private runtime dir, which the pane's end removes."""
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text('model = "m"\n')  # a user config the adapter carries over
    pane = make_pane(test_mode=TestMode(model_base_url="http://127.0.0.1:9") if test_mode else None)
    prepared = bundled.get(name).prepare(pane)
    with RuntimeDir(pane.runtime_dir):
        written = write_pane_files(pane.runtime_dir, prepared.files)
        assert all(pane.runtime_dir in path.parents for path in written)
        assert stat.S_IMODE(pane.runtime_dir.stat().st_mode) == 0o700
        for path in written:
            if not path.is_symlink():
                assert TOKEN not in path.read_text(), path
                assert stat.S_IMODE(path.stat().st_mode) & 0o077 == 0, path
        assert not [arg for arg in prepared.launch.argv if TOKEN in arg]
        assert {key for key, value in prepared.launch.env.items() if TOKEN in value} == {"POLTER_TOKEN"}
        assert not files_containing(TOKEN, home, project)
    assert not pane.runtime_dir.exists()
