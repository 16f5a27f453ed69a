"""A pane: a header over a terminal, both showing a pane of the session (:class:`RemotePane`).

The header follows the pane's state as the host reports it (status, title, and for an agent pane the
adapter, role, phase, what the agent is doing, pending asks, restart-needed, its worktree); the terminal draws the
pane's screen and sends the human's input to the host."""

from __future__ import annotations

from datetime import datetime

from textual import events, on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.reactive import reactive
from textual.widgets import Static

from polter.protocol import AgentState
from polter.window.pane_header import BadgeVariant, PaneHeader
from polter.window.plain_app import plain
from polter.window.prefix import DEFAULT_PREFIX, format_key_name
from polter.window.remote import RemotePane
from polter.window.terminal_view import TerminalView
from polter.wire.messages import AgentView

__all__ = ["PaneWidget"]


def _state_tooltip(agent: AgentView) -> str:
    """Where the state came from, and why it waits (or what it said last)."""
    if agent.state_source == "cli":
        source = f"reported by {agent.display_name}'s own hooks ({agent.state_event})"
    elif agent.state_source == "ask":
        source = "a call waits for your answer in Polter"
    else:
        source = "read from its screen"
    return f"{source}: {agent.state_why}" if agent.state_why else source


_STATE_BADGES: dict[AgentState, tuple[str, BadgeVariant]] = {
    AgentState.WORKING: ("working", "success"),
    AgentState.WAITING: ("waiting for you", "warning"),
    AgentState.IDLE: ("idle", "default"),
}


class PaneWidget(Vertical):
    """One pane of the session, with its header. ``number`` is its 1-based place on screen."""

    DEFAULT_CSS = """
    PaneWidget {
        width: 1fr;
        height: 1fr;
        layers: terminal hint;
        & > #ended-hint {
            display: none;
            layer: hint;
            dock: bottom;
            height: 1;
            padding: 0 1;
            background: $warning-muted;
            color: $text-warning;
            text-wrap: nowrap;
            text-overflow: ellipsis;
        }
        &.-exited > #ended-hint, &.-failed > #ended-hint { display: block; }
        &.-waiting > PaneHeader {
            background: $warning-muted;
            color: $text-warning;
            text-style: bold;
        }
        &:focus-within > PaneHeader {
            background: $primary;
            color: $text;
            & > #pane-status { color: $text; }
        }
    }
    """

    number: reactive[int] = reactive(1)

    def __init__(self, remote: RemotePane, *, number: int = 1, prefix: str = DEFAULT_PREFIX) -> None:
        super().__init__()
        self.prefix_shown = format_key_name(prefix)
        """The prefix key as the ended pane's hint names it (``^b``)."""
        self.remote = remote
        self.pending_asks = 0
        """Asks of this pane waiting in this window's queue."""
        self.set_reactive(PaneWidget.number, number)
        self.header = PaneHeader()
        self.header.set_reactive(PaneHeader.number, number)
        self.header.set_reactive(PaneHeader.title, remote.state.title)
        self.terminal = TerminalView(remote.terminal)
        self.ended_hint = Static(id="ended-hint")
        """What to do with a pane whose program ended (its keys go nowhere): over the screen's last row, on a layer
        of its own, so that the ended program's screen keeps its size."""

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.terminal
        yield self.ended_hint

    def on_mount(self) -> None:
        self.show_state()

    def watch_number(self, number: int) -> None:
        self.header.number = number

    @property
    def id_in_session(self) -> str:
        return self.remote.id

    @property
    def agent(self) -> AgentView | None:
        return self.remote.agent

    @property
    def waiting_since(self) -> datetime | None:
        """When its agent's wait for the human settled (None: it does not wait)."""
        agent = self.remote.agent
        return agent.waiting_since if agent is not None else None

    @property
    def running(self) -> bool:
        return self.remote.state.running

    @property
    def title(self) -> str:
        return self.remote.state.title

    @on(events.DescendantFocus)
    @on(events.DescendantBlur)
    def _restyle_header(self) -> None:
        """The header follows ``:focus-within`` down to its labels: Textual 8.2 restyles them, but a
        status label styled while its pane had the focus kept the focused colour after it left."""
        self.app.update_styles(self.header, animate=False)

    def on_click(self) -> None:
        """A click on the header (the terminal focuses itself) also makes this the active pane."""
        self.terminal.focus()

    @on(TerminalView.ScrollChanged)
    def _scroll_changed(self, event: TerminalView.ScrollChanged) -> None:
        if event.scroll_mode or event.offset:
            label = "scroll" if event.scroll_mode else "history"
            self.header.position = f"{label} {event.offset}/{event.history}"
        else:
            self.header.position = ""

    def show_host(self) -> None:
        """The host the pane runs on, when it is another machine (``@gpu``; ``@gpu reconnecting`` while the
        connection is being made again)."""
        session = self.remote.session
        if session.ssh_host is None:
            return
        if session.reconnection.active:
            self.header.set_badge("host", f"@{session.ssh_host} reconnecting…", "warning", tooltip="the SSH link broke")
        else:
            self.header.set_badge("host", f"@{session.ssh_host}", tooltip=f"session {session.name}, over SSH")

    def show_state(self) -> None:
        """Bring the header in line with the pane's state (status, title, and the agent's badges)."""
        state, header = self.remote.state, self.header
        header.status = state.status
        header.status_kind = state.status_kind
        header.title = state.title
        self.set_class(state.status_kind == "exited", "-exited")
        self.set_class(state.status_kind == "failed", "-failed")
        if state.status_kind in ("exited", "failed"):
            key = self.prefix_shown
            self.ended_hint.update(plain(f"{state.status} · {key} r restarts it · {key} x closes it"))
        self.show_host()
        agent = state.agent
        if agent is None:
            return
        adapter = agent.display_name
        header.set_badge("adapter", f"{adapter} ({agent.why})" if agent.why else adapter, tooltip=agent.reason)
        if agent.role_found:
            header.set_badge("role", agent.role, "primary", tooltip=f"role {agent.role}")
        else:
            header.set_badge(
                "role",
                f"{agent.role}?",
                "error",
                tooltip=f"no role named {agent.role} is loaded: this pane can call nothing",
            )
        if agent.phase is None:
            header.set_badge("phase", None)
        else:
            header.set_badge(
                "phase",
                agent.phase,
                "warning" if agent.phase == "action" else "default",
                tooltip="research: read-only tools; action: everything the role allows",
            )
        asks = max(self.pending_asks, agent.pending_asks)
        state_now = AgentState.WAITING if asks else agent.state  # its call waits for your answer
        self.set_class(agent.waiting_since is not None or asks > 0, "-waiting")
        if state_now is None:
            header.set_badge("state", None)
        else:
            text, variant = _STATE_BADGES[state_now]
            from_cli = agent.state_source == "cli" and not asks
            header.set_badge("state", f"{text} · hook" if from_cli else text, variant, tooltip=_state_tooltip(agent))
        header.set_badge("muted", "muted" if agent.muted else None, tooltip="no notifications for this pane")
        header.set_badge(
            "asks",
            None if not asks else "ask" if asks == 1 else f"{asks} asks",
            "error",
            tooltip="a call waits for your answer (the command palette: pending asks)",
        )
        header.set_badge(
            "task",
            f"from {agent.task_from_label}" if agent.task_from_label else None,
            "default",
            tooltip="the agent that gave this pane its current task (prefix then s: go to it)",
        )
        header.set_badge(
            "handoffs",
            None if agent.handoffs == "on" else f"hand-offs {agent.handoffs}",
            "warning",
            tooltip="what other agents may hand this pane (the command palette: Allow hand-offs)",
        )
        header.set_badge(
            "queued",
            f"{agent.queued} queued" if agent.queued else None,
            "warning",
            tooltip="messages of other agents, typed when this agent is idle",
        )
        header.set_badge(
            "restart",
            "restart to apply" if agent.restart_needed else None,
            "warning",
            tooltip=agent.restart_needed,
        )
        self._show_worktree()

    def _show_worktree(self) -> None:
        """The worktree badge: the branch and its change against the base (``polter/coder +120 -8 · 5 files``)."""
        view = self.remote.state.worktree
        if view is None:
            self.header.set_badge("worktree", None)
            return
        worktree = view.worktree
        tooltip = f"its own git worktree: {worktree.path}, on {worktree.branch}, merges into {worktree.base}"
        if view.missing:
            tooltip = f"{worktree.path} was deleted: Recreate worktree of pane {self.number} (command palette)"
        elif view.problem:
            tooltip = view.problem
        variant: BadgeVariant = "warning" if view.missing or view.problem else "default"
        self.header.set_badge("worktree", view.summary(), variant, tooltip=tooltip)
