"""The window's one screen: the session's panes, and the keys and palette commands that act on them.

Keys go to the focused pane, except the prefix key (default ``ctrl+b``) and a direct palette key if one is
configured; after the prefix, one key runs a command from :data:`~polter.window.prefix.PREFIX_COMMANDS` (``:`` or
``p``: the command palette, as tmux's command prompt) and the prefix key again sends itself to the pane.

:class:`SessionScreen` is made of parts that each own one concern, as the session host is: the
:class:`~polter.window.pane_grid.PaneGrid` (the panes on screen, their layout and zoom),
:class:`~polter.window.pane_focus.PaneFocus` (which pane has the keyboard),
:class:`~polter.window.pane_actions.PaneActions` (opening, closing, restarting panes; leaving),
:class:`~polter.window.asks.AskDesk` (the asks and their modal),
:class:`~polter.window.host_questions.HostQuestions`, :class:`~polter.window.server_forms.ServerForms` (servers' forms),
:class:`~polter.window.notices.SessionNotices`,
:class:`~polter.window.agent_actions.AgentActions` (roles, phases, capabilities, audit, muting) and
:class:`~polter.window.pane_worktrees.WorktreePaneActions`. The screen hears the session
(:class:`~polter.window.remote.RemoteSession`) and hands each event to the parts it concerns; the palette
providers of :mod:`polter.window.commands` call the parts.
"""

from __future__ import annotations

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.message import Message
from textual.selection import Selection
from textual.widget import Widget
from textual.widgets import Static

from polter.terminal.keys import encode_key
from polter.window.agent_actions import AgentActions
from polter.window.asks import AskDesk
from polter.window.commands import (
    AttentionCommands,
    GatewayCommands,
    PaneCommands,
    RoleCommands,
    SessionCommands,
    WorktreeCommands,
)
from polter.window.echo_screen import EchoScreen
from polter.window.host_questions import HostQuestions
from polter.window.layout import Direction
from polter.window.notices import SessionNotices
from polter.window.pane import PaneWidget
from polter.window.pane_actions import PaneActions
from polter.window.pane_focus import PaneFocus
from polter.window.pane_grid import PaneGrid
from polter.window.pane_worktrees import WorktreePaneActions
from polter.window.prefix import DEFAULT_PREFIX, PREFIX_COMMANDS, PREFIX_HINTS, PrefixScreen, format_key_name
from polter.window.remote import RemoteSession
from polter.window.server_forms import ServerForms
from polter.window.styles_cache import forget_styles_cache
from polter.window.terminal_view import TerminalView
from polter.wire import messages as wire
from polter.wire.options import LayoutMode

__all__ = ["SessionScreen"]


class SessionScreen(EchoScreen[None]):
    """The session ``session`` (its layout, prefix key, and the pane the last window focused and zoomed)."""

    class Shown(Message):
        """A pane has the keyboard (or the session started with none): what was typed before may go on now."""

    DEFAULT_CSS = """
    SessionScreen {
        & > #starting {
            dock: top;
            width: 1fr;
            height: 1fr;
            content-align: center middle;
            color: $text-muted;
        }
    }
    """

    BINDINGS = [Binding(DEFAULT_PREFIX, "prefix", "Prefix", id="polter.prefix", priority=True, show=False)]
    AUTO_FOCUS = None  # the first pane is focused on mount; after that the user decides
    COMMANDS = EchoScreen.COMMANDS | {
        AttentionCommands,
        PaneCommands,
        RoleCommands,
        GatewayCommands,
        WorktreeCommands,
        SessionCommands,
    }

    def __init__(
        self,
        session: RemoteSession,
        *,
        layout_mode: LayoutMode = "grid",
        prefix: str = DEFAULT_PREFIX,
        active: str | None = None,
        zoomed: str | None = None,
    ) -> None:
        super().__init__()
        self.session = session
        self.prefix = prefix
        self.grid = PaneGrid(layout_mode=layout_mode, prefix=prefix)
        self.pane_focus = PaneFocus(self)
        self.pane_actions = PaneActions(self)
        self.asks = AskDesk(self)
        self.questions = HostQuestions(self)
        self.forms = ServerForms(self)
        self.notices = SessionNotices(self)
        self.agents = AgentActions(self)
        self.worktrees = WorktreePaneActions(self)
        self._start_at = (active, zoomed)
        self._copied: dict[Widget, Selection] = {}
        self._keyboard_ready = False
        """A pane has had the keyboard, or the session started with none."""
        self._was_shown = False

    @property
    def active_pane(self) -> PaneWidget | None:
        """The pane with the keyboard focus (or the last one that had it)."""
        return self.pane_focus.active

    @property
    def ready(self) -> bool:
        return self.session.ready

    def compose(self) -> ComposeResult:
        yield self.grid
        if not self.session.ready:
            yield Static("Starting Polter's gateway…", id="starting")

    async def on_mount(self) -> None:
        self.app.update_keymap({"polter.prefix": self.prefix})
        for index, remote in enumerate(self.session.panes):
            await self.grid.add_pane(remote, index)
        active, zoomed = self._start_at
        start = self.grid.pane_of(active) if active else None
        if zoomed and (zoom := self.grid.pane_of(zoomed)) is not None:
            self.grid.zoomed = zoom
        panes = self.grid.panes
        start = start or (panes[0] if panes else None)
        if start is not None:
            start.terminal.focus()
        self.session.messages.subscribe(self)

    def on_screen_resume(self) -> None:
        """A prefix key's hints, the palette or a dialog closed: Textual forgets their widgets' lines."""
        forget_styles_cache()
        self._announce_shown()

    @on(events.DescendantFocus)
    def _track_focus(self, event: events.DescendantFocus) -> None:
        for node in event.widget.ancestors_with_self:
            if isinstance(node, PaneWidget):
                self.pane_focus.focused(node)
                self._keyboard_ready = True
                self._announce_shown()
                return

    def _announce_shown(self) -> None:
        """Post :class:`Shown` once the keyboard is ready here, with this screen on top: keys typed ahead must not
        answer a dialog the human has not seen yet."""
        if self._keyboard_ready and self.is_current and not self._was_shown:
            self._was_shown = True
            self.post_message(self.Shown())

    @on(events.TextSelected)
    @on(TerminalView.Selected)
    def _copy_selection(self) -> None:
        """Text selected in a pane (dragged over, or a word or line clicked) is copied at once, as in a
        terminal (through the outer terminal's clipboard, OSC 52): keys like ctrl+c belong to the
        pane's program. A selection is copied once, however many messages announce it."""
        selections = dict(self.selections)
        if selections == self._copied:
            return
        self._copied = selections  # (a click clears the selection: the same text may be copied again)
        text = self.get_selected_text()
        if text:
            self.app.copy_to_clipboard(text)
            lines = text.count("\n") + 1
            self.notify(f"Copied {len(text)} characters" + (f" ({lines} lines)." if lines > 1 else "."), timeout=2)

    # -- what the session reports ----------------------------------------------------------------

    @on(RemoteSession.Event)
    async def _session_event(self, message: RemoteSession.Event) -> None:
        event = message.event
        match event:
            case wire.PaneAdded(pane=state, index=index):
                remote = self.session.pane(state.id)
                if remote is not None and self.grid.pane_of(state.id) is None:
                    self.pane_focus.added(await self.grid.add_pane(remote, index))
            case wire.PaneRemoved(pane=pane_id):
                await self._pane_removed(pane_id)
            case wire.PaneUpdated(pane=state):
                if (pane := self.grid.pane_of(state.id)) is not None:
                    pane.show_state()
            case wire.LayoutEvent(layout=layout):
                self.grid.layout_mode = layout
            case wire.Ready():
                for starting in self.query("#starting"):
                    starting.remove()
                if not self.grid.panes:
                    self._keyboard_ready = True
                    self._announce_shown()
            case wire.AskClosedEvent(ask=ask):
                self.asks.closed(ask)
            case wire.Question():
                self.questions.asked(event)
            case wire.QuestionClosed():
                self.questions.closed(event)
            case wire.ElicitationEvent(elicitation=elicitation):
                self.forms.asked(elicitation)
            case wire.ElicitationClosedEvent(elicitation=elicitation):
                self.forms.closed(elicitation)
            case wire.Ended(reason=reason, failed=failed):
                if failed or not self.pane_actions.leaving:
                    text = f"polter: session {self.session.name} ended: {reason}"
                    self.app.exit(return_code=1 if failed else 0, message=text)
        self.notices.heard(event)

    async def _pane_removed(self, pane_id: str) -> None:
        pane = self.grid.pane_of(pane_id)
        if pane is None:
            return
        index = self.grid.panes.index(pane)
        focused = pane is self.pane_focus.active
        await self.grid.remove_pane(pane)
        forget_styles_cache()
        remaining = self.grid.panes
        if remaining and focused:
            self.pane_focus.go_to(remaining[min(index, len(remaining) - 1)])

    @on(RemoteSession.AskRequested)
    def _ask_requested(self, message: RemoteSession.AskRequested) -> None:
        self.asks.requested(message.ask, message.future)

    @on(RemoteSession.Reconnecting)
    def _reconnecting(self, message: RemoteSession.Reconnecting) -> None:
        for pane in self.grid.panes:
            pane.show_host()
        self.notify(
            f"{message.reason}\nTrying again in {message.delay:g} s (try {message.attempt}); the session runs on. "
            "What you type until then is not sent.",
            title=f"Reconnecting to {self.session.name}",
            severity="warning",
            timeout=max(3.0, message.delay + 1),
        )

    @on(RemoteSession.Reconnected)
    def _reconnected(self, message: RemoteSession.Reconnected) -> None:
        for pane in self.grid.panes:
            pane.show_host()
        for question in message.questions_gone:
            self.questions.gone(question)
        self.notify(f"Attached to {self.session.name} again.", title="Reconnected", timeout=4)

    @on(RemoteSession.Lost)
    def _lost(self, message: RemoteSession.Lost) -> None:
        if not self.pane_actions.leaving:
            self.app.exit(return_code=1, message=f"polter: lost session {self.session.name}: {message.reason}")

    # -- the prefix key ----------------------------------------------------------------------------

    def action_prefix(self) -> None:
        prefix_screen = PrefixScreen(format_key_name(self.prefix), PREFIX_HINTS)

        async def after_prefix(key: str | None) -> None:
            try:
                if key == self.prefix:
                    self.action_send_prefix()
                elif key in PREFIX_COMMANDS:
                    await self.run_action(PREFIX_COMMANDS[key])
            finally:
                prefix_screen.release()

        self.app.push_screen(prefix_screen, after_prefix)

    def action_send_prefix(self) -> None:
        pane = self.pane_focus.active
        data = encode_key(self.prefix)
        if pane is not None and data is not None:
            pane.terminal.send(data)

    @property
    def palette_hint(self) -> str:
        """How to open the command palette, for messages: ``^b :``, or the direct key if one is set."""
        direct = getattr(self.app, "palette_key", None)
        return format_key_name(direct) if direct else f"{format_key_name(self.prefix)} :"

    # -- what the keys after the prefix do (PREFIX_COMMANDS) ----------------------------------------------

    def action_focus_direction(self, direction: Direction) -> None:
        self.pane_focus.direction(direction)

    def action_focus_number(self, number: int) -> None:
        self.pane_focus.number(number)

    def action_focus_next(self) -> None:
        self.pane_focus.next()

    def action_focus_sender(self) -> None:
        self.pane_focus.sender()

    def action_next_waiting(self) -> None:
        self.pane_focus.next_waiting()

    def action_toggle_zoom(self) -> None:
        self.pane_focus.toggle_zoom()

    def action_next_layout(self) -> None:
        self.pane_focus.next_layout()

    def action_scroll_mode(self, page_up: bool = False) -> None:
        self.pane_focus.scroll_mode(page_up)

    def action_new_pane(self) -> None:
        self.pane_actions.new_like_focused()

    def action_close_pane(self) -> None:
        if (pane := self.pane_focus.active) is not None:
            self.pane_actions.close(pane)

    def action_restart_pane(self) -> None:
        if (pane := self.pane_focus.active) is not None:
            self.pane_actions.restart(pane)

    def action_quit(self) -> None:
        self.pane_actions.quit()

    async def action_detach(self) -> None:
        await self.pane_actions.detach()

    def action_command_palette(self) -> None:
        self.app.action_command_palette()

    def action_help(self) -> None:
        """Every key, on a screen of its own."""
        from polter.window.help_screen import HelpScreen  # lazy: Textual's Markdown, with markdown-it and pygments

        self.app.push_screen(HelpScreen(self.prefix, getattr(self.app, "palette_key", None)))
