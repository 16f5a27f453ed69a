"""Where things live: the runtime dir's fallback, and folders made private all the way down."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from polter.paths import fallback_runtime_dir, lasting_runtime_dir, make_private_dirs, runtime_dir


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


def test_the_panes_sockets_are_never_in_the_login_s_runtime_dir_which_a_logout_removes(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from polter.host.confined import PaneSockets

    monkeypatch.delenv("POLTER_RUNTIME_DIR")
    (tmp_path / "xdg").mkdir(mode=0o700)
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "xdg"))
    monkeypatch.setenv("POLTER_TMPDIR", str(tmp_path / "tmp"))
    fallback = tmp_path / "tmp" / f"polter-{os.getuid()}"
    assert runtime_dir() == tmp_path / "xdg" / "polter"  # the sessions' sockets: found again after a logout
    assert lasting_runtime_dir() == fallback and fallback.stat().st_mode & 0o777 == 0o700
    assert PaneSockets.of_this_session().root == fallback / "panes" / str(os.getpid())
    fallback.chmod(0o755)  # not private (another user's, say): the session still starts, its sockets where they were
    assert PaneSockets.of_this_session().root == tmp_path / "xdg" / "polter" / "panes" / str(os.getpid())
    monkeypatch.setenv("POLTER_RUNTIME_DIR", str(tmp_path / "chosen"))
    assert lasting_runtime_dir() == tmp_path / "chosen"
