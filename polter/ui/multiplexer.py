"""The main screen: the pane grid and the prefix-key commands that act on it."""

from __future__ import annotations

from typing import Final

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.keys import format_key
from textual.selection import Selection
from textual.widget import Widget

from polter.errors import PolterError
from polter.session.methods import OpenParams
from polter.session.protocol import LayoutMode
from polter.terminal.keys import encode_key
from polter.terminal.widget import TerminalView
from polter.ui.closed_widgets import forget_closed_widgets
from polter.ui.confirm import ConfirmScreen
from polter.ui.layout import LAYOUT_MODES, Direction
from polter.ui.leave_screen import LeaveScreen
from polter.ui.pane import PaneWidget
from polter.ui.pane_grid import PaneGrid
from polter.ui.prefix import PrefixScreen
from polter.ui.prompt_screen import PromptScreen
from polter.ui.remote import RemoteSession

__all__ = ["DEFAULT_PREFIX", "PREFIX_COMMANDS", "MultiplexerScreen", "format_key_name"]

DEFAULT_PREFIX: Final = "ctrl+b"

PREFIX_COMMANDS: Final[dict[str, str]] = {
    "left": "focus_direction('left')",
    "right": "focus_direction('right')",
    "up": "focus_direction('up')",
    "down": "focus_direction('down')",
    **{str(number): f"focus_number({number})" for number in range(1, 10)},
    "0": "focus_number(10)",
    "o": "focus_next",
    "n": "next_waiting",
    "z": "toggle_zoom",
    "c": "new_pane",
    "x": "close_pane",
    "r": "restart_pane",
    "left_square_bracket": "scroll_mode",
    "pageup": "scroll_mode(True)",
    "space": "next_layout",
    "colon": "command_palette",
    "p": "command_palette",
    "question_mark": "help",
    "d": "detach",
    "q": "quit",
}
"""What the key after the prefix does: a key name → an action of :class:`MultiplexerScreen`."""

PREFIX_HINTS: Final = (
    ("←↑→↓", "move"), ("1-9", "pane"), ("o", "next"), ("n", "waiting"), ("z", "zoom"), ("c", "new"), ("x", "close"),
    ("r", "restart"), ("[", "scroll"), ("space", "layout"), (": p", "commands"), ("?", "keys"),
    ("d", "detach"), ("q", "quit"),
)  # fmt: skip


class MultiplexerScreen(PromptScreen[None]):
    """The session's panes. Keys go to the focused pane, except the prefix key (default ``ctrl+b``)
    and a direct palette key if one is configured; after the prefix, one key runs a command from
    :data:`PREFIX_COMMANDS` (``:`` or ``p``: the command palette, as tmux's command prompt) and the
    prefix key again sends itself to the pane.

    The panes are the session host's (:class:`~polter.ui.remote.RemoteSession`): closing, restarting
    or opening one asks the host, and the grid follows what the host reports."""

    BINDINGS = [Binding(DEFAULT_PREFIX, "prefix", "Prefix", id="polter.prefix", priority=True, show=False)]
    AUTO_FOCUS = None  # the first pane is focused on mount; after that the user decides

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
        self.grid = PaneGrid(layout_mode=layout_mode)
        self._active: PaneWidget | None = None
        self._start_at = (active, zoomed)
        self._focus_when_added: str | None = None
        self._copied: dict[Widget, Selection] = {}
        self.leaving = False

    def compose(self) -> ComposeResult:
        yield self.grid

    async def on_mount(self) -> None:
        self.app.update_keymap({"polter.prefix": self.prefix})
        for index, remote in enumerate(self.session.panes):
            await self.grid.add_pane(remote, index)
        active, zoomed = self._start_at
        panes = self.grid.panes
        start = self.grid.pane_of(active) if active else None
        if zoomed and (zoom := self.grid.pane_of(zoomed)) is not None:
            self.grid.zoomed = zoom
        start = start or (panes[0] if panes else None)
        if start is not None:
            start.terminal.focus()
        self.session.subscribe(self)

    # -- which pane ----------------------------------------------------------------------------

    @property
    def active_pane(self) -> PaneWidget | None:
        """The pane with the keyboard focus (or the last one that had it)."""
        if self._active is not None and self._active.is_attached:
            return self._active
        panes = self.grid.panes
        return panes[0] if panes else None

    @on(events.DescendantFocus)
    def _track_focus(self, event: events.DescendantFocus) -> None:
        for node in event.widget.ancestors_with_self:
            if isinstance(node, PaneWidget):
                if node is not self._active:
                    self._active = node
                    self._remember_view()
                    self.report_looking()
                return

    def _remember_view(self) -> None:
        active = self._active.remote.id if self._active is not None else None
        zoomed = self.grid.zoomed.remote.id if self.grid.zoomed is not None else None
        self.session.set_view(active, zoomed)

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

    def report_looking(self, app_focused: bool | None = None) -> None:
        """Tell the host which pane the human looks at here (none while the terminal is in the background)."""
        active = self._active if self._active is not None and self._active.is_attached else None
        focused = self.app.app_focus if app_focused is None else app_focused
        self.session.set_looking(
            active.remote.id if active is not None else None, focused, notifies=self.terminal_notifies
        )

    @property
    def terminal_notifies(self) -> bool:
        """Whether this window's terminal raises desktop notifications itself (a screen that tells it says so)."""
        return False

    def waiting_panes(self) -> list[PaneWidget]:
        """The panes whose agent waits for the human, the one waiting longest first."""
        waiting = [pane for pane in self.grid.panes if pane.waiting_since is not None]
        return sorted(waiting, key=lambda pane: pane.waiting_since or 0)

    def focus_pane(self, pane: PaneWidget) -> None:
        if self.grid.zoomed is not None and self.grid.zoomed is not pane:
            self.grid.zoomed = None
        pane.terminal.focus()

    # -- what the session reports ----------------------------------------------------------------

    @on(RemoteSession.PaneAdded)
    async def _pane_added(self, event: RemoteSession.PaneAdded) -> None:
        if self.grid.pane_of(event.pane.id) is not None:
            return
        pane = await self.grid.add_pane(event.pane, event.index)
        if self._focus_when_added == event.pane.id or len(self.grid.panes) == 1:
            self._focus_when_added = None
            pane.terminal.focus()

    def on_screen_resume(self) -> None:
        """A prefix key's hints, the palette or a dialog closed: Textual forgets their widgets' lines."""
        forget_closed_widgets()

    @on(RemoteSession.PaneRemoved)
    async def _pane_removed(self, event: RemoteSession.PaneRemoved) -> None:
        pane = self.grid.pane_of(event.pane.id)
        if pane is None:
            return
        panes = self.grid.panes
        index = panes.index(pane)
        focused = pane is self.active_pane
        await self.grid.remove_pane(pane)
        forget_closed_widgets()
        remaining = self.grid.panes
        if remaining and focused:
            self.focus_pane(remaining[min(index, len(remaining) - 1)])

    @on(RemoteSession.PaneChanged)
    def _pane_changed(self, event: RemoteSession.PaneChanged) -> None:
        pane = self.grid.pane_of(event.pane.id)
        if pane is not None:
            pane.show_state()

    @on(RemoteSession.LayoutChanged)
    def _layout_changed(self, event: RemoteSession.LayoutChanged) -> None:
        self.grid.layout_mode = event.layout

    @on(RemoteSession.Ended)
    def _ended(self, event: RemoteSession.Ended) -> None:
        if self.leaving and not event.failed:
            return
        if event.lost:
            message = f"polter: lost session {self.session.name}: {event.reason}"
        else:
            message = f"polter: session {self.session.name} ended: {event.reason}"
        self.app.exit(return_code=1 if event.failed or event.lost else 0, message=message)

    # -- prefix --------------------------------------------------------------------------------

    def action_prefix(self) -> None:
        prefix_screen = PrefixScreen(format_key_name(self.prefix), PREFIX_HINTS)

        async def after_prefix(key: str | None) -> None:
            try:
                await self._after_prefix(key)
            finally:
                prefix_screen.release()

        self.app.push_screen(prefix_screen, after_prefix)

    async def _after_prefix(self, key: str | None) -> None:
        if key is None:
            return
        if key == self.prefix:
            self.action_send_prefix()
        elif key in PREFIX_COMMANDS:
            await self.run_action(PREFIX_COMMANDS[key])

    def action_send_prefix(self) -> None:
        pane = self.active_pane
        data = encode_key(self.prefix)
        if pane is not None and data is not None:
            pane.terminal.send(data)

    # -- commands ------------------------------------------------------------------------------

    def action_focus_direction(self, direction: Direction) -> None:
        pane = self.active_pane
        if pane is None:
            return
        if self.grid.zoomed is not None:
            self.grid.zoomed = None
            self.call_after_refresh(self.action_focus_direction, direction)
            return
        target = self.grid.neighbour(pane, direction)
        if target is not None:
            self.focus_pane(target)

    def action_focus_number(self, number: int) -> None:
        panes = self.grid.panes
        if 1 <= number <= len(panes):
            self.focus_pane(panes[number - 1])

    def action_focus_next(self) -> None:
        panes = self.grid.panes
        pane = self.active_pane
        if pane is not None and panes:
            self.focus_pane(panes[(panes.index(pane) + 1) % len(panes)])

    def action_next_waiting(self) -> None:
        """Focus the next pane that waits for you: the one waiting longest, then the next oldest, and so on."""
        waiting = self.waiting_panes()
        if not waiting:
            self.notify("No pane waits for you.")
            return
        active = self.active_pane
        index = waiting.index(active) + 1 if active in waiting else 0
        target = waiting[index % len(waiting)]
        if target is not active:
            self.focus_pane(target)
            self.arrived_at_waiting(target)
        elif not self.arrived_at_waiting(target):
            self.notify(f"Only pane {target.number} waits for you.")

    def arrived_at_waiting(self, pane: PaneWidget) -> bool:
        """The human went to ``pane``, which waits for them: show what it waits for, if this screen can (True
        when it did)."""
        return False

    def action_toggle_zoom(self) -> None:
        pane = self.active_pane
        if pane is not None:
            self.grid.toggle_zoom(pane)
            pane.terminal.focus()
            self._remember_view()

    def action_next_layout(self) -> None:
        modes = LAYOUT_MODES
        self.grid.layout_mode = modes[(modes.index(self.grid.layout_mode) + 1) % len(modes)]
        self.session.set_layout(self.grid.layout_mode)

    @work(exclusive=True, group="pane-command")
    async def action_new_pane(self) -> None:
        """A new pane like the focused one (its CLI and role; a shell beside a plain program), started
        in the directory the focused pane's program is in."""
        pane = self.active_pane
        await self.open_pane(OpenParams(like=pane.remote.id if pane is not None else None))

    async def open_pane(self, how: OpenParams) -> None:
        """Ask the session for a new pane (see :class:`OpenParams`); it is focused once it shows."""
        try:
            self._focus_when_added = await self.session.open(how)
        except PolterError as exc:
            self.notify(f"Could not open a pane: {exc}", severity="error", timeout=15)
            return
        pane = self.grid.pane_of(self._focus_when_added)
        if pane is not None:
            self._focus_when_added = None
            pane.terminal.focus()

    def action_close_pane(self) -> None:
        if (pane := self.active_pane) is not None:
            self.close_pane(pane)

    @work(exclusive=True, group="pane-command")
    async def close_pane(self, pane: PaneWidget) -> None:
        """Close ``pane``, asking first if its program still runs; the session ends after its last pane."""
        if not await self._may_end(pane, "Close", "closing"):
            return
        if len(self.grid.panes) == 1:
            self.leaving = True
        try:
            await self.session.close(pane.remote)
        except PolterError as exc:
            self.leaving = False
            self.notify(f"Could not close pane {pane.number}: {exc}", severity="error")
            return
        if self.leaving:
            self.app.exit(message=f"polter: session {self.session.name} ended (its last pane was closed)")

    async def _may_end(self, pane: PaneWidget, verb: str, doing: str) -> bool:
        """Whether ``pane``'s program may be ended to ``verb`` the pane: yes if it is not running,
        else the user's answer to a confirmation."""
        if not pane.running:
            return True
        question = f"{verb} pane {pane.number} ({pane.title})?"
        detail = f"Its program is still running; {doing} ends it and everything it started."
        confirmed = await self.app.push_screen_wait(ConfirmScreen(question, detail, yes=verb))
        return bool(confirmed)

    def action_restart_pane(self) -> None:
        if (pane := self.active_pane) is not None:
            self.restart_pane(pane)

    @work(exclusive=True, group="pane-command")
    async def restart_pane(self, pane: PaneWidget) -> None:
        """Start ``pane``'s program again, asking first if it still runs. An agent pane's CLI is prepared
        afresh; a restart that applies its role continues its conversation where the CLI can resume one."""
        if not await self._may_end(pane, "Restart", "restarting"):
            return
        try:
            await self.session.restart(pane.remote)
        except PolterError as exc:
            self.notify(f"Could not restart pane {pane.number}: {exc}", severity="error")
            return
        pane.terminal.focus()

    def action_scroll_mode(self, page_up: bool = False) -> None:
        pane = self.active_pane
        if pane is not None:
            pane.terminal.enter_scroll_mode()
            if page_up:
                pane.terminal.scroll_history(max(1, pane.terminal.size.height - 1))

    @work(exclusive=True, group="pane-command")
    async def action_quit(self) -> None:
        """Leave the session: detach (the programs keep running) or end it, as the human chooses."""
        running = [f"{pane.number} ({pane.title})" for pane in self.grid.panes if pane.running]
        choice = await self.app.push_screen_wait(LeaveScreen(self.session.name, running))
        if choice == "detach":
            await self.detach()
        elif choice == "end":
            await self.end_session()

    async def action_detach(self) -> None:
        await self.detach()

    async def detach(self) -> None:
        """Close this window; the session and its programs keep running."""
        self.leaving = True
        await self.session.detach()
        self.app.exit(message=f"[detached from session {self.session.name}: polter attach {self.session.name}]")

    async def end_session(self) -> None:
        """End every program in the session, the gateway and the session itself."""
        self.leaving = True
        await self.session.end()
        self.app.exit(message=f"polter: session {self.session.name} ended")

    def action_command_palette(self) -> None:
        self.app.action_command_palette()

    @property
    def palette_hint(self) -> str:
        """How to open the command palette, for messages: ``^b :``, or the direct key if one is set."""
        direct = getattr(self.app, "palette_key", None)
        return format_key_name(direct) if direct else f"{format_key_name(self.prefix)} :"

    def action_help(self) -> None:
        """Every key, on a screen of its own."""
        from polter.ui.help_screen import HelpScreen

        self.app.push_screen(HelpScreen(self.prefix, getattr(self.app, "palette_key", None)))


def format_key_name(key: str) -> str:
    """``ctrl+b`` → ``^b`` as Textual shows keys; plain keys as their character."""
    *modifiers, base = key.split("+")
    shown = format_key(base)
    if "ctrl" in modifiers:
        modifiers.remove("ctrl")
        shown = f"^{shown}"
    return "+".join([*modifiers, shown])
