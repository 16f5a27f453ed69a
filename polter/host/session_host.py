"""The session host: the process that owns a session's panes, so they outlive every window.

It runs each pane's program on a PTY with its screen engine (:class:`~polter.host.pane.HostPane`), the
workspace (the gateway and the agent panes' registrations, asks, roles), and a Unix socket
(:class:`~polter.host.session_socket.SessionSocket`) through which windows attach
(:mod:`polter.wire.messages`). A window gets
the session's state and every pane's screen at once, then frames of what changes, and sends the human's
input back. Windows come and go; the programs keep running, the gateway keeps deciding, and asks wait for
someone to attach (their timeout still applies).

:class:`SessionHost` is made of parts that each own one concern and serve the calls about it:
:class:`~polter.host.panes.Panes` (the panes in order, scrollback), :class:`~polter.host.windows.Windows`
(the connections, frames, sizes, the layout), :class:`~polter.host.attention.Attention` (who needs the
human), :class:`~polter.host.pane_worktrees.PaneWorktrees` (panes in worktrees of their own),
:class:`~polter.host.agent_calls.AgentCalls` over the :class:`~polter.host.workspace.Workspace` (the
agents, their roles and the gateway), :class:`~polter.host.questions.Questions` (the host's own yes/no
questions) and the :class:`~polter.host.call_table.CallTable` they register with. The host itself starts
and ends the session, and opens, closes and restarts panes (which takes several parts).
"""

from __future__ import annotations

import asyncio
import ctypes
import ctypes.util
import logging
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Final

from polter import __version__
from polter.errors import PolterError, SessionError, WorktreeError
from polter.host.agent_calls import AgentCalls
from polter.host.attention import Attention
from polter.host.call_table import CallTable
from polter.host.pane import HostPane
from polter.host.pane_worktrees import PaneWorktrees, worktree_title
from polter.host.panes import Panes
from polter.host.questions import Questions
from polter.host.session_socket import SessionSocket
from polter.host.team import Team, not_a_prompt, reads_prompts
from polter.host.windows import Window, Windows
from polter.host.workspace import (
    AgentChanged,
    NetworkChanged,
    StateReported,
    TeamRequested,
    Workspace,
    WorkspaceEvent,
)
from polter.launch.config import PaneSetup, SavedSession, save_session
from polter.launch.planning import Launch, PanePlan, is_installed, plan_panes
from polter.protocol import AgentState
from polter.tasks import BackgroundTasks
from polter.terminal.launch import LaunchSpec
from polter.wire import messages as wire
from polter.wire import methods
from polter.wire.registry import SessionFiles

__all__ = ["SessionHost"]

logger = logging.getLogger(__name__)

STATE_INTERVAL: Final = 0.5
"""Seconds between readings of each agent's state from its screen."""
SAVE_EVERY: Final = 10
"""State readings between two looks at the panes' directories for ``--restore`` (and their worktrees' folders)."""


class SessionHost:
    """A session named ``files.name`` with the panes of ``launch`` (agent panes under roles) and ``specs``
    (plain programs). ``await start()`` takes the name and opens the socket; :meth:`run` opens the
    panes and serves until the session ends (:meth:`end`)."""

    def __init__(
        self,
        files: SessionFiles,
        launch: Launch | None = None,
        specs: list[LaunchSpec] | None = None,
        *,
        scrollback: int = 10_000,
        state_dir: Path | None = None,
    ) -> None:
        self.launch = launch or Launch(plans=[])
        self.specs = list(specs or [])
        self.ready = False
        self.started_at = datetime.now(UTC)
        self.ended = asyncio.Event()
        self.end_reason = ""
        self.tasks = BackgroundTasks(logger)
        self.workspace = Workspace(
            servers=self.launch.servers,
            servers_file=self.launch.servers_file,
            ask_timeout=self.launch.ask_timeout,
            backends=self.launch.backends,
            state_dir=state_dir,
            test_mode=self.launch.test_mode,
            egress_test_hosts=self.launch.egress_test_hosts,
        )
        self.windows = Windows(lambda: self.panes, layout=self.launch.layout, tasks=self.tasks, on_layout=self._save)
        self.panes = Panes(files.name, self.windows, scrollback=scrollback)
        self.questions = Questions(self.windows.broadcast, lambda: self.windows.any_attached)
        self.attention = Attention(
            files.name,
            self.launch.notify,
            panes=self.panes,
            windows=self.windows,
            asks_of=self.workspace.asks.of_pane,
            tasks=self.tasks,
            on_muted=self._save,
        )
        self.worktrees = PaneWorktrees(
            panes=self.panes, windows=self.windows, questions=self.questions, tasks=self.tasks, restart=self._restart
        )
        self.team = Team(
            panes=self.panes,
            attention=self.attention,
            tasks=self.tasks,
            answer=self.workspace.answer_team,
            open_pane=self._open_for_team,
            close_pane=self.close_pane,
            asks_of=self.workspace.asks.of_pane,
        )
        self.calls = CallTable()
        for part in (
            self.panes,
            self.windows,
            self.attention,
            self.worktrees,
            AgentCalls(self.panes, self.workspace, self.questions),
            self.team,
        ):
            part.register_calls(self.calls)
        self.calls.register(methods.OpenParams, self._open)
        self.calls.register(methods.CloseParams, self._close)
        self.calls.register(methods.RestartParams, self._restart_call)
        self.calls.register(methods.InfoParams, self._info)
        self.calls.register(methods.KillParams, self._kill)
        self.calls.register(methods.SendParams, self._send)
        self.socket = SessionSocket(
            files,
            started_at=self.started_at,
            windows=self.windows,
            panes=self.panes,
            questions=self.questions,
            calls=self.calls,
            tasks=self.tasks,
            info=self.info,
            state=self.state,
            ending=lambda: self._ending,
            typed=self._submit,
        )
        self._workspace_started = False
        self._ending = False
        self._saved: SavedSession | None = None

    @property
    def files(self) -> SessionFiles:
        """The session's socket, lock and record on disk (made again where a logout removed them)."""
        return self.socket.files

    @property
    def name(self) -> str:
        return self.socket.name

    @property
    def has_agents(self) -> bool:
        return bool(self.launch.plans) or self._workspace_started

    def pane(self, pane_id: str) -> HostPane:
        """The pane ``pane_id`` (raises :class:`SessionError` if the session has none)."""
        return self.panes.get(pane_id)

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        """Take the session's name and open its socket (raises :class:`SessionError` if the name is taken)."""
        await self.socket.open()
        self.workspace.subscribe(self._workspace_event)
        self.tasks.run(self._read_states(), "reading the agents' states")

    async def run(self) -> None:
        """Open the panes the session starts with, then serve until it ends."""
        try:
            await self.open_initial()
        except PolterError as exc:
            await self.end(f"the session could not start: {exc}", failed=True)
        await self.ended.wait()

    async def open_initial(self) -> None:
        if self.launch.plans:
            await self._start_workspace()
        for spec in self.specs:
            self.panes.add(self.panes.new(self.panes.new_id(), spec))
        failed = []
        for plan in self.launch.plans:
            try:
                await self._open_plan(plan)
            except WorktreeError as exc:  # one pane's worktree: the others open all the same
                name = worktree_title(plan)
                failed.append(f"{name}: {exc}")
                self.windows.notify(wire.Notice(text=str(exc), title=f"Pane {name} not opened", severity="error"))
        if failed and not len(self.panes):
            raise SessionError("no pane could open: " + "; ".join(failed))
        self.ready = True
        self.windows.broadcast(wire.Ready(hint=self.launch.hint))
        self._save()

    async def _start_workspace(self) -> None:
        if not self._workspace_started:
            self._workspace_started = True
            await self.workspace.start()

    async def end(self, reason: str, *, failed: bool = False) -> None:
        """End the session: every program (SIGHUP, then SIGKILL after the grace period), the gateway,
        the socket; every window is told why."""
        if self._ending:
            await self.ended.wait()
            return
        self._ending = True
        self.end_reason = reason
        self.questions.close_all()
        self._save()
        await asyncio.gather(*(pane.terminal.close() for pane in self.panes), return_exceptions=True)
        for pane in self.panes:
            pane.terminal.dispose()
        self.tasks.cancel()
        if self._workspace_started:
            await self.workspace.aclose()
        self.windows.broadcast(wire.Ended(reason=reason, failed=failed))
        await self.windows.close_all()
        self.socket.close()
        self.ended.set()

    # -- opening, closing and restarting panes -------------------------------------------------------

    async def _open_plan(self, plan: PanePlan, index: int | None = None) -> HostPane:
        await self._start_workspace()
        pane_id = self.panes.new_id()
        opened = None
        if plan.setup.worktree:
            plan, opened = await self.worktrees.open(plan)
            if self._ending:  # (while a window was asked about its setup command)
                self.worktrees.release(opened)
                raise SessionError(f"session {self.name} is ending")
        try:
            agent, spec = await self.workspace.open(plan, pane_id=pane_id)
            pane = self.panes.new(pane_id, spec, agent)
            if opened is not None:
                self.worktrees.track(pane, opened)
            self.panes.add(pane, index)
        finally:
            if opened is not None:
                self.worktrees.release(opened)
        if pane.worktree is not None:
            pane.worktree.refresh()
        if agent.warnings:
            self.windows.notify(wire.Notice(text="\n".join(agent.warnings), title=agent.title, severity="warning"))
        return pane

    async def _open(self, window: Window, params: methods.OpenParams) -> str:
        like = self.panes.find(params.like) if params.like else None
        cwd = Path(params.cwd) if params.cwd else (like.terminal.working_directory() if like else None)
        if params.adapter:
            registry = self.launch.registry
            if registry is None:
                raise SessionError("this session knows no adapters")
            where = self.worktrees.source(like, cwd) if params.worktree else cwd
            setup = PaneSetup(adapter=params.adapter, role=params.role, cwd=where, worktree=params.worktree)
            [plan] = plan_panes([setup], registry, source="opened from the command palette", where=lambda index: {})
            pane = await self._open_plan(plan)
        elif like is not None and like.agent is not None:
            agent = like.agent
            setup = agent.setup.model_copy(
                update={"role": agent.role, "cwd": cwd or agent.setup.cwd, "title": None, "resume": False}
            )
            if params.worktree or setup.worktree:  # a worktree of its own, from where like's came from
                where = self.worktrees.source(like, setup.cwd)
                setup = setup.model_copy(update={"cwd": where, "worktree": True, "branch": None})
            pane = await self._open_plan(PanePlan(setup, agent.adapter, agent.plan.reason, agent.plan.why))
        elif params.worktree:
            raise SessionError("a pane in a worktree of its own runs an agent CLI: choose one (New pane in its own "
                               "worktree: CLI as role)")  # fmt: skip
        else:
            pane = self.panes.add(self.panes.new(self.panes.new_id(), LaunchSpec.shell(cwd=cwd)))
        self._save()
        return pane.id

    async def _open_for_team(self, setup: PaneSetup, opener: HostPane) -> HostPane:
        """A pane the agent of ``opener`` opened (its role decided by the gateway, docs/team.md); a worktree of its
        own comes from the repository the opener works in."""
        registry = self.launch.registry
        if registry is None:
            raise SessionError("this session knows no adapters")
        if setup.worktree:
            setup = setup.model_copy(update={"cwd": self.worktrees.source(opener, setup.cwd)})
        [plan] = plan_panes([setup], registry, source="opened by an agent", where=lambda index: {})
        if not reads_prompts(plan.adapter, plan.setup.command):  # its task would run as a command
            raise SessionError(not_a_prompt(plan.adapter, plan.setup.command, "a pane of that adapter"))
        pane = await self._open_plan(plan)
        self._save()
        return pane

    async def _close(self, window: Window, params: methods.CloseParams) -> None:
        await self.close_pane(self.panes.get(params.pane))

    async def close_pane(self, pane: HostPane) -> None:
        """End the pane's program and forget the pane (the session ends with its last pane)."""
        self.team.pane_gone(pane, f"pane {self.panes.number(pane)} was closed", closed=True)
        await pane.terminal.close()
        pane.terminal.dispose()
        self.panes.remove(pane)
        if pane.agent is not None:
            await self.workspace.close(pane.agent)
        self.attention.forget(pane)
        self._save()
        if not len(self.panes):
            self.tasks.run(self.end("its last pane was closed"), "ending the session")

    async def _restart_call(self, window: Window, params: methods.RestartParams) -> None:
        await self._restart(self.panes.get(params.pane))

    async def _restart(self, pane: HostPane) -> None:
        """Start the pane's program again. An agent pane's launch is prepared afresh; a restart that
        applies a role (or reconnects) continues the CLI's conversation where it can resume one."""
        if pane in self.panes:
            self.team.pane_gone(pane, f"pane {self.panes.number(pane)} restarts")
        await pane.terminal.close()
        pane.report = None  # what the old CLI said of itself
        spec = None
        if pane.agent is not None:
            spec = await self.workspace.relaunch(pane.agent, resume=pane.agent.restart_needed is not None)
        pane.terminal.restart(spec)

    # -- every half second -----------------------------------------------------------------------------

    async def _read_states(self) -> None:
        """Every half second: what each agent is doing, and the scrollback of quiet panes stored compactly
        (the memory that frees goes back to the system once every pane is done); every few seconds,
        the session as ``--restore`` would reopen it."""
        compacted = False
        ticks = 0
        while True:
            await asyncio.sleep(STATE_INTERVAL)
            await self.socket.keep_reachable()
            ticks += 1
            if ticks % SAVE_EVERY == 0:
                self._save()  # a program's directory changes without telling anyone
                self.worktrees.look_at_folders()
            left = 0
            for pane in self.panes:
                if pane.agent is not None:
                    self.attention.attend(pane)
                if pane.worktree is not None and pane.agent_state is AgentState.IDLE:
                    pane.worktree.settled(pane.terminal.last_output)  # its figures, read in the background
                screen = pane.terminal.screen
                if screen is not None and time.monotonic() - pane.terminal.last_output > STATE_INTERVAL:
                    before = screen.compact_history(0)
                    left += screen.compact_history()
                    compacted = compacted or before > 0
            if compacted and not left:
                compacted = False
                release_memory()

    def _save(self) -> None:
        """What ``polter --restore`` reopens: the layout and each agent pane's CLI, role, cwd and title.
        Written whenever that changes (directories are looked at every few seconds), so a killed host
        leaves it too."""
        if not self.ready:
            return
        setups = []
        for pane in self.panes:
            agent = pane.agent
            if agent is None:
                continue
            cwd = pane.terminal.working_directory() or agent.setup.cwd
            setups.append(
                PaneSetup(
                    adapter=agent.adapter.name,
                    role=agent.role,
                    title=agent.setup.title,
                    command=agent.setup.command,
                    **self.worktrees.saved(pane, cwd),
                    notify=not pane.muted,
                )
            )
        session = SavedSession(layout=self.windows.layout, panes=setups)
        if setups and session != self._saved:
            try:
                save_session(session)
            except OSError as exc:
                logger.warning("could not save the session for --restore: %s", exc)
                return
            self._saved = session

    # -- the workspace's events ----------------------------------------------------------------------

    def _workspace_event(self, event: WorkspaceEvent) -> None:
        """What the workspace reports: windows are told the session's events as they are; the host acts on the rest."""
        match event:
            case AgentChanged(agent=agent):
                pane = self.panes.of_agent(agent)
                if pane is not None:
                    self.panes.changed(pane)
                self._save()
            case StateReported(agent=agent, report=report):
                self.attention.reported(agent, report)
                if (pane := self.panes.of_agent(agent)) is not None:
                    self.team.reported(pane)
            case TeamRequested(request=request):
                self.team.handle(request)
            case NetworkChanged(up=up, reason=reason):
                if up:
                    text = "The panes' network is back (Polter's egress proxy restarted)."
                    self.windows.notify(wire.Notice(text=text, title="Network"))
                else:
                    text = f"The panes have no network until Polter's egress proxy is back (restarting): {reason}"
                    self.windows.notify(wire.Notice(text=text, title="Network", severity="warning"))
            case wire.AskEvent(ask=ask) | wire.AskClosedEvent(ask=ask):
                self.windows.broadcast(event)
                self.attention.attend_pane(ask.pane)
            case wire.ElicitationEvent(elicitation=elicitation):
                self.windows.broadcast(event)
                self.attention.attend_pane(elicitation.pane)
            case _:
                self.windows.broadcast(event)

    # -- what windows are shown of the session ---------------------------------------------------------

    def info(self) -> wire.SessionInfo:
        return wire.SessionInfo(
            name=self.name,
            pid=os.getpid(),
            version=__version__,
            protocol=wire.PROTOCOL_VERSION,
            started=self.started_at,
            cwd=os.getcwd(),
            panes=len(self.panes),
            running=sum(pane.terminal.running for pane in self.panes),
            clients=len(self.windows.attached),
            executable=sys.executable,
        )

    def state(self) -> wire.SessionState:
        workspace = self.workspace
        registry = self.launch.registry
        adapters = [
            wire.AdapterChoice(name=adapter.name, display_name=adapter.display_name,
                               description=adapter.info.description)
            for adapter in (loaded.adapter for loaded in registry or ())
            if is_installed(adapter)
        ]  # fmt: skip
        return wire.SessionState(
            info=self.info(),
            layout=self.windows.layout,
            prefix=self.launch.prefix,
            palette_key=self.launch.palette_key,
            panes=[pane.state() for pane in self.panes],
            active=self.windows.active,
            zoomed=self.windows.zoomed,
            ready=self.ready,
            asks=list(workspace.asks.pending.values()),
            elicitations=list(workspace.forms.waiting.values()),
            questions=self.questions.pending(),
            roles=workspace.roles,
            servers=list(workspace.server_names),
            adapters=adapters,
            agents=self.has_agents,
            notify_terminal=self.launch.notify.terminal,
        )

    async def _info(self, window: Window, params: methods.InfoParams) -> wire.SessionInfo:
        return self.info()

    async def _kill(self, window: Window, params: methods.KillParams) -> None:
        self.tasks.run(self.end(params.reason or "ended with `polter kill`"), "ending the session")

    async def _send(self, window: Window, params: methods.SendParams) -> list[str]:
        """The human types ``text`` and Enter into each pane (an id, or a number from 1): their words, as if typed
        there."""
        panes = [self._pane_named(name) for name in params.panes]
        typed = []
        for pane in panes:
            if pane.terminal.running:
                self._submit(pane, [*pane.paste(params.text), *pane.key("enter", None)])
                typed.append(pane.id)
        return typed

    def _pane_named(self, name: str) -> HostPane:
        if name.isdigit():
            if not 1 <= int(name) <= len(self.panes):
                raise SessionError(f"no pane {name} in session {self.name} (it has {len(self.panes)})")
            return self.panes[int(name) - 1]
        return self.panes.get(name)

    def _submit(self, pane: HostPane, lines: list[str]) -> None:
        """Lines the human typed into an agent pane: the gateway's evidence for gates and phases."""
        if pane.agent is not None and not pane.agent.closed:
            for line in lines:
                self.workspace.lines.submit(pane.agent, line)


def release_memory() -> None:
    """Give the system back the heap pages freed since (glibc's ``malloc_trim``; elsewhere nothing):
    a flood's scrollback, once compacted, would otherwise stay resident, scattered among live objects."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)
