"""The cache of test tools (``support/tools.py``): shared by every clone, and never holding half an install."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.tools import install_once

ROOT = Path(__file__).resolve().parents[1]


def test_an_install_lands_whole_and_a_failed_one_leaves_nothing(tmp_path: Path) -> None:
    folder = tmp_path / "npm" / "tool_1.0"
    done = folder / "package.json"

    def fails(scratch: Path) -> None:
        (scratch / "node_modules").mkdir()  # half written when npm fails
        raise subprocess.CalledProcessError(1, ["npm", "install"])

    with pytest.raises(subprocess.CalledProcessError):
        install_once(folder, done, fails)
    names = sorted(path.name for path in (tmp_path / "npm").iterdir())
    assert names == [".tool_1.0.lock"]  # its lock, and neither the folder nor its scratch: the next run installs

    folder.mkdir()
    (folder / "left-by-a-move-never-finished").touch()
    assert install_once(folder, done, lambda scratch: (scratch / "package.json").write_text("{}")) == folder
    assert sorted(path.name for path in (tmp_path / "npm").iterdir()) == [".tool_1.0.lock", "tool_1.0"]
    assert [path.name for path in folder.iterdir()] == ["package.json"]

    def never(scratch: Path) -> None:
        raise AssertionError("installed again")

    install_once(folder, done, never)  # done: the install does not run again


@pytest.mark.parametrize(
    ("environment", "expected"),
    [
        ({"POLTER_TEST_TOOLS": "/srv/tools", "XDG_CACHE_HOME": "/x"}, "/srv/tools"),
        ({"XDG_CACHE_HOME": "/x"}, "/x/polter-test-tools"),
        ({"HOME": "/home/u"}, "/home/u/.cache/polter-test-tools"),
    ],
)
def test_the_tools_live_in_the_users_cache_outside_the_clone(environment: dict[str, str], expected: str) -> None:
    """Read in a fresh interpreter, as a worker reads it at import, before any test changes ``HOME``."""
    env = {name: value for name, value in os.environ.items() if name not in ("POLTER_TEST_TOOLS", "XDG_CACHE_HOME")}
    result = subprocess.run(
        [sys.executable, "-c", "from support.tools import TOOLS; print(TOOLS)"],
        env={**env, **environment, "PYTHONPATH": str(ROOT / "tests")}, capture_output=True, text=True, check=True,
    )  # fmt: skip
    assert result.stdout.strip() == expected
