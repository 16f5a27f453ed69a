"""The panes' side of the gateway: registration, adapter launch, roles, asks, audit. No widgets.

A :class:`Workspace` owns the supervised gateway (:mod:`~polter.host.supervisor`) and one
:class:`Agent` per pane. Opening a pane registers it with the gateway under a token the
workspace chose (so a restarted gateway can take the same one back), lets the pane's adapter
prepare the CLI's launch, and writes the adapter's files into the pane's private runtime dir
(0700, removed when the pane is closed). The session host asks the workspace to act (switch a role,
pass on a typed line, answer an ask) and hears back only through the events it subscribed to
(:data:`WorkspaceEvent`: the session protocol's own models where windows are told the same thing): the
workspace knows nothing of who listens.

The gateway serves a servers file the workspace writes into its run dir (:mod:`~polter.host.servers_file`):
the user's servers file (followed while the session runs) plus the session's own servers (the config
file's, the backends'). A broken user's file changes nothing and is reported with its problems.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import secrets
from collections import deque
from collections.abc import Callable, Iterable
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from polter.adapters import TestMode
from polter.adapters.plugins import RuntimeDir
from polter.errors import EgressError, GatewayError
from polter.gateway.client import GatewayClient
from polter.gateway.models import (
    AskAnswer,
    AskInfo,
    AuditRow,
    Capabilities,
    ElicitationInfo,
    GatewayEvent,
    PaneInfo,
    PaneStateReport,
    Phase,
    RolesStatus,
    ServersReload,
    TeamReply,
    TeamRequest,
)
from polter.host.agent_launch import AgentLauncher
from polter.host.agents import Agent, denied_skills
from polter.host.asks import Asks, unless_over
from polter.host.confined import PaneSockets
from polter.host.forms import Forms
from polter.host.human_lines import HumanLines
from polter.host.servers_file import ServersFile
from polter.host.supervisor import GatewayProcess, GatewaySupervisor
from polter.launch.planning import PanePlan
from polter.paths import state_dir as default_state_dir
from polter.processes import process_exists
from polter.protocol import DEFAULT_ROLE, StateReport
from polter.sandbox.egress_supervisor import EgressSupervisor
from polter.servers import ServerConfig
from polter.tasks import BackgroundTasks
from polter.terminal.launch import LaunchSpec
from polter.wire import messages as wire

__all__ = ["AUDIT_KEPT", "TeamRequested", "Workspace"]

logger = logging.getLogger(__name__)

AUDIT_KEPT: Final = 5000
"""Audit rows kept in memory for the audit screen (the gateway's SQLite log keeps everything)."""


@dataclass(frozen=True)
class NetworkChanged:
    """The egress proxy, the panes' only way out, died (``up`` false: no pane has a network until it is back;
    a restart follows) or is back."""

    up: bool
    reason: str


@dataclass(frozen=True)
class AgentChanged:
    """An agent's role, phase, pending asks or restart-needed changed."""

    agent: Agent


@dataclass(frozen=True)
class StateReported:
    """The pane's CLI said what its agent does, through its own hooks (a turn began, a dialog opened, it ended)."""

    agent: Agent
    report: StateReport


@dataclass(frozen=True)
class TeamRequested:
    """A team tool call the gateway decided (docs/team.md), for the host to carry out and answer."""

    request: TeamRequest


WorkspaceEvent = (
    wire.GatewayChanged
    | wire.AskEvent
    | wire.AskClosedEvent
    | wire.ElicitationEvent
    | wire.ElicitationClosedEvent
    | wire.AuditEvent
    | wire.RolesEvent
    | wire.ServersEvent
    | NetworkChanged
    | AgentChanged
    | StateReported
    | TeamRequested
)
"""What the workspace tells its listeners: the events windows are told as they are (the session protocol's
models), and what only the host acts on (an agent changed, its CLI reported its state, the panes' network)."""
Listener = Callable[[WorkspaceEvent], None]


class Workspace:
    """The session's agent panes and their gateway. Create, ``await start()``, then open panes.

    Its parts: the gateway's :class:`~polter.host.supervisor.GatewaySupervisor` and the egress proxy's
    supervisor, the :class:`~polter.host.servers_file.ServersFile` the gateway serves, the pending
    :class:`~polter.host.asks.Asks` and servers' :class:`~polter.host.forms.Forms`, the human's typed
    :class:`~polter.host.human_lines.HumanLines` on their way to the gateway, and the
    :class:`~polter.host.agent_launch.AgentLauncher` that prepares each agent's launch. What the workspace
    keeps itself: the agents by pane id, and the gateway's roles, servers and audit rows as its events report
    them."""

    def __init__(
        self,
        *,
        servers: dict[str, ServerConfig] | None = None,
        servers_file: Path | None = None,
        ask_timeout: float | None = None,
        state_dir: Path | None = None,
        roles_dirs: Iterable[Path] = (),
        backends: Iterable[Callable[[], AbstractAsyncContextManager[dict[str, ServerConfig]]]] = (),
        test_mode: TestMode | None = None,
        egress_test_hosts: dict[str, str] | None = None,
    ) -> None:
        self.state_dir = state_dir or default_state_dir()
        self.backends = list(backends)
        self._stack = contextlib.AsyncExitStack()
        self._tasks = BackgroundTasks(logger)
        self.run_dir = self.state_dir / "run" / str(os.getpid())
        self.sockets = PaneSockets.of_this_session()
        self.servers_file = ServersFile(
            self.run_dir,
            servers or {},
            servers_file,
            on_problems=lambda report: self._broadcast(wire.ServersEvent(report=report)),
        )
        self.supervisor = GatewaySupervisor(
            state_dir=self.state_dir,
            servers_file=self.servers_file.path,
            roles_dirs=list(roles_dirs),
            ask_timeout=ask_timeout,
            pane_socket=self.sockets.gateway,
            on_up=self._gateway_up,
            on_event=self._on_event,
            on_down=self._gateway_down,
        )
        self.egress = EgressSupervisor(on_down=self._egress_down, on_up=self._egress_up, test_hosts=egress_test_hosts)
        """The panes' only way out of their sandboxes' networks (decides by each role's web rules). Tests only:
        ``egress_test_hosts`` maps host names to a loopback server (:attr:`Launch.egress_test_hosts`)."""
        self.asks = Asks(
            client=lambda: self.client,
            tasks=self._tasks,
            on_asked=lambda ask: self._broadcast(wire.AskEvent(ask=ask)),
            on_over=lambda ask: self._broadcast(wire.AskClosedEvent(ask=ask)),
        )
        self.forms = Forms(
            client=lambda: self.client,
            on_asked=lambda info: self._broadcast(wire.ElicitationEvent(elicitation=info)),
            on_over=lambda info: self._broadcast(wire.ElicitationClosedEvent(elicitation=info)),
        )
        self.lines = HumanLines(client=lambda: self.client, tasks=self._tasks)
        self.launcher = AgentLauncher(
            client=lambda: self.client,
            gateway_url=lambda: self._url,
            servers=lambda: self.server_names,
            egress=self.egress,
            sockets=self.sockets,
            state_dir=self.state_dir,
            test_mode=test_mode,
        )
        self.panes: dict[str, Agent] = {}
        self.roles = RolesStatus(names=[], problems=[])
        self.server_names: list[str] = []
        self.audit_rows: deque[AuditRow] = deque(maxlen=AUDIT_KEPT)
        self._listeners: list[Listener] = []
        self._numbers = 0
        self._url: str | None = None

    # -- messages --------------------------------------------------------------------------------

    def subscribe(self, listener: Listener) -> None:
        """Call ``listener`` with this workspace's events."""
        if listener not in self._listeners:
            self._listeners.append(listener)

    def unsubscribe(self, listener: Listener) -> None:
        with contextlib.suppress(ValueError):
            self._listeners.remove(listener)

    def _broadcast(self, event: WorkspaceEvent) -> None:
        for listener in list(self._listeners):
            listener(event)

    # -- lifecycle -------------------------------------------------------------------------------

    @property
    def client(self) -> GatewayClient:
        return self.supervisor.client

    @property
    def url(self) -> str | None:
        return self.supervisor.url

    async def start(self) -> None:
        """Start the backends and the gateway (raises :class:`GatewayError` saying why it could not)."""
        for backend in self.backends:
            self.servers_file.servers |= await self._stack.enter_async_context(backend())
        await self.servers_file.read_user_file()
        await asyncio.to_thread(self._prepare_run_dir)
        egress = asyncio.create_task(self._start_egress())  # it needs nothing of the gateway's: both start at once
        try:
            await self.supervisor.start()
        finally:
            await egress  # (on a failed start too: :meth:`aclose` then stops a proxy that is fully up)
        if self.servers_file.user_file is not None:
            self._tasks.run(self.servers_file.follow(lambda: self.server_names), "following the servers file")

    async def _start_egress(self) -> None:
        try:
            await self.egress.start()
        except EgressError as exc:  # the panes start without a network (closed) and are told why
            self._egress_down(str(exc))

    def _prepare_run_dir(self) -> None:
        """This session's private dir (pane runtime dirs, the servers file); stale ones of dead sessions go."""
        parent = self.run_dir.parent
        parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        for other in parent.iterdir():
            if other.name.isdigit() and other != self.run_dir and not process_exists(int(other.name)):
                RuntimeDir(other).remove()  # the CLIs' state in it goes to the user's home first
        RuntimeDir(self.run_dir).create()
        self.servers_file.write()

    async def aclose(self) -> None:
        """Close every pane's registration and runtime dir, then stop the gateway."""
        for agent in list(self.panes.values()):
            agent.closed = True
            agent.runtime.remove()
        self.panes.clear()
        self._tasks.cancel()
        await self.egress.aclose()
        await self.supervisor.aclose()
        self.sockets.remove()
        await self._stack.aclose()
        RuntimeDir(self.run_dir).remove()  # kept if a pane's CLI state could not all be moved home

    async def _gateway_up(self, gateway: GatewayProcess, restarted: bool) -> None:
        moved = self._url is not None and gateway.url != self._url
        self._url = gateway.url
        if moved:
            self.egress.set_gateway(gateway.url)
        self.asks.gateway_gone()  # the old gateway's asks died with it, and its forms
        self.forms.gateway_gone()
        for agent in list(self.panes.values()):
            await self._register(gateway.client, agent)
            if moved:
                agent.restart_needed = f"the gateway moved to {gateway.url}; restart to reconnect"
                self._broadcast(AgentChanged(agent))
        status = await gateway.client.status()
        self.server_names = [server.name for server in status.servers]
        self.roles = status.roles
        await self._catch_up(gateway.client)
        await self.lines.gateway_up(gateway.client)
        self._broadcast(
            wire.GatewayChanged(
                up=True, text=gateway.url, restarted=restarted, roles=self.roles, servers=self.server_names
            )
        )

    def _gateway_down(self, reason: str) -> None:
        self.lines.down = True
        self._broadcast(wire.GatewayChanged(up=False, text=reason))

    def _egress_down(self, reason: str) -> None:
        self._broadcast(NetworkChanged(False, reason))

    def _egress_up(self, restarted: bool) -> None:
        if restarted:
            self._broadcast(NetworkChanged(True, "the egress proxy is back"))

    async def _catch_up(self, client: GatewayClient) -> None:
        """Audit rows, asks and forms that happened while nobody followed the events."""
        after = (self.audit_rows[-1].id or 0) if self.audit_rows else 0
        rows = await client.audit(after=after, limit=None if after else 500)
        self.audit_rows.extend(rows)
        for ask in await client.asks():
            self.asks.arrived(ask)
        for info in await client.elicitations():
            self.forms.arrived(info)

    # -- panes -----------------------------------------------------------------------------------

    def _new_id(self) -> str:
        self._numbers += 1
        return f"p{self._numbers}"

    async def open(self, plan: PanePlan, pane_id: str | None = None) -> tuple[Agent, LaunchSpec]:
        """Register a pane with the gateway and prepare its CLI; returns it and what to run."""
        pane_id = pane_id or self._new_id()
        role = plan.setup.role or DEFAULT_ROLE
        agent = Agent(
            id=pane_id,
            plan=plan,
            token=secrets.token_urlsafe(32),
            runtime=RuntimeDir(self.run_dir / pane_id),
            role=role,
            launched_role=role,
        )
        cwd = plan.setup.cwd or Path.cwd()
        agent.skills = sorted({skill.name for skill in await asyncio.to_thread(plan.adapter.skills, cwd)})
        self.panes[pane_id] = agent
        try:
            await self._register(self.client, agent)
            spec = await self.launcher.prepare(agent)
        except BaseException:
            self.panes.pop(pane_id, None)
            agent.runtime.remove()
            with contextlib.suppress(GatewayError):
                await self.client.remove(pane_id)
            raise
        return agent, spec

    async def relaunch(self, agent: Agent, *, resume: bool = False) -> LaunchSpec:
        """What to run when the pane restarts: prepared again, so the CLI starts under the current role."""
        spec = await self.launcher.prepare(agent, resume=resume)
        agent.restart_needed = None
        self._broadcast(AgentChanged(agent))
        return spec

    async def close(self, agent: Agent) -> None:
        """Forget the pane: the gateway refuses its token from now on; its runtime dir is removed."""
        agent.closed = True
        self.panes.pop(agent.id, None)
        self.egress.remove_pane(agent.id)
        agent.runtime.remove()
        with contextlib.suppress(GatewayError):
            await self.client.remove(agent.id)

    async def _register(self, client: GatewayClient, agent: Agent) -> None:
        created = await client.register(
            agent.role, title=agent.title, pane_id=agent.id, token=agent.token, skills=agent.skills
        )
        agent.update(created.pane)

    async def _role_changed(self, agent: Agent) -> None:
        """After a role change: which skills the new role hides (for CLIs that show skills as of their start),
        and whether the CLI's own permission layer, set from the role at its start, is out of date."""
        capabilities = await self.client.capabilities(agent.id)
        agent.layer_outdated = capabilities.builtins != agent.builtins_at_launch and await asyncio.to_thread(
            self.launcher.layer_differs, agent, capabilities.builtins
        )
        if not agent.skills_live:
            agent.hidden_now = denied_skills({skill.name: skill.decision for skill in capabilities.skills})
        agent.restart_needed = agent._restart_reason()
        self._broadcast(AgentChanged(agent))

    # -- acting on panes -------------------------------------------------------------------------

    async def set_role(self, agent: Agent, role: str) -> None:
        agent.update(await self.client.set_role(agent.id, role))
        self.egress.rename_role(agent.id, agent.role)
        await self._role_changed(agent)

    async def set_phase(self, agent: Agent, phase: Phase) -> None:
        reason = "escalated by the human" if phase == "action" else "reset by the human"
        agent.update(await self.client.set_phase(agent.id, phase, reason))
        self._broadcast(AgentChanged(agent))

    async def capabilities(self, agent: Agent) -> Capabilities:
        return await self.client.capabilities(agent.id)

    async def reload_roles(self) -> RolesStatus:
        self.roles = await self.client.reload_roles()
        return self.roles

    def answer(self, ask_id: str, answer: AskAnswer) -> None:
        """Answer an ask (the same as resolving its future)."""
        self.asks.answer(ask_id, answer)

    async def answer_team(self, request_id: str, reply: TeamReply) -> None:
        """The host's answer to a team call (one that is over, its caller gone or timed out, is no error)."""
        await unless_over(self.client.answer_team(request_id, reply))

    # -- events ----------------------------------------------------------------------------------

    def _on_event(self, event: GatewayEvent) -> None:
        match event.type:
            case "elicitation":
                self.forms.arrived(ElicitationInfo.model_validate(event.data))
            case "elicitation_resolved":
                self.forms.over(ElicitationInfo.model_validate(event.data))
            case "ask":
                self.asks.arrived(AskInfo.model_validate(event.data))
            case "ask_resolved":
                ask = AskInfo.model_validate(event.data)
                self.asks.over(ask, ask.id)
            case "audit":
                row = AuditRow.model_validate(event.data)
                if self.audit_rows and (row.id or 0) <= (self.audit_rows[-1].id or 0):
                    return  # already caught up with it
                self.audit_rows.append(row)
                self._broadcast(wire.AuditEvent(row=row))
            case "pane":
                info = PaneInfo.model_validate(event.data)
                agent = self.panes.get(info.id)
                if agent is not None:
                    changed = info.role != agent.role
                    agent.update(info)
                    if changed:  # switched by someone else (polter panes role ...)
                        self._tasks.run(self._role_changed(agent), f"reading the new role of {agent.id}")
                    else:
                        self._broadcast(AgentChanged(agent))
            case "servers":
                report = ServersReload.model_validate(event.data)
                if report.applied:
                    self.server_names = [*report.unchanged, *report.reconfigured, *report.added]
                if report.changes() or report.problems:
                    self._broadcast(wire.ServersEvent(report=report))
            case "roles":
                self.roles = RolesStatus.model_validate(event.data)
                self._broadcast(wire.RolesEvent(status=self.roles))
            case "team":
                self._broadcast(TeamRequested(TeamRequest.model_validate(event.data)))
            case "state":
                reported = PaneStateReport.model_validate(event.data)
                agent = self.panes.get(reported.pane)
                if agent is not None and not agent.closed:
                    self._broadcast(StateReported(agent, reported.report))
