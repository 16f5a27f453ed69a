"""Shared fixtures: every test runs with its own config and state dirs, never the user's."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_dirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> dict[str, Path]:
    """Point Polter's config, state and runtime dirs at fresh temporary folders."""
    dirs = {"config": tmp_path / "config", "state": tmp_path / "state"}
    for path in dirs.values():
        path.mkdir()
    monkeypatch.setenv("POLTER_CONFIG_DIR", str(dirs["config"]))
    monkeypatch.setenv("POLTER_STATE_DIR", str(dirs["state"]))
    runtime = Path(tempfile.mkdtemp(prefix="pr-"))  # short: a Unix socket's path has at most 107 bytes
    monkeypatch.setenv("POLTER_RUNTIME_DIR", str(runtime))
    request.addfinalizer(lambda: shutil.rmtree(runtime, ignore_errors=True))
    dirs["runtime"] = runtime
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
