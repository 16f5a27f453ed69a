"""A CLI's own state stays the user's: the host side of :class:`~polter.adapters.StateHome`.

Some CLIs can only be given Polter's config by moving their whole home folder into the pane's runtime dir
(``CODEX_HOME``, ``GEMINI_CLI_HOME``, ``QWEN_HOME``). Everything else the CLI keeps in that folder (its
conversations, prompt history, logins, logs, memory, trusted folders) belongs to the user, and must outlive the
pane. This module, the same for every adapter:

- :func:`link_homes` links each kept entry of the user's folder into the pane's folder before the CLI starts,
  and records what it did in a manifest in the runtime dir (so a pane found dead at the next start can still be
  sorted out without its adapter);
- :func:`rescue_homes` moves whatever else the CLI wrote there (Polter's files and the declared scratch aside)
  into the user's folder: merged folder by folder, a file the user changed meanwhile never overwritten (the
  pane's copy is kept beside it under a clear name), nothing of the user's deleted;
- :func:`remove_runtime_dir` rescues every pane under a dir, then removes it, unless a rescue failed (then the
  dir stays, private as it is, and the next start tries again: losing data is worse than keeping it a while).
"""

from __future__ import annotations

import contextlib
import filecmp
import fnmatch
import itertools
import logging
import os
import shutil
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from polter.adapters._config_edits import carry_config_edits
from polter.adapters._pane_files import PaneFile, StateHome

__all__ = ["MANIFEST", "Rescue", "link_homes", "remove_runtime_dir", "rescue_homes"]

logger = logging.getLogger(__name__)

MANIFEST = ".polter-homes.json"
"""The manifest's name in a pane's runtime dir."""


class _Linked(BaseModel):
    """One home as the host set it up for the pane's current launch."""

    model_config = ConfigDict(extra="forbid")

    home: StateHome
    pane_paths: tuple[str, ...] = Field(
        default=(), description="The pane's folder as the CLI may have recorded it (as given, and resolved)."
    )
    polter_files: tuple[str, ...] = Field(description="Polter's own files in the folder, relative to it.")
    written: dict[str, str] = Field(
        default_factory=dict, description="Each edited config (EditedConfig.file) → the text Polter wrote there."
    )
    fingerprints: dict[str, tuple[int, int, int] | None] = Field(
        default_factory=dict,
        description="Each kept file → (inode, size, mtime_ns) of the user's file when it was linked (None: absent). "
        "A file the CLI wrote in place of the link may replace the user's only while that is unchanged.",
    )


class _Manifest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pane: str
    homes: list[_Linked]


class Rescue(BaseModel):
    """What the rescue of one pane's homes did, path by path (in the user's home)."""

    pane: str
    moved: list[Path] = Field(default_factory=list, description="Moved where the user had nothing.")
    replaced: list[Path] = Field(
        default_factory=list, description="Newer versions of a kept file the user had not changed since the link."
    )
    kept_beside: list[Path] = Field(
        default_factory=list, description="The pane's copy of a file the user's differs from, saved beside it."
    )
    settings_added: list[str] = Field(
        default_factory=list, description="Settings the CLI wrote into Polter's config, added to the user's."
    )
    settings_left: list[str] = Field(
        default_factory=list, description="Settings the user's config could not take, and why (it stays as it was)."
    )
    failed: list[str] = Field(default_factory=list, description="What could not be moved, and why.")
    dropped: list[Path] = Field(
        default_factory=list,
        description="What the pane left under a name the human's own CLI reads (StateHome.shared): never moved into "
        "the user's folder, removed with the runtime dir.",
    )


def _fingerprint(path: Path) -> tuple[int, int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return (info.st_ino, info.st_size, info.st_mtime_ns) if path.is_file() else None


def _private_dir(path: Path) -> None:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)


def _made_to_exist(path: Path) -> bool:
    """Whether a kept file of the user's exists, a missing one created empty where an empty file reads as none (the
    CLIs' logs, histories, locks and SQLite databases). A missing JSON file stays missing (an empty one would not
    parse), and is not linked: the pane's sandbox lets the CLI write only what exists, so it writes its own."""
    if path.exists() or path.is_symlink():
        return True
    if path.suffix == ".json":
        return False
    with contextlib.suppress(FileExistsError):
        path.touch(mode=0o600, exist_ok=False)
    return True


def _write_manifest(runtime_dir: Path, manifest: _Manifest) -> None:
    handle, temp = tempfile.mkstemp(dir=runtime_dir, prefix=f"{MANIFEST}.")
    try:
        with os.fdopen(handle, "w", encoding="utf-8") as stream:
            stream.write(manifest.model_dump_json(indent=1))
        os.replace(temp, runtime_dir / MANIFEST)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def _read_manifest(runtime_dir: Path) -> _Manifest | None:
    try:
        return _Manifest.model_validate_json((runtime_dir / MANIFEST).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None


def link_homes(
    runtime_dir: Path, files: Mapping[str, PaneFile], homes: tuple[StateHome, ...], *, given: Path | None = None
) -> None:
    """Link every kept entry of each home's user folder into the pane's folder (creating a missing kept folder in
    the user's folder, and the user's folder itself), and record the manifest (after Polter's files are written:
    it records what Polter wrote). ``given``: the runtime dir as the CLI is told it, if not ``runtime_dir``."""
    linked = []
    for home in homes:
        folder = runtime_dir / PurePosixPath(home.folder)
        _private_dir(folder)
        _private_dir(home.user_folder)
        fingerprints: dict[str, tuple[int, int, int] | None] = {}
        for entry, is_folder in home.kept().items():
            pane_path, user_path = folder / PurePosixPath(entry), home.user_folder / PurePosixPath(entry)
            if is_folder:
                _private_dir(user_path)
            else:
                _private_dir(user_path.parent)
                fingerprints[entry] = _fingerprint(user_path)
            _private_dir(pane_path.parent)
            if pane_path.is_symlink():
                pane_path.unlink()
            elif os.path.lexists(pane_path):  # a rescue could not move it: the CLI keeps using it here
                logger.warning("%s stays in the pane: it could not be moved to %s", pane_path, user_path)
                continue
            if entry in home.copied:
                if user_path.is_file():
                    shutil.copy2(user_path, pane_path)
                continue
            if not is_folder and not _made_to_exist(user_path):
                continue  # the CLI writes it in the pane's folder, and it is moved to the user's when the pane ends
            pane_path.symlink_to(user_path, target_is_directory=is_folder)
        prefix = PurePosixPath(home.folder)
        ours = tuple(
            str(PurePosixPath(name).relative_to(prefix)) for name in files if prefix in PurePosixPath(name).parents
        )
        told = (given or runtime_dir) / PurePosixPath(home.folder)
        pane_paths = tuple(sorted({str(told), str(folder), str(folder.resolve())}))
        written = {}
        for config in home.edited_configs:
            with contextlib.suppress(OSError):
                written[config.file] = (folder / PurePosixPath(config.file)).read_text(encoding="utf-8")
        linked.append(
            _Linked(home=home, pane_paths=pane_paths, polter_files=ours, fingerprints=fingerprints, written=written)
        )
    if linked:
        _write_manifest(runtime_dir, _Manifest(pane=runtime_dir.name, homes=linked))
    else:
        (runtime_dir / MANIFEST).unlink(missing_ok=True)


def rescue_homes(runtime_dir: Path, *, restart: bool = False) -> Rescue:
    """Move what the CLI left in the pane's homes into the user's folders (see the module's docstring).
    ``restart``: the pane goes on with a new launch, which rewrites Polter's files and links: only the kept
    entries the CLI replaced and the settings it wrote into Polter's config go; the rest stays with the pane
    until it ends, as the CLI may read it again."""
    try:
        manifest = _read_manifest(runtime_dir)
    except (OSError, ValidationError, ValueError) as exc:
        return Rescue(pane=runtime_dir.name, failed=[f"{runtime_dir / MANIFEST}: unreadable ({exc})"])
    rescue = Rescue(pane=runtime_dir.name if manifest is None else manifest.pane)
    for linked in manifest.homes if manifest is not None else ():
        _Rescuer(runtime_dir, linked, rescue, restart=restart).run()
    if rescue.settings_left:
        logger.warning("pane %s: settings the CLI wrote stay unapplied: %s", rescue.pane, rescue.settings_left)
    if rescue.dropped:
        logger.warning(
            "pane %s: left where the human's own CLI reads settings or code, not kept: %s",
            rescue.pane,
            [str(path) for path in rescue.dropped],
        )
    if rescue.moved or rescue.replaced or rescue.kept_beside or rescue.settings_added or rescue.failed:
        logger.info("pane %s: the CLI's state kept in the user's home: %s", rescue.pane, rescue.model_dump_json())
    return rescue


def remove_runtime_dir(path: Path) -> list[Rescue]:
    """Rescue the CLI state of every pane under ``path`` (a pane's runtime dir, or an app's run dir holding
    several), then remove ``path``. If a rescue failed, ``path`` stays for the next start to try again."""
    rescues = [rescue_homes(folder) for folder in _pane_dirs(path)]
    failed = [problem for rescue in rescues for problem in rescue.failed]
    if failed:
        logger.warning("%s kept: the CLI state in it could not all be moved to the user's home: %s", path, failed)
        return rescues
    for _attempt in range(3):  # a process of the pane that is still ending may write into it meanwhile
        shutil.rmtree(path, ignore_errors=True)
        if not os.path.lexists(path):
            break
    else:
        logger.warning("%s could not be removed completely", path)
    return rescues


def _pane_dirs(path: Path) -> Iterator[Path]:
    """The dirs under ``path`` (itself included) that hold a manifest; symlinks are not followed."""
    if not path.is_dir() or path.is_symlink():
        return
    for folder, dirs, names in os.walk(path):
        if MANIFEST in names:
            dirs.clear()  # a pane's dir holds no other pane
            yield Path(folder)


class _Rescuer:
    """Moves one home's leftovers into the user's folder."""

    def __init__(self, runtime_dir: Path, linked: _Linked, rescue: Rescue, *, restart: bool = False) -> None:
        self.home = linked.home
        self.folder = runtime_dir / PurePosixPath(self.home.folder)
        self.pane_paths = linked.pane_paths
        self.written = linked.written
        self.polter = {PurePosixPath(name) for name in linked.polter_files}
        self.kept = {PurePosixPath(name) for name in self.home.kept()}
        self.fingerprints = linked.fingerprints
        self.rescue = rescue
        self.restart = restart
        self.stamp = time.strftime("%Y%m%dT%H%M%S")
        self.inner = {parent for path in self.polter | self.kept for parent in path.parents if parent.parts}
        self.inner |= {folder for pattern in self.home.shared for folder in _literal_folders(pattern)}
        """Folders that hold Polter's files, links or shared names: gone through entry by entry, not moved whole."""

    def run(self) -> None:
        if self.folder.is_dir() and not self.folder.is_symlink():
            self._walk(self.folder, PurePosixPath())
        for config in self.home.edited_configs:
            self._carry_settings(config.file, config.polter_keys)
        if not self.restart:  # the pane's folder goes: what names a file in it must name the user's
            for database in self.home.sqlite_path_records:
                self._repoint(self.home.user_folder / PurePosixPath(database))

    def _carry_settings(self, name: str, polter_keys: tuple[str, ...]) -> None:
        """What the CLI added to Polter's copy of its config goes into the user's (where they have nothing)."""
        pane_file, user_file = self.folder / PurePosixPath(name), self.home.user_folder / PurePosixPath(name)
        written = self.written.get(name)
        if written is None or not pane_file.is_file() or pane_file.read_text(encoding="utf-8") == written:
            return
        try:
            added = carry_config_edits(written, pane_file, user_file, polter_keys)
        except (OSError, ValueError) as exc:
            self.rescue.settings_left.append(f"{user_file}: {exc}")
            return
        self.rescue.settings_added += [f"{user_file}: {setting}" for setting in added]

    def _repoint(self, database: Path) -> None:
        """Every text value of ``database`` naming a path under the pane's folder names it under the user's."""
        if not database.is_file():
            return
        import sqlite3  # lazy: only a CLI whose database is repointed needs it (the host's memory)

        user = str(self.home.user_folder)
        try:
            with contextlib.closing(sqlite3.connect(database, timeout=30)) as connection, connection:
                # The pane could write this database: a function or virtual table its schema names (in a trigger or
                # a view) may not run in the host's connection; a trigger can then change only this database.
                connection.execute("PRAGMA trusted_schema = OFF")
                tables = [row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
                for table in tables:
                    columns = [row[1] for row in connection.execute(f'PRAGMA table_info("{_quoted(table)}")')]
                    for column, prefix in ((c, p) for c in columns for p in self.pane_paths):
                        name = f'"{_quoted(column)}"'
                        connection.execute(
                            f'UPDATE "{_quoted(table)}" SET {name} = :user || substr({name}, :cut) '
                            f"WHERE typeof({name}) = 'text' AND substr({name}, 1, :length) = :prefix",
                            {"user": user, "cut": len(prefix) + 1, "length": len(prefix) + 1, "prefix": prefix + "/"},
                        )
        except sqlite3.Error as exc:
            self.rescue.failed.append(f"{database}: the paths it records could not be repointed ({exc})")

    def _scratch(self, relative: PurePosixPath) -> bool:
        return any(fnmatch.fnmatchcase(str(relative), pattern) for pattern in self.home.scratch)

    def _walk(self, folder: Path, relative: PurePosixPath) -> None:
        for child in sorted(folder.iterdir()):
            name = relative / child.name
            if name in self.polter or (name in self.kept and child.is_symlink()) or self._scratch(name):
                continue
            if name in self.inner and child.is_dir() and not child.is_symlink():
                self._walk(child, name)
                continue
            if self.restart and name not in self.kept:
                continue
            try:
                self._merge(child, self.home.user_folder / name, name)
            except OSError as exc:
                self.rescue.failed.append(f"{child} → {self.home.user_folder / name}: {exc}")

    def _merge(self, source: Path, target: Path, relative: PurePosixPath) -> None:
        if self.home.is_shared(str(relative)):
            self.rescue.dropped.append(source)
            return
        if not os.path.lexists(target):
            _private_dir(target.parent)
            shutil.move(source, target)
            self.rescue.moved.append(target)
            return
        if source.is_dir() and not source.is_symlink():
            if target.is_dir():
                for child in sorted(source.iterdir()):
                    name = relative / child.name
                    if not self._scratch(name):
                        self._merge(child, target / child.name, name)
                return
        elif source.is_file() and not source.is_symlink() and target.is_file():
            if filecmp.cmp(source, target, shallow=False):
                return  # the user has it already; the copy goes with the runtime dir
            known = self.fingerprints.get(str(relative), "unknown")
            if relative in self.kept and known == _fingerprint(target):
                _replace(source, target)  # the CLI's newer version of the user's file, which nobody else touched
                self.rescue.replaced.append(target)
                return
        beside = _beside(target, self.rescue.pane, self.stamp)
        shutil.move(source, beside)
        self.rescue.kept_beside.append(beside)


def _literal_folders(pattern: str) -> list[PurePosixPath]:
    """The folders a ``shared`` pattern names before its first glob (``skills/*`` → ``skills``)."""
    parts = PurePosixPath(pattern.rstrip("/")).parts
    literal = list(itertools.takewhile(lambda part: not any(char in part for char in "*?["), parts[:-1]))
    return [PurePosixPath(*literal[:count]) for count in range(1, len(literal) + 1)]


def _quoted(name: str) -> str:
    return name.replace('"', '""')


def _replace(source: Path, target: Path) -> None:
    """``target`` becomes ``source`` atomically (a rename on one file system, a copy and a rename across)."""
    try:
        os.replace(source, target.resolve())
    except OSError:
        handle, temp = tempfile.mkstemp(dir=target.resolve().parent, prefix=f".{target.name}.")
        os.close(handle)
        try:
            shutil.copy2(source, temp)
            os.replace(temp, target.resolve())
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
        with contextlib.suppress(OSError):
            source.unlink()


def _beside(target: Path, pane: str, stamp: str) -> Path:
    """A free name next to ``target`` that says where the file came from: ``<name>.polter-<pane>-<time>``."""
    candidate = target.with_name(f"{target.name}.polter-{pane}-{stamp}")
    number = 1
    while os.path.lexists(candidate):
        number += 1
        candidate = target.with_name(f"{target.name}.polter-{pane}-{stamp}-{number}")
    return candidate
