"""What an agent pane runs, prepared afresh at each start: its adapter's launch under the pane's current role,
the adapter's files in the pane's private runtime dir, and the kernel sandbox around it all with its network.

The adapter is told about the pane (:class:`~polter.adapters.PaneToPrepare`: the gateway's URL, the servers,
the token, what the role decides for each skill and for the CLI's own tools) and returns the launch and the
files; those go into the runtime dir (files of an earlier launch that this one does not write go), and the
launch is confined (:func:`~polter.host.confined.confined_launch`) with its socket of the egress proxy
listening before the pane starts.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

from pydantic import SecretStr

from polter.adapters import PaneToPrepare, PreparedPane, TestMode
from polter.adapters.plugins import write_pane_files
from polter.errors import EgressError
from polter.gateway.client import GatewayClient
from polter.host.agents import Agent, denied_skills
from polter.host.confined import PaneSockets, confined_launch
from polter.protocol import BuiltinsPolicy, Decision
from polter.sandbox.confine import ModelApi, model_api
from polter.sandbox.egress_supervisor import EgressSupervisor
from polter.terminal.launch import LaunchSpec

__all__ = ["AgentLauncher"]

logger = logging.getLogger(__name__)


class AgentLauncher:
    """Prepares agent panes' launches. ``client()``, ``gateway_url()`` and ``servers()`` are the gateway's of the
    moment (it may have restarted since the pane opened)."""

    def __init__(
        self,
        *,
        client: Callable[[], GatewayClient],
        gateway_url: Callable[[], str | None],
        servers: Callable[[], list[str]],
        egress: EgressSupervisor,
        sockets: PaneSockets,
        state_dir: Path,
        test_mode: TestMode | None,
    ) -> None:
        self._client = client
        self._gateway_url = gateway_url
        self._servers = servers
        self._egress = egress
        self._sockets = sockets
        self._state_dir = state_dir
        self._test_mode = test_mode

    async def prepare(self, agent: Agent, *, resume: bool | None = None) -> LaunchSpec:
        """What to run for ``agent`` now (``resume``: continue the CLI's conversation; default: as set up)."""
        setup = agent.setup
        cwd = (setup.cwd or Path.cwd()).resolve()
        # An agent CLI starts once the servers run (or the gateway gave up waiting for them): it lists their tools
        # as it starts, and a CLI that does not wait for a server before its first turn (Codex) would go without
        # them. A plain program (a shell) starts at once: its launch needs the role's decisions on skills and
        # builtins alone, and a call it makes waits for a server still starting.
        capabilities = await self._client().capabilities(agent.id, wait=agent.adapter.info.agent)
        decisions = {skill.name: skill.decision for skill in capabilities.skills}
        pane = self._pane(
            agent, cwd, decisions, capabilities.builtins, resume=setup.resume if resume is None else resume
        )
        prepared: PreparedPane = await asyncio.to_thread(_write, agent, pane)
        agent.warnings = prepared.warnings
        agent.launched_role = agent.role
        agent.builtins_at_launch = capabilities.builtins
        agent.layer_outdated = False
        agent.hidden_at_launch = agent.hidden_now = denied_skills(decisions)
        spec = prepared.launch
        if setup.command:
            spec = spec.model_copy(update={"argv": tuple(setup.command)})
        spec = spec.model_copy(update={"env": _with_polter_on_path(spec.env), "title": setup.title or spec.title})
        model = model_api(agent.adapter.model_endpoints(pane, spec.environment()))
        if pane.confined:
            await self._give_network(agent, pane, model)
        return await asyncio.to_thread(
            confined_launch,
            agent,
            pane,
            prepared,
            spec,
            capabilities.builtins,
            model=model,
            sockets=self._sockets,
            session_state=self._state_dir,
        )

    def layer_differs(self, agent: Agent, builtins: BuiltinsPolicy | None) -> bool:
        """Whether the CLI's own permission layer (set from the role when it started) would be set otherwise
        under ``builtins``: the adapter prepares the pane both ways (nothing is written) and the two differ."""
        cwd = (agent.setup.cwd or Path.cwd()).resolve()
        launched = agent.adapter.prepare(self._pane(agent, cwd, {}, agent.builtins_at_launch, resume=False))
        now = agent.adapter.prepare(self._pane(agent, cwd, {}, builtins, resume=False))
        return launched.files != now.files or launched.launch != now.launch

    async def _give_network(self, agent: Agent, pane: PaneToPrepare, model: ModelApi) -> None:
        """The pane's socket of the egress proxy, listening before the pane starts (or the pane starts without a
        network, and the notice says why)."""
        socket = self._sockets.egress(agent.id)
        await asyncio.to_thread(socket.parent.mkdir, 0o700, True, True)
        self._egress.add_pane(
            agent.id,
            socket=str(socket),
            token=agent.token,
            gateway=pane.gateway_url,
            project=str(pane.cwd),
            role=agent.role,
            model_hosts=model.hosts,
            loopback_ports=model.loopback_ports,
        )
        try:
            await self._egress.pane_ready(agent.id)
        except EgressError as exc:
            logger.warning("pane %s starts without a network: %s", agent.id, exc)

    def _pane(
        self,
        agent: Agent,
        cwd: Path,
        decisions: dict[str, Decision],
        builtins: BuiltinsPolicy | None,
        *,
        resume: bool,
    ) -> PaneToPrepare:
        """What the pane's adapter is told about the pane."""
        return PaneToPrepare(
            pane_id=agent.id,
            gateway_url=self._gateway_url() or "",
            servers=tuple(self._servers()),
            runtime_dir=agent.runtime.path,
            cwd=cwd,
            token=SecretStr(agent.token),
            skill_decision=lambda name: decisions.get(name, "allow"),
            resume=resume,
            builtins=builtins,
            test_mode=self._test_mode,
            confined=agent.confined(builtins),
        )


def _write(agent: Agent, pane: PaneToPrepare) -> PreparedPane:
    """The adapter's files into the runtime dir. Files of an earlier launch that this one does not
    write go (a skill link the new role denies); what the CLI itself keeps there stays."""
    prepared = agent.adapter.prepare(pane)
    root = agent.runtime.create()
    for stale in agent.files - prepared.files.keys():
        target = root / stale
        if target.is_dir() and not target.is_symlink():
            shutil.rmtree(target, ignore_errors=True)
        else:
            target.unlink(missing_ok=True)
    write_pane_files(root, prepared.files, prepared.homes)
    agent.files = set(prepared.files)
    return prepared


def _with_polter_on_path(env: dict[str, str]) -> dict[str, str]:
    """``polter tools`` in a pane must be this Polter, even when it was started by its full path."""
    here = Path(sys.executable).parent
    if not (here / "polter").exists():
        return env
    path = env.get("PATH", os.environ.get("PATH", ""))
    if path.split(os.pathsep)[:1] == [str(here)]:
        return env
    return {**env, "PATH": os.pathsep.join([str(here), *filter(None, path.split(os.pathsep))])}
