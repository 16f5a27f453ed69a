"""One pane as the workspace knows it: what its plan (:class:`~polter.launch.planning.PanePlan`) became."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from polter.adapters import Adapter, Liveness
from polter.adapters.plugins import RuntimeDir
from polter.gateway.models import PaneInfo, Phase
from polter.launch.config import PaneSetup
from polter.launch.planning import PanePlan
from polter.protocol import BuiltinsPolicy

__all__ = ["Agent", "denied_skills"]


@dataclass(eq=False)
class Agent:
    """One pane as the gateway knows it, and what the UI shows about it."""

    id: str
    plan: PanePlan
    token: str = field(repr=False)
    runtime: RuntimeDir
    role: str
    launched_role: str
    """The role the running CLI was started under (a cold CLI keeps its tool list until a restart)."""
    phase: Phase | None = None
    role_found: bool = True
    pending_asks: int = 0
    skills: list[str] = field(default_factory=list)
    warnings: tuple[str, ...] = ()
    files: set[str] = field(default_factory=set)
    """The runtime-dir files the adapter wrote at the last launch."""
    hidden_at_launch: frozenset[str] = frozenset()
    """Skills the CLI was told to hide when it started (the role denied them)."""
    hidden_now: frozenset[str] = frozenset()
    """Skills the pane's current role denies."""
    builtins_at_launch: BuiltinsPolicy | None = None
    """The role's ``[builtins]`` the CLI's own permission layer was set from when it started."""
    layer_outdated: bool = False
    """The CLI's own permission layer would be set otherwise under the current role (a restart sets it)."""
    restart_needed: str | None = None
    """Why the running CLI is out of date with the pane's role (None when it is not)."""
    closed: bool = False

    @property
    def adapter(self) -> Adapter:
        return self.plan.adapter

    @property
    def setup(self) -> PaneSetup:
        return self.plan.setup

    @property
    def title(self) -> str:
        return self.setup.title or self.adapter.display_name

    @property
    def tools_live(self) -> bool:
        """The CLI refreshes its tool list when the gateway says it changed (``list_changed``)."""
        return self.adapter.info.mcp_liveness == Liveness.HOT

    @property
    def skills_live(self) -> bool:
        return self.adapter.info.skills_liveness == Liveness.HOT or not self.skills

    def update(self, info: PaneInfo) -> None:
        self.role, self.phase, self.role_found, self.pending_asks = (
            info.role,
            info.phase,
            info.role_found,
            info.pending_asks,
        )
        self.restart_needed = self._restart_reason()

    def confined(self, builtins: BuiltinsPolicy | None) -> bool:
        """Whether the pane runs in its kernel sandbox under ``builtins`` (its role's): an agent CLI always, a
        shell unless the role lets it out (``[sandbox] shell = "unconfined"``: the human's own shell)."""
        return self.adapter.info.agent or bool(self.setup.command) or not (builtins and builtins.unconfined_shell)

    def _restart_reason(self) -> str | None:
        """Why the running CLI shows something else than the role allows now (None when it does not).
        The gateway decides every call under the current role either way; this is about what the CLI shows."""
        name = self.adapter.display_name
        if self.role != self.launched_role and not self.tools_live:
            return f"{name} keeps its tool list until it restarts; restart to apply"
        if self.hidden_now != self.hidden_at_launch and not self.skills_live:
            return f"{name} shows the skills of the role it started under until it restarts; restart to apply"
        if self.layer_outdated:
            return (
                f"{name}'s own permission rules were set from the role it started under; the gateway's hook "
                "decides by the new role now, and a restart sets them anew"
            )
        return None


def denied_skills(decisions: Mapping[str, str]) -> frozenset[str]:
    return frozenset(name for name, decision in decisions.items() if decision == "deny")
