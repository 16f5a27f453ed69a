"""A pane: a header over a terminal. It keeps the header in step with the program in the terminal,
and, for an agent pane, with what the gateway and the adapter say (role, phase, state, asks)."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual import events, on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.reactive import reactive

from polter.adapters import AgentState
from polter.session.agent_state import screen_activity
from polter.session.typed_line import TypedLine
from polter.terminal.launch import LaunchSpec
from polter.terminal.widget import TerminalView, TypingClock
from polter.ui.pane_header import BadgeVariant, PaneHeader

if TYPE_CHECKING:
    from polter.session.agents import AgentPane

__all__ = ["Pane"]

_STATE_BADGES: dict[AgentState, tuple[str, BadgeVariant]] = {
    AgentState.WORKING: ("working", "success"),
    AgentState.WAITING: ("waiting for you", "warning"),
    AgentState.IDLE: ("idle", "default"),
}


class Pane(Vertical):
    """One program in the multiplexer, with its header. ``number`` is its 1-based place on screen."""

    DEFAULT_CSS = """
    Pane {
        width: 1fr;
        height: 1fr;
        &:focus-within > PaneHeader {
            background: $primary;
            color: $text;
            & > #pane-status { color: $text; }
        }
    }
    """

    number: reactive[int] = reactive(1)

    class LineSubmitted(Message):
        """The human submitted a line in this pane's program (rebuilt from the keys; see TypedLine)."""

        def __init__(self, pane: Pane, line: str) -> None:
            super().__init__()
            self.pane, self.line = pane, line

        @property
        def control(self) -> Pane:
            return self.pane

    def __init__(
        self,
        spec: LaunchSpec,
        *,
        number: int = 1,
        scrollback: int = 10_000,
        agent: AgentPane | None = None,
        typing: TypingClock | None = None,
    ) -> None:
        super().__init__()
        self.spec = spec
        self.agent = agent
        """The pane's link to the gateway (None for a plain program)."""
        self.pending_asks = 0
        self.agent_state: AgentState | None = None
        self.typed = TypedLine()
        self.last_input = 0.0
        self.set_reactive(Pane.number, number)
        self.header = PaneHeader()
        self.header.set_reactive(PaneHeader.number, number)
        self.terminal = TerminalView(spec, scrollback=scrollback, typing=typing)
        self.header.set_reactive(PaneHeader.title, self.terminal.program_title)

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.terminal

    def on_mount(self) -> None:
        if self.agent is not None:
            self.show_agent()

    def watch_number(self, number: int) -> None:
        self.header.number = number

    @property
    def running(self) -> bool:
        return self.terminal.running

    @on(events.DescendantFocus)
    @on(events.DescendantBlur)
    def _restyle_header(self) -> None:
        """The header follows ``:focus-within`` down to its labels: Textual 8.2 restyles them, but a
        status label styled while its pane had the focus kept the focused colour after it left."""
        self.app.update_styles(self.header, animate=False)

    def on_click(self) -> None:
        """A click on the header (the terminal focuses itself) also makes this the active pane."""
        self.terminal.focus()

    @on(TerminalView.Started)
    @on(TerminalView.Exited)
    @on(TerminalView.SpawnFailed)
    def _status_changed(self) -> None:
        terminal = self.terminal
        self.header.status = terminal.status_text
        if terminal.spawn_error is not None:
            self.header.status_kind = "failed"
        elif terminal.returncode is not None:
            self.header.status_kind = "exited"
        else:
            self.header.status_kind = "running"
        self.header.title = terminal.program_title

    @on(TerminalView.TitleChanged)
    def _title_changed(self, event: TerminalView.TitleChanged) -> None:
        self.header.title = event.title

    @on(TerminalView.ScrollChanged)
    def _scroll_changed(self, event: TerminalView.ScrollChanged) -> None:
        if event.scroll_mode or event.offset:
            label = "scroll" if event.scroll_mode else "history"
            self.header.position = f"{label} {event.offset}/{event.history}"
        else:
            self.header.position = ""

    # -- the human's lines ------------------------------------------------------------------------

    @on(TerminalView.InputSent)
    def _input_sent(self, event: TerminalView.InputSent) -> None:
        event.stop()
        self.last_input = time.monotonic()
        if event.key is None:
            lines = self.typed.paste(event.text, bracketed=event.bracketed)
        else:
            line = self.typed.key(event.key, event.text or None)
            lines = [line] if line is not None else []
        for line in lines:
            self.post_message(self.LineSubmitted(self, line))

    # -- the agent --------------------------------------------------------------------------------

    def read_agent_state(self, now: float | None = None) -> AgentState | None:
        """What the agent is doing: its adapter reads the screen, else screen activity tells."""
        terminal = self.terminal
        if self.agent is None or not terminal.running or terminal.screen_model is None:
            return None
        state = self.agent.adapter.state(terminal.screen_model)
        if state is None:
            process = terminal.process
            foreground = process.foreground_process_group() if process is not None else None
            state = screen_activity(
                time.monotonic() if now is None else now,
                terminal.last_output,
                self.last_input,
                foreground_job=foreground is not None and process is not None and foreground != process.pid,
            )
        return state

    def update_agent_state(self) -> None:
        state = self.read_agent_state()
        if state != self.agent_state:
            self.agent_state = state
            self.show_agent()

    def show_agent(self) -> None:
        """Bring the header's badges in line with the agent (adapter, role, phase, state, asks, restart)."""
        agent, header = self.agent, self.header
        if agent is None:
            return
        plan = agent.plan
        adapter = agent.adapter.display_name
        header.set_badge("adapter", f"{adapter} ({plan.why})" if plan.why else adapter, tooltip=plan.reason)
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
        state = AgentState.WAITING if self.pending_asks else self.agent_state  # its call waits for your answer
        if state is None:
            header.set_badge("state", None)
        else:
            text, variant = _STATE_BADGES[state]
            header.set_badge("state", text, variant)
        asks = self.pending_asks
        header.set_badge(
            "asks",
            None if not asks else "ask" if asks == 1 else f"{asks} asks",
            "error",
            tooltip="a call waits for your answer (the command palette: pending asks)",
        )
        header.set_badge(
            "restart", "restart to apply" if agent.restart_needed else None, "warning", tooltip=agent.restart_needed
        )
