"""Where things live: the runtime dir's fallback, and folders made private all the way down."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from polter.paths import fallback_runtime_dir, make_private_dirs


def test_every_folder_made_is_private_and_those_there_are_left_as_they_are(tmp_path: Path) -> None:
    tmp_path.chmod(0o755)
    make_private_dirs(tmp_path / "a" / "b" / "c")
    assert (tmp_path / "a" / "b" / "c").is_dir()
    assert [oct((tmp_path / part).stat().st_mode & 0o777) for part in ("a", "a/b", "a/b/c")] == ["0o700"] * 3
    assert tmp_path.stat().st_mode & 0o777 == 0o755
    make_private_dirs(tmp_path / "a" / "b" / "c")  # there already: nothing to do


def test_the_fallback_runtime_dir_is_polter_uid_in_tmp_or_in_polter_tmpdir(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POLTER_TMPDIR", raising=False)
    assert fallback_runtime_dir() == Path("/tmp") / f"polter-{os.getuid()}"
    monkeypatch.setenv("POLTER_TMPDIR", "/srv/scratch")
    assert fallback_runtime_dir() == Path("/srv/scratch") / f"polter-{os.getuid()}"
