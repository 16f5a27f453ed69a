"""``polter`` with no config, as a newcomer starts it: four panes of the first agent CLI installed (else
the shell) under coder, reviewer, researcher and ops, each header saying which CLI and why; the
panes are registered with the real gateway under those roles."""

from __future__ import annotations

import stat
from pathlib import Path
from typing import Any

import pytest
from support.panes import BASH
from support.workspace_app import badges, panes, session_pane, workspace_app, workspace_of

from polter.cli import build_parser
from polter.launch.config import DEFAULT_ROLES
from polter.cli.app import plan

QUIET = f"#!/bin/sh\nexec {BASH} --norc --noprofile\n"
"""A program that is a quiet bash whatever arguments it gets (stands in for a CLI)."""


@pytest.fixture
def bin_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An otherwise empty PATH and a quiet bash as the user's shell."""
    folder = tmp_path / "bin"
    folder.mkdir()
    shell = tmp_path / "quiet-bash"
    write_program(shell, QUIET)
    monkeypatch.setenv("PATH", str(folder))
    monkeypatch.setenv("SHELL", str(shell))
    return folder


def write_program(path: Path, text: str) -> None:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)


async def test_without_an_agent_cli_four_shells_say_why(monkeypatch: Any, bin_dir: Path) -> None:
    launch = plan(build_parser().parse_args([]))
    async with workspace_app(monkeypatch, launch.plans, roles={}) as (app, _pilot):
        assert len(panes(app)) == 4
        registered = {pane.id: pane.role for pane in await workspace_of(app).client.panes()}
        for pane, role in zip(panes(app), DEFAULT_ROLES, strict=True):
            assert badges(pane)["adapter"] == "Shell (no agent CLI found)" and badges(pane)["role"] == role
            adapter_badge = pane.header.query_one("#badge-adapter")
            assert "no agent CLI is installed (looked for: claude, codex" in str(adapter_badge.tooltip)
            assert pane.agent is not None and registered[pane.remote.id] == role


async def test_the_first_agent_cli_found_runs_in_every_pane(monkeypatch: Any, bin_dir: Path) -> None:
    for command in ("codex", "gemini"):  # codex comes first in name order (codex, gemini-cli)
        write_program(bin_dir / command, QUIET)
    launch = plan(build_parser().parse_args([]))
    async with workspace_app(monkeypatch, launch.plans, roles={}) as (app, _pilot):
        for pane, role in zip(panes(app), DEFAULT_ROLES, strict=True):
            assert badges(pane)["adapter"] == "Codex CLI (detected)" and badges(pane)["role"] == role
            argv = session_pane(app, pane).terminal.spec.argv
            assert Path(argv[argv.index("polter-sandbox") + 1]).name == "codex", argv  # inside the pane's sandbox
            assert "first agent CLI found on PATH" in str(pane.header.query_one("#badge-adapter").tooltip)
