"""ruff's lint and format check and mypy's type check pass over the code (config in pyproject.toml), so CI
holds the style and the types."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["lint", "format"])
def test_ruff_passes_over_polter_and_the_plugins(command: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ruff", *command, "polter", "plugins"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, f"ruff {' '.join(command)} polter plugins:\n{result.stdout}{result.stderr}"


def test_mypy_passes_over_polter_and_the_plugins() -> None:
    """``[tool.mypy]`` names what is checked (polter/ and plugins/) and keeps its cache in .mypy_cache, so
    a second run checks only what changed."""
    result = subprocess.run([sys.executable, "-m", "mypy"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, f"mypy (see [tool.mypy] in pyproject.toml):\n{result.stdout}{result.stderr}"
    assert "no issues found" in result.stdout, result.stdout
