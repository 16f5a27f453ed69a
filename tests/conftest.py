"""Shared fixtures: every test runs with its own config and state dirs, never the user's."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Point Polter's config and state dirs (and where it makes worktrees) at fresh temporary folders."""
    dirs = {"config": tmp_path / "config", "state": tmp_path / "state"}
    for path in dirs.values():
        path.mkdir()
    monkeypatch.setenv("POLTER_CONFIG_DIR", str(dirs["config"]))
    monkeypatch.setenv("POLTER_STATE_DIR", str(dirs["state"]))
    monkeypatch.setenv("POLTER_WORKTREES_DIR", str(tmp_path / "worktrees"))
    monkeypatch.delenv("POLTER_TOKEN", raising=False)
    monkeypatch.delenv("POLTER_GATEWAY_URL", raising=False)
    return dirs


def pytest_configure(config: pytest.Config) -> None:
    from support import report
    from support.tools import CACHE

    if not hasattr(config, "workerinput"):
        report.start(CACHE)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """What the end-to-end tests report (e.g. the versions of the real CLIs they drove)."""
    from support import report

    if hasattr(terminalreporter.config, "workerinput"):
        return
    lines = report.take()
    if lines:
        terminalreporter.section("end-to-end report")
        for line in lines:
            terminalreporter.write_line(line)
