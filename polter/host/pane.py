"""One pane of a session as its host keeps it: the program and its screen, the line the human is typing,
and for an agent pane its link to the gateway, what the agent is doing and its own worktree if it has one."""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import datetime

from polter.host.agent_state import screen_activity
from polter.host.agents import Agent
from polter.host.hosted_terminal import HostedTerminal, TypingClock
from polter.host.pane_worktree import PaneWorktree
from polter.host.transitions import Reading, current_reading
from polter.host.typed_line import TypedLine
from polter.protocol import AgentState, StateReport
from polter.terminal.launch import LaunchSpec
from polter.wire.messages import AgentView, Handoffs, PaneState, StatusKind

__all__ = ["HostPane"]


class HostPane:
    """A program on a pseudo-terminal (:class:`HostedTerminal`), and for an agent pane its
    :class:`Agent`. ``on_frame(pane, dirty)`` and ``on_change(pane)`` are the terminal's
    callbacks with the pane added."""

    def __init__(
        self,
        pane_id: str,
        spec: LaunchSpec,
        *,
        agent: Agent | None = None,
        scrollback: int = 10_000,
        typing: TypingClock | None = None,
        on_frame: Callable[[HostPane, set[int] | None], None] = lambda pane, dirty: None,
        on_change: Callable[[HostPane], None] = lambda pane: None,
    ) -> None:
        self.id = pane_id
        self.agent = agent
        self.terminal = HostedTerminal(
            spec,
            scrollback=scrollback,
            typing=typing,
            on_frame=lambda dirty: on_frame(self, dirty),
            on_change=lambda: on_change(self),
        )
        self.typed = TypedLine()
        self.agent_state: AgentState | None = None
        self.reading = Reading(None)
        """What the agent does and where that came from (a pending ask, the CLI's hooks, the screen)."""
        self.report: StateReport | None = None
        """What the CLI's own hooks said last, and when (``time.monotonic()``)."""
        self.reported_at = 0.0
        self.waiting_since: datetime | None = None
        """When the agent's wait for the human settled (the waiting list is oldest first)."""
        self.muted = agent is not None and not agent.setup.notify
        """No notifications for this pane (``notify = false``, or muted from the palette)."""
        self.size: tuple[int, int] | None = None
        """The size the pane's windows last asked for (it starts at the first one)."""
        self.worktree: PaneWorktree | None = None
        """The git worktree of its own the pane runs in (docs/worktrees.md)."""
        self.task_from: tuple[str, str] | None = None
        """The pane (id, label) whose agent gave this one its current task, and how many messages wait for it
        (kept by the host's :class:`~polter.host.team.Team`)."""
        self.queued = 0
        self.handoffs: Handoffs = "on"
        """What the human lets other agents do with this pane (the palette's hand-off commands)."""

    # -- input: what the human types, followed as the line they submit ------------------------------

    def key(self, key: str, character: str | None) -> list[str]:
        """Send a key to the program; the lines it submitted (for the gateway's gates and phases)."""
        if not self.terminal.key(key, character):
            return []
        line = self.typed.key(key, character or None)
        return [line] if line is not None else []

    def paste(self, text: str) -> list[str]:
        if not self.terminal.running:
            return []
        bracketed = self.terminal.paste(text)
        return self.typed.paste(text, bracketed=bracketed)

    def resize(self, columns: int, lines: int) -> None:
        """Take the size a window gives the pane: the program starts at the first one."""
        self.size = (columns, lines)
        if self.terminal.started:
            self.terminal.resize(columns, lines)
        else:
            self.terminal.start(columns, lines)

    # -- the agent --------------------------------------------------------------------------------

    def read_agent_state(self, now: float | None = None) -> AgentState | None:
        """What the agent is doing: its adapter reads the screen, else screen activity tells."""
        terminal = self.terminal
        if self.agent is None or not terminal.running or terminal.screen is None:
            return None
        state = self.agent.adapter.state(terminal.screen)
        if state is None:
            process = terminal.process
            foreground = process.foreground_process_group() if process is not None else None
            state = screen_activity(
                time.monotonic() if now is None else now,
                terminal.last_output,
                terminal.last_input,
                foreground_job=foreground is not None and process is not None and foreground != process.program_group,
                last_resize=terminal.last_resize,
            )
        return state

    def update_agent_state(self, asks: list[str] | None = None) -> bool:
        """Read the agent's state again (``asks``: its pending asks, one line each); whether what the header
        shows of it changed."""
        terminal = self.terminal
        report = self.report if terminal.running else None
        reading = current_reading(
            screen=self.read_agent_state(),
            report=report,
            reported_at=self.reported_at,
            last_input=terminal.last_input,
            asks=asks or [],
        )
        if reading == self.reading:
            return False
        self.reading, self.agent_state = reading, reading.state
        return True

    def take_report(self, report: StateReport) -> None:
        """What the CLI's own hooks just said (believed until the human types into the pane)."""
        self.report, self.reported_at = report, time.monotonic()

    # -- what windows show --------------------------------------------------------------------------

    def state(self) -> PaneState:
        terminal = self.terminal
        kind: StatusKind
        if terminal.spawn_error is not None:
            kind = "failed"
        elif terminal.returncode is not None:
            kind = "exited"
        elif terminal.running:
            kind = "running"
        else:
            kind = "starting"
        return PaneState(
            id=self.id,
            title=terminal.program_title,
            status=terminal.status_text,
            status_kind=kind,
            spawn_error=terminal.spawn_error,
            agent=self._agent_view(),
            worktree=self.worktree.view() if self.worktree is not None else None,
        )

    def _agent_view(self) -> AgentView | None:
        agent = self.agent
        if agent is None:
            return None
        adapter = agent.adapter
        return AgentView(
            adapter=adapter.name,
            display_name=adapter.display_name,
            description=adapter.info.description,
            resumes=adapter.info.resume,
            why=agent.plan.why,
            reason=agent.plan.reason,
            title=agent.title,
            role=agent.role,
            role_found=agent.role_found,
            phase=agent.phase,
            pending_asks=agent.pending_asks,
            restart_needed=agent.restart_needed,
            state=self.agent_state,
            state_source=self.reading.source,
            state_event=self.reading.event,
            state_why=self.reading.why,
            waiting_since=self.waiting_since,
            muted=self.muted,
            warnings=list(agent.warnings),
            task_from=self.task_from[0] if self.task_from else None,
            task_from_label=self.task_from[1] if self.task_from else None,
            queued=self.queued,
            handoffs=self.handoffs,
        )
