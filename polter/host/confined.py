"""An agent pane's launch inside its sandbox: what the session knows of the pane, for :func:`confine`."""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Final

from polter.adapters import Adapter, PaneToPrepare, PreparedPane
from polter.adapters.plugins import discover
from polter.errors import ConfigError
from polter.host.agents import Agent
from polter.paths import config_dir, lasting_runtime_dir, runtime_dir, state_dir
from polter.processes import process_exists
from polter.protocol import BuiltinsPolicy
from polter.sandbox.confine import CliFiles, ModelApi, PaneFacts, confine
from polter.terminal.launch import LaunchSpec

logger = logging.getLogger(__name__)

__all__ = ["PaneSockets", "cli_files", "confined_launch", "every_clis_config", "state_paths", "user_configs"]


@dataclass(frozen=True)
class PaneSockets:
    """Where a session keeps the sockets its panes reach: in the lasting runtime dir (short paths, as a Unix socket's
    must be; out of every pane's view; not removed by a logout under a running sandbox, see
    :func:`~polter.paths.lasting_runtime_dir`), each in a folder of its own, which is what a sandbox mounts."""

    root: Path

    @classmethod
    def of_this_session(cls) -> PaneSockets:
        try:
            folder = lasting_runtime_dir()
        except ConfigError as exc:  # (another user's /tmp/polter-UID, say: the session still starts)
            folder = runtime_dir()
            logger.warning("the panes' sockets are in %s, which a logout may remove under them: %s", folder, exc)
        _remove_left_behind(folder / "panes")
        return cls(folder / "panes" / str(os.getpid()))

    @property
    def gateway(self) -> Path:
        """The gateway's panes socket (it never serves the control API); every pane's sandbox mounts its folder."""
        return self.root / "gateway" / "gateway.sock"

    def egress(self, pane_id: str) -> Path:
        """A pane's own socket of the egress proxy; only that pane's sandbox mounts its folder."""
        return self.root / "egress" / pane_id / "egress.sock"

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def _remove_left_behind(panes: Path) -> None:
    """The sockets' folders of sessions whose host is gone without removing them (SIGKILL, a crash): each is named
    by its host's PID, which no process has any more."""
    for folder in panes.iterdir() if panes.is_dir() else ():
        if folder.name.isdigit() and not process_exists(int(folder.name)):
            shutil.rmtree(folder, ignore_errors=True)


def in_place(path: Path) -> Path:
    """A state path a CLI keeps where it always does, made to exist so that the sandbox can hold it writable: a
    name without a suffix is a folder, created; a missing file is created empty, but a JSON file (an empty one would
    not parse)."""
    if not path.exists():
        with contextlib.suppress(OSError):
            if path.suffix:
                if path.suffix != ".json":
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.touch(mode=0o600)
            else:
                path.mkdir(parents=True, exist_ok=True)
    return path


SQLITE_SUFFIXES: Final = (".sqlite", ".sqlite3", ".db")
SQLITE_COMPANIONS: Final = ("-wal", "-shm")
"""The files SQLite keeps beside a database in WAL mode."""


def sqlite_in_place(path: Path) -> list[Path]:
    """A kept SQLite database and its WAL companions, made to exist so that the sandbox can hold them writable in a
    folder it holds read-only: SQLite creates and deletes its journal beside the database (where a link to it
    leads), which a read-only folder refuses ("unable to open database file"). A missing (or empty) database is
    created empty in WAL mode, which writes only to those companions; one the CLI made is in WAL mode already."""
    if not path.exists() or path.stat().st_size == 0:  # (an empty file is a database with no header yet)
        import sqlite3  # lazy: only a pane whose CLI keeps a database in place needs it (the host's memory)

        with contextlib.suppress(OSError, sqlite3.Error):
            path.parent.mkdir(parents=True, exist_ok=True)
            with contextlib.closing(sqlite3.connect(path)) as database:
                database.execute("PRAGMA journal_mode=WAL")
            path.chmod(0o600)
    return [path, *(in_place(Path(f"{path}{suffix}")) for suffix in SQLITE_COMPANIONS)]


def state_paths(runtime_dir: Path, prepared: PreparedPane) -> tuple[Path, ...]:
    """What the CLI may write of its own state in its sandbox: its folders in the pane's runtime dir, each entry it
    keeps in the user's folder (a SQLite database with its companions), and the folders it keeps in place."""
    paths = [*(runtime_dir / home.folder for home in prepared.homes)]
    paths += [in_place(path) for path in prepared.state_folders]
    for home in prepared.homes:
        for entry in home.state():
            if entry in home.copied:
                continue
            path = home.user_folder / entry  # (a folder made to exist by the link)
            paths += sqlite_in_place(path) if path.suffix in SQLITE_SUFFIXES else [path]
    return tuple(dict.fromkeys(paths))


def private_copy(runtime_dir: Path, original: Path) -> tuple[Path, Path]:
    """The pane's own copy of ``original`` in its runtime dir (fresh at every start), as (copy, original). A missing
    original is created first (``{}`` for a JSON file), so that the sandbox has a file to lay the copy over."""
    if not original.exists():
        with contextlib.suppress(OSError):
            original.parent.mkdir(parents=True, exist_ok=True)
            with open(original, "x", encoding="utf-8") as created:
                created.write("{}\n" if original.suffix == ".json" else "")
            original.chmod(0o600)
    folder = runtime_dir / "private"
    folder.mkdir(mode=0o700, exist_ok=True)
    copy = folder / str(original).strip("/").replace("/", "%")
    with contextlib.suppress(OSError):
        shutil.copyfile(original, copy)
        copy.chmod(0o600)
    return copy, original


def cli_files(runtime_dir: Path, prepared: PreparedPane, own: Iterable[Path], others: Iterable[Path]) -> CliFiles:
    """What the pane's sandbox makes of the CLI's files: Polter's read-only; its state writable; what the human's
    own CLIs run (``own``: this CLI's ``Adapter.human_config``, ``others``: every other CLI's) read-only, this CLI's
    folders but for its state in them; its private files copied."""
    private = set(prepared.private_files)
    for folder in prepared.made_folders:
        in_place(folder)  # (it only has to exist: the sandbox holds it read-only)
    held = [*(home.user_folder for home in prepared.homes), *(path for path in own if path.is_dir())]
    protected = [*user_configs(prepared), *(path for path in own if path not in held and path not in private)]
    return CliFiles(
        polter_files=tuple(runtime_dir / name for name in prepared.files),
        state=state_paths(runtime_dir, prepared),
        held=tuple(dict.fromkeys(held)),
        private_copies=tuple(private_copy(runtime_dir, path) for path in prepared.private_files),
        protected=tuple(dict.fromkeys([*protected, *(path for path in others if path not in held)])),
    )


@functools.cache
def _every_adapter() -> tuple[Adapter, ...]:
    """The CLIs Polter knows here (bundled, installed, the user's plugins), found once per process."""
    return tuple(loaded.adapter for loaded in discover())


def every_clis_config(home: Path, but: Adapter) -> tuple[Path, ...]:
    """What the human's own CLIs run or trust, but ``but``'s: every known adapter's ``human_config``."""
    found: list[Path] = []
    for adapter in _every_adapter():
        if adapter.name != but.name:
            try:
                found += adapter.human_config(home)
            except Exception:  # a plugin's bug does not stop the pane (this is a deny-list); it is told
                logger.exception("the %s adapter's human_config failed: its files are not held in panes", adapter.name)
    return tuple(found)


def user_configs(prepared: PreparedPane) -> tuple[Path, ...]:
    """The user's own versions of the config Polter writes for the CLI in its home (``~/.claude/settings.json``
    beside the pane's): read by the human's own sessions outside Polter, so no pane may write them."""
    found = []
    for home in prepared.homes:
        folder = PurePosixPath(home.folder)
        for name in prepared.files:
            path = PurePosixPath(name)
            if folder in path.parents:
                found.append(home.user_folder / path.relative_to(folder))
    return tuple(found)


def hidden_folders(session_state: Path) -> tuple[Path, ...]:
    """What no pane may see: Polter's state (admin credential, audit, other panes' runtime dirs), its config
    (servers' credentials) and the sessions' sockets (the panes' too: a sandbox mounts only its own)."""
    folders = [session_state, state_dir(), config_dir(), runtime_dir()]
    with contextlib.suppress(ConfigError):  # (not usable: the panes' sockets are in the runtime dir)
        folders.append(lasting_runtime_dir())
    return tuple(dict.fromkeys(folders))


def confined_launch(
    agent: Agent,
    pane: PaneToPrepare,
    prepared: PreparedPane,
    spec: LaunchSpec,
    policy: BuiltinsPolicy | None,
    *,
    model: ModelApi,
    sockets: PaneSockets,
    session_state: Path,
) -> LaunchSpec:
    """``spec`` (the adapter's launch, or the pane's own ``command``) inside the pane's sandbox."""
    root = pane.runtime_dir
    facts = PaneFacts(
        project=pane.cwd,
        runtime_dir=root,
        policy=policy,
        agent=agent.adapter.info.agent or bool(agent.setup.command),
        cli=cli_files(
            root,
            prepared,
            agent.adapter.human_config(pane.user_home),
            every_clis_config(pane.user_home, agent.adapter),
        ),
        hidden=hidden_folders(session_state),
        gateway_url=pane.gateway_url,
        gateway_socket_dir=sockets.gateway.parent,
        egress_socket_dir=sockets.egress(agent.id).parent,
        model=model,
        home=pane.user_home,
    )
    return confine(spec, facts)
