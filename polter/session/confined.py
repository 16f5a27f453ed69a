"""An agent pane's launch inside its sandbox: what the session knows of the pane, for :func:`confine`."""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from polter.adapters import PaneToPrepare, PreparedPane
from polter.paths import config_dir, runtime_dir, state_dir
from polter.protocol import BuiltinsPolicy
from polter.sandbox.confine import ModelApi, PaneFacts, confine
from polter.session.agents import AgentPane
from polter.terminal.launch import LaunchSpec

__all__ = ["PaneSockets", "confined_launch"]


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


def hidden_folders(session_state: Path) -> tuple[Path, ...]:
    """What no pane may see: Polter's state (admin credential, audit, other panes' runtime dirs), its config
    (servers' credentials) and the sessions' sockets."""
    return tuple(dict.fromkeys([session_state, state_dir(), config_dir(), runtime_dir()]))


def confined_launch(
    agent: AgentPane,
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
    state_folders = tuple((root / home.folder, home.user_folder) for home in prepared.homes)
    state_folders += tuple((folder, folder) for folder in prepared.state_folders)  # kept where they are
    facts = PaneFacts(
        project=pane.cwd,
        runtime_dir=root,
        policy=policy,
        agent=agent.adapter.info.agent or bool(agent.setup.command),
        polter_files=tuple(root / name for name in prepared.files),
        state_folders=state_folders,
        hidden=hidden_folders(session_state),
        gateway_url=pane.gateway_url,
        gateway_socket_dir=sockets.gateway.parent,
        egress_socket_dir=sockets.egress(agent.id).parent,
        model=model,
        home=pane.user_home,
    )
    return confine(spec, facts)
