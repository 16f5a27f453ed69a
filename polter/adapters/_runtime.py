"""A pane's private runtime dir: created 0700, filled with what ``prepare`` asked for, removed at the end (after
the CLI's own state in it has been moved to the user's home, see :mod:`polter.adapters._homes`)."""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from types import TracebackType

from polter.adapters._homes import MANIFEST, link_homes, remove_runtime_dir, rescue_homes
from polter.adapters._pane_files import PaneFile, StateHome

__all__ = ["RuntimeDir", "write_pane_files"]


def _private_dir(path: Path) -> None:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path, 0o700)


def write_pane_files(runtime_dir: Path, files: Mapping[str, PaneFile], homes: tuple[StateHome, ...] = ()) -> list[Path]:
    """Write (or link) every file into ``runtime_dir``; folders are 0700, files keep their mode (0600 default).
    Then link the kept state of each of the CLI's ``homes`` (``PreparedPane.homes``) from the user's home.

    Files are written atomically (temp file + rename), so a CLI never reads half a config. A launch after an
    earlier one of the same pane first takes what the earlier CLI wrote in place of a kept link, and the settings
    it wrote into Polter's config, to the user's home (:func:`rescue_homes` with ``restart``).
    """
    written = []
    root = runtime_dir.resolve()
    if (root / MANIFEST).exists():
        rescue_homes(root, restart=True)
    for relative, spec in files.items():
        target = root / PurePosixPath(relative)
        if root not in target.parents:
            raise ValueError(f"{relative!r} is outside the runtime dir")
        for parent in reversed(target.relative_to(root).parents[:-1]):
            _private_dir(root / parent)
        if target.is_symlink() or target.exists():
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            else:
                target.unlink()
        if spec.link_to is not None:
            target.symlink_to(spec.link_to)
        else:
            handle, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.")
            try:
                with os.fdopen(handle, "w", encoding="utf-8") as stream:
                    stream.write(spec.text or "")
                os.chmod(temp, spec.mode)
                os.replace(temp, target)
            except BaseException:
                Path(temp).unlink(missing_ok=True)
                raise
        written.append(target)
    link_homes(root, files, homes, given=runtime_dir)
    return written


class RuntimeDir:
    """The context of a pane's runtime dir: ``with RuntimeDir(path) as path: ...`` creates it private and
    removes it on exit: the CLI's own state in it goes to the user's home first, the rest with the dir."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> Path:
        return self.create()

    def create(self) -> Path:
        """Create the dir (0700), or check that an existing one is private."""
        _private_dir(self.path)
        if stat.S_IMODE(self.path.stat().st_mode) != 0o700:
            raise PermissionError(f"{self.path} is not private (0700)")
        return self.path

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.remove()

    def remove(self) -> None:
        """Move the CLI's state to the user's home, then remove the dir (kept if that failed; see
        :func:`remove_runtime_dir`). Call it once the CLI has exited."""
        remove_runtime_dir(self.path)
