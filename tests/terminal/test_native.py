"""The compiled core (`polter.terminal._native`): the suite runs the engine compiled, and its screen tests
once more as pure Python, so both implementations of the same source pass the same tests."""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from polter.terminal import _native

ROOT = Path(__file__).resolve().parents[2]
SCREEN_TESTS = ("test_flood.py", "test_screen.py", "test_screen_fixtures.py", "test_screen_properties.py",
                "test_history.py")  # fmt: skip


def test_the_engine_loads_as_asked() -> None:
    """Compiled when built from the current sources (``make`` builds them); pure Python when asked."""
    pure = bool(os.environ.get(_native.PURE_PYTHON))
    for name in _native.COMPILED:
        module = importlib.import_module(f"polter.terminal.{name}")
        assert module.__file__ is not None
        compiled = Path(module.__file__).parent == _native.FOLDER and module.__file__.endswith(".so")
        if pure:
            assert not compiled, module.__file__
        else:
            assert compiled, f"{module.__file__}: not compiled from the current source (run `make`)"


def test_the_screen_tests_pass_as_pure_python() -> None:
    env = {**os.environ, _native.PURE_PYTHON: "1"}
    tests = [str(ROOT / "tests" / "terminal" / name) for name in SCREEN_TESTS]
    selected = [f"{__file__}::test_the_engine_loads_as_asked", *tests]
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", *selected],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert " passed" in result.stdout.splitlines()[-1], result.stdout[-2000:]


def test_an_edited_module_runs_as_python_until_compiled_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_native, "MANIFEST", tmp_path / "sources.json")
    (tmp_path / "sources.json").write_text('{"_flood": "not its hash"}')
    assert _native.search_path() == []
    (tmp_path / "sources.json").write_text(json.dumps(_native.source_hashes()))
    assert _native.search_path() == [str(_native.FOLDER)]
    monkeypatch.setenv(_native.PURE_PYTHON, "1")
    assert _native.search_path() == []
