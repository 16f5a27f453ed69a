"""The gateway: its state, and the parts every surface (MCP endpoints, ``/hook``, ``/control``) shares.

``Gateway`` composes owned parts, each of one concern, and says what the gateway is (:meth:`Gateway.status`):

- the panes: :class:`~polter.gateway.panes.PaneRegistry` (identity), :class:`~polter.gateway.pane_control.PaneControl`
  (what the control API does to them);
- the decisions: :class:`~polter.gateway.policy.Policy` (the roles' engine for a pane), the execution layer
  :class:`~polter.gateway.execution.Execution` (every call, the hook's veto), :class:`~polter.gateway.asks.AskBroker`,
  and the audit (:class:`~polter.gateway.audit.AuditLog`, written by :class:`~polter.gateway.auditing.Auditor`);
- the upstreams: :class:`~polter.gateway.upstreams.UpstreamPool`, the calls in flight, and what they send of their
  own accord (:class:`~polter.gateway.routing.Router`, :class:`~polter.gateway.server_requests.ServerRequests`,
  :class:`~polter.gateway.server_requests.Elicitations`);
- the controllers' and the panes' channels (:class:`~polter.gateway.events.EventHub`,
  :class:`~polter.gateway.channels.PaneChannels`).

The HTTP layers are thin: they authenticate, parse, and call a part. Every execution-layer path goes through
:meth:`Execution.authorize <polter.gateway.execution.Execution.authorize>`, which decides with the engine,
resolves an ask, and never turns a deny into an allow. Listing paths go through the policy's fail-open side.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Coroutine
from typing import Any

from polter import __version__
from polter.gateway.asks import AskBroker
from polter.gateway.audit import AUDIT_FILE, AuditLog
from polter.gateway.auditing import Auditor
from polter.gateway.calls import CallsInFlight
from polter.gateway.channels import PaneChannels
from polter.gateway.config import GatewayConfig
from polter.gateway.events import EventHub
from polter.gateway.execution import Execution
from polter.gateway.hook_payloads import FindTranslator, HookAdapters
from polter.gateway.models import GatewayStatus, RolesStatus, RoleSummary
from polter.gateway.pane_control import PaneControl
from polter.gateway.panes import PaneRegistry
from polter.gateway.policy import Policy
from polter.gateway.round_trips import RoundTrips
from polter.gateway.routing import Router
from polter.gateway.server_requests import Elicitations, ServerRequests
from polter.gateway.team_desk import TeamDesk
from polter.gateway.upstreams import ListKind, UpstreamPool
from polter.roles.library import ReloadReport, RoleLibrary

__all__ = ["Gateway"]

logger = logging.getLogger(__name__)


class Gateway:
    def __init__(self, config: GatewayConfig, roles: RoleLibrary, *, adapters: FindTranslator | None = None) -> None:
        self.config = config
        self.url = ""
        self.roles = roles
        self.panes = PaneRegistry()
        self.policy = Policy(roles, input_window=config.input_window)
        self.events = EventHub()
        self.audit = AuditLog(config.state_dir / AUDIT_FILE, keep_arguments=config.audit_arguments)
        self.audit.on_row = lambda row: self.events.publish("audit", row)
        self.auditor = Auditor(self.audit)
        """What the decisions write to the audit log."""
        self.asks = AskBroker(self.events, timeout=config.ask_timeout)
        self.asks.on_resolved = self.auditor.ask_answered
        self.channels = PaneChannels()
        self.calls = CallsInFlight()
        """What each upstream is serving for the panes right now."""
        self.router = Router(self)
        """What the upstreams send of their own accord, routed to the panes' sessions."""
        self.elicitations = Elicitations(self.events, timeout=config.ask_timeout)
        """Elicitations shown in Polter's window (the pane's CLI could not show them)."""
        self.server_requests = ServerRequests(self, self.channels.get_streams.__contains__)
        """The upstreams' sampling and elicitation requests, decided and routed."""
        self.team = TeamDesk(self.events)
        """The team tools' calls handed to the session host (docs/team.md)."""
        self.round_trips = RoundTrips()
        """2026-era tool calls whose upstream asked their client something, until it answers."""
        self.hook_adapters = HookAdapters(adapters)
        """The adapters that translate CLIs' hook payloads (``/hook/<adapter>/payload``), found by ``adapters``."""
        self.execution = Execution(self)
        """The execution layer: calls, the hook's veto, asks resolved."""
        self.pane_control = PaneControl(
            panes=self.panes,
            policy=self.policy,
            events=self.events,
            asks=self.asks,
            calls=self.calls,
            router=self.router,
            elicitations=self.elicitations,
            channels=self.channels,
            auditor=self.auditor,
            team=self.team,
            spawn=self._spawn,
        )
        """What the control API does to panes."""
        self.pool = UpstreamPool(
            config.servers,
            log_dir=config.state_dir / "upstreams",
            on_change=self._upstream_changed,
            listener=self.router,
        )
        self.ready = asyncio.Event()
        """Set once the app's lifespan has started everything."""
        self._tasks: set[asyncio.Task[Any]] = set()

    def status(self) -> GatewayStatus:
        return GatewayStatus(
            version=__version__,
            pid=os.getpid(),
            url=self.url,
            servers=self.pool.infos(),
            roles=self.roles_status(),
            panes=len(self.panes),
            controllers=self.events.controllers,
            pending_asks=len(self.asks.pending()),
        )

    def roles_status(self) -> RolesStatus:
        names = self.roles.names()
        return RolesStatus(
            names=names,
            problems=[str(problem) for problem in self.roles.problems],
            kept=sorted(self.roles.kept),
            roles=[self._role_summary(name) for name in names],
        )

    def _role_summary(self, name: str) -> RoleSummary:
        role, source = self.roles.get(name), self.roles.source(name)
        return RoleSummary(
            name=name,
            description=role.description if role is not None else "",
            phases=role is not None and role.has_phases,
            file=str(source.path) if source is not None else None,
            layer=source.layer if source is not None else None,
        )

    def reload_roles(self) -> RolesStatus:
        """Re-read role files now (the watcher does this by itself when files change)."""
        self.roles_reloaded(self.roles.reload())
        return self.roles_status()

    def roles_reloaded(self, report: ReloadReport) -> None:
        """Panes under a role that changed (or vanished) are told; the controllers get the roles."""
        for line in report.lines():
            logger.info("roles: %s", line)
        self.pane_control.roles_reloaded(report)
        self.events.publish("roles", self.roles_status())

    def _spawn(self, coroutine: Coroutine[Any, Any, Any]) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _upstream_changed(self, server: str, kind: ListKind) -> None:
        upstream = self.pool.get(server)
        if upstream is not None:
            self.events.publish("upstream", upstream.info())
        await self.channels.notify(endpoint=server, kinds=(kind,))
