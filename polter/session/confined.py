"""An agent pane's launch inside its sandbox: what the session knows of the pane, for :func:`confine`."""

from __future__ import annotations

from pathlib import Path

from polter.adapters import PaneToPrepare, PreparedPane
from polter.paths import config_dir, runtime_dir, state_dir
from polter.protocol import BuiltinsPolicy
from polter.sandbox.confine import ModelApi, PaneFacts, confine
from polter.session.agents import AgentPane
from polter.terminal.launch import LaunchSpec

__all__ = ["EGRESS_SOCKET", "GATEWAY_SOCKET", "confined_launch", "egress_socket_dir"]

GATEWAY_SOCKET = Path("gateway") / "gateway.sock"
"""The gateway's panes socket, under the session's run dir (its folder is what every sandbox mounts)."""


EGRESS_SOCKET = "egress.sock"
"""A pane's socket of the egress proxy, in its own folder (what the pane's sandbox mounts)."""


def egress_socket_dir(run_dir: Path, pane_id: str) -> Path:
    """The folder of a pane's own egress-proxy socket (mounted into that pane's sandbox alone)."""
    return run_dir / "egress" / pane_id


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
    run_dir: Path,
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
        gateway_socket_dir=(run_dir / GATEWAY_SOCKET).parent,
        egress_socket_dir=egress_socket_dir(run_dir, agent.id),
        model=model,
        home=pane.user_home,
    )
    return confine(spec, facts)
