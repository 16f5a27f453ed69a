"""Real git repositories in temp dirs, and Polter's worktrees dir pointed into the test's own."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.git_repos import make_repo

from polter.paths import worktrees_dir as worktrees_dir_of_polter


@pytest.fixture(autouse=True)
def worktrees_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Where Polter makes worktrees in this test (tests/conftest.py points it into tmp_path)."""
    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name, raising=False)  # the tests' own git commands must not follow a hook's repository
    return worktrees_dir_of_polter()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A repository on main with one commit (see support.git_repos.make_repo)."""
    return make_repo(tmp_path / "app")
