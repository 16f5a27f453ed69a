"""Helpers for role tests: write role files into a folder."""

from __future__ import annotations

from pathlib import Path

import pytest


class RoleDir:
    """A folder of role files; ``write`` puts one in place and returns its path."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.mkdir(parents=True, exist_ok=True)

    def write(self, name: str, text: str) -> Path:
        path = self.path / f"{name}.toml"
        path.write_text(text, encoding="utf-8")
        return path


@pytest.fixture
def role_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> RoleDir:
    """An empty roles folder; the working directory is its parent, so paths print as ``roles/x.toml``."""
    monkeypatch.chdir(tmp_path)
    return RoleDir(tmp_path / "roles")
