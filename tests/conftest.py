"""Shared fixtures: every test runs with its own config and state dirs, never the user's."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, Path]:
    """Point Polter's config and state dirs at fresh temporary folders."""
    dirs = {"config": tmp_path / "config", "state": tmp_path / "state"}
    for path in dirs.values():
        path.mkdir()
    monkeypatch.setenv("POLTER_CONFIG_DIR", str(dirs["config"]))
    monkeypatch.setenv("POLTER_STATE_DIR", str(dirs["state"]))
    monkeypatch.delenv("POLTER_TOKEN", raising=False)
    monkeypatch.delenv("POLTER_GATEWAY_URL", raising=False)
    return dirs
