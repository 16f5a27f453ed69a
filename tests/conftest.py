"""Shared fixtures: every test runs with its own config and state dirs, never the user's; no test skips."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_dirs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> dict[str, Path]:
    """Point Polter's config, state and runtime dirs (and where it makes worktrees) at fresh temporary folders."""
    dirs = {"config": tmp_path / "config", "state": tmp_path / "state"}
    for path in dirs.values():
        path.mkdir()
    monkeypatch.setenv("POLTER_CONFIG_DIR", str(dirs["config"]))
    monkeypatch.setenv("POLTER_STATE_DIR", str(dirs["state"]))
    runtime = Path(tempfile.mkdtemp(prefix="pr-"))  # short: a Unix socket's path has at most 107 bytes
    monkeypatch.setenv("POLTER_RUNTIME_DIR", str(runtime))

    def remove_runtime() -> None:
        from support.processes import end_left_sessions

        end_left_sessions(runtime)  # (a failed test's session would outlive it, unreachable)
        shutil.rmtree(runtime, ignore_errors=True)

    request.addfinalizer(remove_runtime)
    dirs["runtime"] = runtime
    monkeypatch.setenv("POLTER_WORKTREES_DIR", str(tmp_path / "worktrees"))
    monkeypatch.delenv("POLTER_TOKEN", raising=False)
    monkeypatch.delenv("POLTER_GATEWAY_URL", raising=False)
    return dirs


def pytest_configure(config: pytest.Config) -> None:
    from support import report
    from support.tools import CACHE

    if not hasattr(config, "workerinput"):
        report.start(CACHE)


@pytest.hookimpl(trylast=True)  # after pytest's own grouping by fixture, so that this order is the last word
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest modules first (``support/order.py``): under worksteal no long test is left for the end."""
    from support.order import longest_first

    items[:] = longest_first(items)


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


PLATFORM_SKIP = "platform:"
"""The one kind of skip allowed: ``pytest.skip("platform: <why this platform cannot run it>")``."""


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):  # type: ignore[no-untyped-def]
    """A skipped test is a failed one (a missing fixture, tool or file must not pass unnoticed), unless the
    platform cannot run it at all and the reason says so (``platform: ...``)."""
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if not report.skipped or hasattr(report, "wasxfail"):
        return
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    if reason.removeprefix("Skipped: ").startswith(PLATFORM_SKIP):
        return
    report.outcome = "failed"
    report.longrepr = (
        f"{item.nodeid} skipped ({reason}); a test must not skip for something missing: install it or make the "
        f"test fail. Only a platform that cannot run the test may skip, with a reason starting {PLATFORM_SKIP!r}."
    )
