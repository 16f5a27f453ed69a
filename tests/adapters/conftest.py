"""Fixtures for the adapter tests: a pane in a temporary home and project, and the bundled adapters."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from polter.adapters import PaneToPrepare
from polter.adapters.plugins import AdapterRegistry, discover

TOKEN = "pane-token-that-must-never-reach-a-file"


def write_skill(root: Path, name: str, description: str = "a test skill") -> Path:
    """Create ``root/<name>/SKILL.md`` and return its path."""
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    skill_md = folder / "SKILL.md"
    skill_md.write_text(f"---\nname: {name}\ndescription: {description}\n---\n\nDo the {name} thing.\n")
    return skill_md


def files_containing(secret: str, *roots: Path) -> list[Path]:
    """Regular files under ``roots`` (symlinks not followed) whose bytes contain ``secret``."""
    needle = secret.encode()
    found = []
    for root in roots:
        for folder, _dirs, names in os.walk(root):
            for name in names:
                path = Path(folder) / name
                if not path.is_symlink() and path.is_file() and needle in path.read_bytes():
                    found.append(path)
    return found


@pytest.fixture(scope="session")
def bundled() -> AdapterRegistry:
    return discover(user=Path("/nonexistent"), entry_points=False)


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh home; the CLIs' own config-dir variables are cleared so they follow it."""
    path = tmp_path / "home"
    path.mkdir()
    monkeypatch.setenv("HOME", str(path))
    for name in ("CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "QWEN_HOME", "XDG_CONFIG_HOME", "OPENCODE_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    (path / ".git").mkdir(parents=True)
    return path


@pytest.fixture
def make_pane(tmp_path: Path, home: Path, project: Path) -> Callable[..., PaneToPrepare]:
    def make(**overrides: Any) -> PaneToPrepare:
        values: dict[str, Any] = {
            "pane_id": "p1",
            "gateway_url": "http://127.0.0.1:4321",
            "servers": ("time", "everything"),
            "runtime_dir": tmp_path / "runtime",
            "cwd": project,
            "token": TOKEN,
            "home": home,
            "hook_command": ("/opt/polter/bin/python", "-m", "polter.cli.hook"),
        }
        values.update(overrides)
        return PaneToPrepare(**values)

    return make


def deny_skills(*names: str) -> Callable[[str], str]:
    return lambda name: "deny" if name in names else "allow"


