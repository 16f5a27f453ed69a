"""What a window (or ``polter ls``/``kill``) can ask the session host to do: the ``call`` methods of the
session protocol, by name. Each takes the window that called and its parameters and returns what
goes back in the reply (JSON, or a pydantic model); a :class:`~polter.errors.PolterError` becomes the
reply's error."""

from __future__ import annotations

from pathlib import Path

from polter.errors import SessionError
from polter.gateway.models import AuditRow, Capabilities, RolesStatus
from polter.session import methods
from polter.session import protocol as wire
from polter.session.agents import PanePlan
from polter.session.config import PaneSetup
from polter.session.host_members import HostMembers
from polter.session.launch import plan_panes
from polter.session.panes import SessionPane
from polter.session.windows import Window
from polter.terminal.frames import HistoryRows, encode_history
from polter.terminal.launch import LaunchSpec

__all__ = ["SessionCalls"]


class SessionCalls(HostMembers):
    """The protocol's methods, mixed into :class:`~polter.session.host.SessionHost` (``self`` is the host)."""

    def _register_calls(self) -> None:
        table = self.calls
        table.register(methods.HistoryParams, self._history)
        table.register(methods.OpenParams, self._open)
        table.register(methods.CloseParams, self._close)
        table.register(methods.RestartParams, self._restart)
        table.register(methods.SetRoleParams, self._set_role)
        table.register(methods.SetPhaseParams, self._set_phase)
        table.register(methods.ReloadRolesParams, self._reload_roles)
        table.register(methods.CapabilitiesParams, self._capabilities)
        table.register(methods.AuditParams, self._audit)
        table.register(methods.AnswerParams, self._answer)
        table.register(methods.AnswerQuestionParams, self._answer_question)
        table.register(methods.LayoutParams, self._set_layout)
        table.register(methods.ViewParams, self._view)
        table.register(methods.InfoParams, self._info)
        table.register(methods.KillParams, self._kill)

    async def _history(self, window: Window, params: methods.HistoryParams) -> HistoryRows | None:
        screen = self.pane(params.pane).terminal.screen
        if screen is None:
            return None
        return encode_history(screen, params.first, params.count, self._styles, window.styles)

    async def _open(self, window: Window, params: methods.OpenParams) -> str:
        like = self._find(params.like) if params.like else None
        cwd = Path(params.cwd) if params.cwd else (like.terminal.working_directory() if like else None)
        worktree = params.worktree
        if params.adapter:
            registry = self.launch.registry
            if registry is None:
                raise SessionError("this session knows no adapters")
            where = self._worktree_source(like, cwd) if worktree else cwd
            setup = PaneSetup(adapter=params.adapter, role=params.role, cwd=where, worktree=worktree)
            [plan] = plan_panes([setup], registry, source="opened from the command palette", where=lambda index: {})
            pane = await self._open_plan(plan)
        elif like is not None and like.agent is not None:
            agent = like.agent
            setup = agent.setup.model_copy(
                update={"role": agent.role, "cwd": cwd or agent.setup.cwd, "title": None, "resume": False}
            )
            if worktree or setup.worktree:  # a worktree of its own, from where like's came from
                where = self._worktree_source(like, setup.cwd)
                setup = setup.model_copy(update={"cwd": where, "worktree": True, "branch": None})
            pane = await self._open_plan(PanePlan(setup, agent.adapter, agent.plan.reason, agent.plan.why))
        elif worktree:
            raise SessionError("a pane in a worktree of its own runs an agent CLI: choose one (New pane in its own "
                               "worktree: CLI as role)")  # fmt: skip
        else:
            pane = self._add_pane(SessionPane(self._new_id(), LaunchSpec.shell(cwd=cwd), **self._pane_options()))
        self._save()
        return pane.id

    async def _close(self, window: Window, params: methods.CloseParams) -> None:
        pane = self.pane(params.pane)
        await pane.terminal.close()
        pane.terminal.dispose()
        if pane in self.panes:
            self.panes.remove(pane)
        if pane.agent is not None:
            await self.workspace.close(pane.agent)
        self.transitions.forget(pane.id)
        self._broadcast(wire.PaneRemoved(pane=pane.id))
        self._save()
        if not self.panes:
            self._spawn(self.end("its last pane was closed"), "ending the session")

    async def _restart(self, window: Window, params: methods.RestartParams) -> None:
        """Start the pane's program again. An agent pane's launch is prepared afresh; a restart that
        applies a role (or reconnects) continues the CLI's conversation where it can resume one."""
        pane = self.pane(params.pane)
        await pane.terminal.close()
        pane.report = None  # what the old CLI said of itself
        spec = None
        if pane.agent is not None:
            spec = await self.workspace.relaunch(pane.agent, resume=pane.agent.restart_needed is not None)
        pane.terminal.restart(spec)

    async def _set_role(self, window: Window, params: methods.SetRoleParams) -> wire.PaneState:
        pane = self.pane(params.pane)
        if pane.agent is None:
            raise SessionError(f"pane {pane.id} runs no agent")
        await self.workspace.set_role(pane.agent, params.role)
        self._save()
        return pane.state()

    async def _set_phase(self, window: Window, params: methods.SetPhaseParams) -> None:
        pane = self.pane(params.pane)
        if pane.agent is not None:
            await self.workspace.set_phase(pane.agent, params.phase)

    async def _reload_roles(self, window: Window, params: methods.ReloadRolesParams) -> RolesStatus:
        return await self.workspace.reload_roles()

    async def _capabilities(self, window: Window, params: methods.CapabilitiesParams) -> Capabilities:
        pane = self.pane(params.pane)
        if pane.agent is None:
            raise SessionError(f"pane {pane.id} runs no agent")
        return await self.workspace.capabilities(pane.agent)

    async def _audit(self, window: Window, params: methods.AuditParams) -> list[AuditRow]:
        return [row for row in self.workspace.audit_rows if (row.id or 0) > params.after]

    async def _answer(self, window: Window, params: methods.AnswerParams) -> None:
        self.workspace.answer(params.ask, params.answer)

    async def _answer_question(self, window: Window, params: methods.AnswerQuestionParams) -> bool:
        """Decide a question of the host's (:mod:`polter.session.questions`); False when it was over already."""
        return self.questions.answer(params.id, params.answer)

    async def _set_layout(self, window: Window, params: methods.LayoutParams) -> None:
        layout = params.layout
        self.layout = layout
        for other in self.windows:
            if other is not window and other.attached:
                other.send(wire.LayoutEvent(layout=layout))
        self._save()

    async def _view(self, window: Window, params: methods.ViewParams) -> None:
        self.active, self.zoomed = params.active, params.zoomed

    async def _info(self, window: Window, params: methods.InfoParams) -> wire.SessionInfo:
        return self.info()

    async def _kill(self, window: Window, params: methods.KillParams) -> None:
        reason = params.reason or "ended with `polter kill`"
        self._spawn(self.end(reason), "ending the session")
