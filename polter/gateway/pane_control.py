"""The panes as the control API steers them: registration and removal, role switches, the human's typed lines,
phases, skills, and what a pane is told when its tools change (``list_changed`` to its sessions, a notice to
its model). Every change is published on ``/control/events``."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from polter.gateway.asks import AskBroker
from polter.gateway.auditing import Auditor
from polter.gateway.calls import CallsInFlight
from polter.gateway.channels import ChangeKind, PaneChannels
from polter.gateway.events import EventHub
from polter.gateway.models import PaneCreated, PaneInfo, PaneRegistration, Phase
from polter.gateway.outcomes import Authorization, PaneNotFound, PhaseError
from polter.gateway.panes import PaneRegistry, RegisteredPane
from polter.gateway.policy import Policy
from polter.gateway.routing import Router
from polter.gateway.server_requests import Elicitations
from polter.gateway.team_desk import TeamDesk
from polter.roles.engine import FLOOR_SERVER
from polter.roles.library import ReloadReport

__all__ = ["PaneControl"]

Spawn = Callable[[Coroutine[Any, Any, Any]], None]


class PaneControl:
    """Owns what happens to a registered pane; ``spawn`` runs the notifications it sends in the background."""

    def __init__(
        self,
        *,
        panes: PaneRegistry,
        policy: Policy,
        events: EventHub,
        asks: AskBroker,
        calls: CallsInFlight,
        router: Router,
        elicitations: Elicitations,
        channels: PaneChannels,
        auditor: Auditor,
        team: TeamDesk,
        spawn: Spawn,
    ) -> None:
        self._panes, self._policy, self._events, self._asks = panes, policy, events, asks
        self._calls, self._router, self._elicitations, self._channels = calls, router, elicitations, channels
        self._auditor, self._team, self._spawn = auditor, team, spawn

    def info(self, pane: RegisteredPane) -> PaneInfo:
        return pane.info(
            role_found=self._policy.role(pane) is not None,
            sessions=self._channels.count(pane.id),
            pending_asks=len(self._asks.pending(pane.id)),
        )

    def pane(self, pane_id: str) -> RegisteredPane:
        pane = self._panes.get(pane_id)
        if pane is None:
            raise PaneNotFound(pane_id)
        return pane

    def register(self, registration: PaneRegistration) -> PaneCreated:
        pane, token = self._panes.register(registration)
        self._adopt_phase(pane)
        info = self.info(pane)
        self._events.publish("pane", info)
        return PaneCreated(pane=info, token=token)

    def remove(self, pane_id: str) -> PaneInfo:
        pane = self.pane(pane_id)
        info = self.info(pane)
        self._panes.remove(pane_id)
        self._asks.deny_pane(pane_id, "the pane was removed")
        self._calls.abandon_pane(pane_id, "the pane was removed")
        self._router.forget_pane(pane_id)
        self._elicitations.cancel_pane(pane_id, "the pane was removed")
        self._channels.forget_pane(pane_id)
        self._policy.forget(pane_id)
        self._team.forget_pane(pane_id)
        self._events.publish("pane_removed", info)
        return info

    def set_role(self, pane_id: str, role: str) -> PaneInfo:
        pane = self.pane(pane_id)
        if role != pane.role:
            self._asks.deny_pane(pane_id, f"the pane switched to the role {role}")
            pane.role = role
            pane.grants.clear()
            pane.argument_grants.clear()
            pane.preapproved.clear()
            pane.phase = None
            self._adopt_phase(pane)
            self._surface_changed(pane, f"its role is now {role}")
            self._spawn(self._router.drop_unreadable(pane))
        return self.publish(pane)

    def record_input(self, pane_id: str, text: str) -> PaneInfo:
        """A line the human typed: evidence for keyword gates, and a new research phase."""
        pane = self.pane(pane_id)
        pane.record_input(text)
        role = self._policy.role(pane)
        if role is not None and role.has_phases and pane.phase != "research":
            pane.phase = "research"
            self._surface_changed(pane, "a new request from the human started a research phase")
        return self.publish(pane)

    async def set_phase(self, pane_id: str, phase: Phase, reason: str, *, by: str = "controller") -> PaneInfo:
        pane = self.pane(pane_id)
        role = self._policy.role(pane)
        if role is None or not role.has_phases:
            raise PhaseError(f"the role {pane.role} has no phases")
        pane.phase = phase
        self._surface_changed(pane, f"the pane is now in the {phase} phase")
        auth = Authorization(True, "allow", "control", reason or f"set by the {by}")
        await self._auditor.record(pane, "phase", FLOOR_SERVER, "escalate" if phase == "action" else "reset", auth, 0.0,
                                   None)  # fmt: skip
        return self.publish(pane)

    def set_skills(self, pane_id: str, skills: list[str]) -> PaneInfo:
        pane = self.pane(pane_id)
        pane.skills = sorted(set(skills))
        return self.publish(pane)

    def roles_reloaded(self, report: ReloadReport) -> None:
        """Panes under a role that changed (or vanished) get ``list_changed`` and a notice."""
        for pane in self._panes:
            if pane.role in report.affected:
                self._adopt_phase(pane)
                self._surface_changed(pane, f"the role {pane.role} changed on disk")
                self._spawn(self._router.drop_unreadable(pane))

    async def notify(self, pane: RegisteredPane, kinds: tuple[ChangeKind, ...] = ("tools",)) -> None:
        await self._channels.notify(pane_id=pane.id, kinds=kinds)

    def publish(self, pane: RegisteredPane) -> PaneInfo:
        """Tell the controllers what the pane is now."""
        info = self.info(pane)
        self._events.publish("pane", info)
        return info

    def _adopt_phase(self, pane: RegisteredPane) -> None:
        role = self._policy.role(pane)
        if role is None or not role.has_phases:
            pane.phase = None
        elif pane.phase is None:
            pane.phase = "research"

    def _surface_changed(self, pane: RegisteredPane, why: str) -> None:
        """Tell the pane's sessions (``list_changed``) and the model (a notice on its next tool result)."""
        pane.notice = (
            f"[polter] This pane's tools changed: {why}. The tool list you saw earlier is out of "
            f"date; call whoami on the {FLOOR_SERVER} server to see what you may use now."
        )
        self._spawn(self._channels.notify(pane_id=pane.id, kinds=("tools", "prompts", "resources")))
