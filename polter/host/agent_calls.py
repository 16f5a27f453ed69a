"""The calls about the session's agents under their roles (roles, phases, asks, the audit, what a role gives),
served for the windows from the host's :class:`~polter.host.workspace.Workspace`, and the answers to the
host's own questions."""

from __future__ import annotations

from typing import TYPE_CHECKING

from polter.errors import SessionError
from polter.gateway.models import AuditRow, Capabilities, RolesStatus
from polter.host.agents import Agent
from polter.host.panes import Panes
from polter.host.questions import Questions
from polter.host.windows import Window
from polter.host.workspace import Workspace
from polter.wire import messages as wire
from polter.wire import methods

if TYPE_CHECKING:
    from polter.host.call_table import CallTable

__all__ = ["AgentCalls"]


class AgentCalls:
    """The handlers; ``panes`` says which agent a pane id means."""

    def __init__(self, panes: Panes, workspace: Workspace, questions: Questions) -> None:
        self._panes = panes
        self._workspace = workspace
        self._questions = questions

    def register_calls(self, calls: CallTable) -> None:
        calls.register(methods.SetRoleParams, self._set_role)
        calls.register(methods.SetPhaseParams, self._set_phase)
        calls.register(methods.ReloadRolesParams, self._reload_roles)
        calls.register(methods.CapabilitiesParams, self._capabilities)
        calls.register(methods.AuditParams, self._audit)
        calls.register(methods.AnswerParams, self._answer)
        calls.register(methods.AnswerElicitationParams, self._answer_elicitation)
        calls.register(methods.AnswerQuestionParams, self._answer_question)

    def _agent(self, pane_id: str) -> Agent:
        pane = self._panes.get(pane_id)
        if pane.agent is None:
            raise SessionError(f"pane {pane.id} runs no agent")
        return pane.agent

    async def _set_role(self, window: Window, params: methods.SetRoleParams) -> wire.PaneState:
        await self._workspace.set_role(self._agent(params.pane), params.role)
        return self._panes.get(params.pane).state()

    async def _set_phase(self, window: Window, params: methods.SetPhaseParams) -> None:
        agent = self._panes.get(params.pane).agent
        if agent is not None:
            await self._workspace.set_phase(agent, params.phase)

    async def _reload_roles(self, window: Window, params: methods.ReloadRolesParams) -> RolesStatus:
        return await self._workspace.reload_roles()

    async def _capabilities(self, window: Window, params: methods.CapabilitiesParams) -> Capabilities:
        return await self._workspace.capabilities(self._agent(params.pane))

    async def _audit(self, window: Window, params: methods.AuditParams) -> list[AuditRow]:
        return [row for row in self._workspace.audit_rows if (row.id or 0) > params.after]

    async def _answer(self, window: Window, params: methods.AnswerParams) -> None:
        self._workspace.answer(params.ask, params.answer)

    async def _answer_elicitation(self, window: Window, params: methods.AnswerElicitationParams) -> None:
        await self._workspace.forms.answer(params.id, params.reply)

    async def _answer_question(self, window: Window, params: methods.AnswerQuestionParams) -> bool:
        """Decide a question of the host's (:mod:`polter.host.questions`); False when it was over already."""
        return self._questions.answer(params.id, params.answer)
