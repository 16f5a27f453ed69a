"""An agent pane's launch inside its sandbox: what the session knows of the pane, for :func:`confine`."""

from __future__ import annotations

import contextlib
import os
import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from polter.adapters import PaneToPrepare, PreparedPane, StateHome
from polter.paths import config_dir, runtime_dir, state_dir
from polter.protocol import BuiltinsPolicy
from polter.sandbox.confine import ModelApi, PaneFacts, confine
from polter.session.agents import Agent
from polter.terminal.launch import LaunchSpec

__all__ = ["PaneSockets", "confined_launch", "state_paths", "user_configs"]


@dataclass(frozen=True)
class PaneSockets:
    """Where a session keeps the sockets its panes reach: in the runtime dir (short paths, as a Unix socket's must
    be; out of every pane's view), each in a folder of its own, which is what a sandbox mounts."""

    root: Path

    @classmethod
    def of_this_session(cls) -> PaneSockets:
        return cls(runtime_dir() / "panes" / str(os.getpid()))

    @property
    def gateway(self) -> Path:
        """The gateway's panes socket (it never serves the control API); every pane's sandbox mounts its folder."""
        return self.root / "gateway" / "gateway.sock"

    def egress(self, pane_id: str) -> Path:
        """A pane's own socket of the egress proxy; only that pane's sandbox mounts its folder."""
        return self.root / "egress" / pane_id / "egress.sock"

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def in_place(path: Path) -> Path:
    """A state path a CLI keeps where it always does, made to exist so that the sandbox can hold it writable: a
    name without a suffix is a folder, created; a file as :func:`kept_entry` makes one."""
    if not path.exists():
        with contextlib.suppress(OSError):
            if path.suffix:
                if path.suffix != ".json":
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.touch(mode=0o600)
            else:
                path.mkdir(parents=True, exist_ok=True)
    return path


def kept_entry(home: StateHome, entry: str, is_folder: bool) -> Path:
    """A kept entry of the CLI's state in the user's folder, made to exist so that the sandbox can hold it
    writable alone: a missing file is created empty where the CLI would create it (an empty file reads as none to
    the CLIs' logs, histories, locks and SQLite databases; not a JSON file, which an empty one would break: a
    missing one stays missing, and a pane cannot create it)."""
    path = home.user_folder / entry
    if not is_folder and not path.exists() and path.suffix != ".json":
        with contextlib.suppress(OSError):
            path.touch(mode=0o600)
    return path


def state_paths(runtime_dir: Path, prepared: PreparedPane) -> tuple[Path, ...]:
    """What the CLI may write of its own state in its sandbox: its folders in the pane's runtime dir, each entry it
    keeps in the user's folder, and the folders it keeps in place."""
    paths = [*(runtime_dir / home.folder for home in prepared.homes)]
    paths += [in_place(path) for path in prepared.state_folders]
    for home in prepared.homes:
        paths += [kept_entry(home, entry, is_folder) for entry, is_folder in home.kept().items()]
    return tuple(dict.fromkeys(paths))


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
    (servers' credentials) and the sessions' sockets."""
    return tuple(dict.fromkeys([session_state, state_dir(), config_dir(), runtime_dir()]))


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
        polter_files=tuple(root / name for name in prepared.files),
        state_paths=state_paths(root, prepared),
        protected=user_configs(prepared),
        hidden=hidden_folders(session_state),
        gateway_url=pane.gateway_url,
        gateway_socket_dir=sockets.gateway.parent,
        egress_socket_dir=sockets.egress(agent.id).parent,
        model=model,
        home=pane.user_home,
    )
    return confine(spec, facts)
