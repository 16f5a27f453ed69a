"""The main screen: the pane grid and the prefix-key commands that act on it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.keys import format_key
from textual.screen import Screen
from textual.selection import Selection
from textual.widget import Widget

from polter.terminal.keys import encode_key
from polter.terminal.launch import LaunchSpec
from polter.terminal.widget import TerminalView
from polter.ui.confirm import ConfirmScreen
from polter.ui.layout import LAYOUT_MODES, Direction, LayoutMode
from polter.ui.pane import Pane
from polter.ui.pane_grid import PaneGrid
from polter.ui.prefix import PrefixScreen

__all__ = ["DEFAULT_PREFIX", "PREFIX_COMMANDS", "MultiplexerScreen", "format_key_name", "working_directory"]

DEFAULT_PREFIX: Final = "ctrl+b"

PREFIX_COMMANDS: Final[dict[str, str]] = {
    "left": "focus_direction('left')",
    "right": "focus_direction('right')",
    "up": "focus_direction('up')",
    "down": "focus_direction('down')",
    **{str(number): f"focus_number({number})" for number in range(1, 10)},
    "0": "focus_number(10)",
    "o": "focus_next",
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
    "q": "quit",
}
"""What the key after the prefix does: a key name → an action of :class:`MultiplexerScreen`."""

PREFIX_HINTS: Final = (
    ("←↑→↓", "move"), ("1-9", "pane"), ("o", "next"), ("z", "zoom"), ("c", "new"), ("x", "close"),
    ("r", "restart"), ("[", "scroll"), ("space", "layout"), (": p", "commands"), ("?", "keys"), ("q", "quit"),
)  # fmt: skip


class MultiplexerScreen(Screen[None]):
    """Panes of programs. Keys go to the focused pane, except the prefix key (default ``ctrl+b``)
    and a direct palette key if one is configured; after the prefix, one key runs a command from
    :data:`PREFIX_COMMANDS` (``:`` or ``p``: the command palette, as tmux's command prompt) and the
    prefix key again sends itself to the pane."""

    BINDINGS = [Binding(DEFAULT_PREFIX, "prefix", "Prefix", id="polter.prefix", priority=True, show=False)]
    AUTO_FOCUS = None  # the first pane is focused on mount; after that the user decides

    def __init__(
        self,
        specs: list[LaunchSpec],
        *,
        layout_mode: LayoutMode = "grid",
        prefix: str = DEFAULT_PREFIX,
        scrollback: int = 10_000,
    ) -> None:
        super().__init__()
        self.prefix = prefix
        self.grid = PaneGrid(specs, layout_mode=layout_mode, scrollback=scrollback)
        self._active: Pane | None = None
        self._copied: dict[Widget, Selection] = {}

    def compose(self) -> ComposeResult:
        yield self.grid

    def on_mount(self) -> None:
        self.app.update_keymap({"polter.prefix": self.prefix})
        panes = self.grid.panes
        if panes:
            panes[0].terminal.focus()

    # -- which pane ----------------------------------------------------------------------------

    @property
    def active_pane(self) -> Pane | None:
        """The pane with the keyboard focus (or the last one that had it)."""
        if self._active is not None and self._active.is_attached:
            return self._active
        panes = self.grid.panes
        return panes[0] if panes else None

    @on(events.DescendantFocus)
    def _track_focus(self, event: events.DescendantFocus) -> None:
        for node in event.widget.ancestors_with_self:
            if isinstance(node, Pane):
                self._active = node
                return

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

    def focus_pane(self, pane: Pane) -> None:
        if self.grid.zoomed is not None and self.grid.zoomed is not pane:
            self.grid.zoomed = None
        pane.terminal.focus()

    # -- prefix --------------------------------------------------------------------------------

    def action_prefix(self) -> None:
        self.app.push_screen(PrefixScreen(format_key_name(self.prefix), PREFIX_HINTS), self._after_prefix)

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

    def action_toggle_zoom(self) -> None:
        pane = self.active_pane
        if pane is not None:
            self.grid.toggle_zoom(pane)
            pane.terminal.focus()

    def action_next_layout(self) -> None:
        modes = LAYOUT_MODES
        self.grid.layout_mode = modes[(modes.index(self.grid.layout_mode) + 1) % len(modes)]

    async def action_new_pane(self) -> None:
        """A new pane (a shell here), started in the directory the focused pane's program is in."""
        pane = self.active_pane
        cwd = working_directory(pane) if pane is not None else None
        new = await self.open_pane(cwd)
        if new is not None:
            new.terminal.focus()

    async def open_pane(self, cwd: Path | None) -> Pane | None:
        """Add the pane that "new pane" opens; screens with more kinds of pane override it."""
        return await self.grid.add_pane(LaunchSpec.shell(cwd=cwd))

    def action_close_pane(self) -> None:
        if (pane := self.active_pane) is not None:
            self.close_pane(pane)

    @work(exclusive=True, group="pane-command")
    async def close_pane(self, pane: Pane) -> None:
        """Close ``pane``, asking first if its program still runs; quits after the last pane."""
        if not await self._may_end(pane, "Close", "closing"):
            return
        panes = self.grid.panes
        index = panes.index(pane)
        await self.discard_pane(pane)
        remaining = self.grid.panes
        if not remaining:
            self.app.exit()
            return
        self.focus_pane(remaining[min(index, len(remaining) - 1)])

    async def _may_end(self, pane: Pane, verb: str, doing: str) -> bool:
        """Whether ``pane``'s program may be ended to ``verb`` the pane: yes if it is not running,
        else the user's answer to a confirmation."""
        if not pane.running:
            return True
        question = f"{verb} pane {pane.number} ({pane.terminal.program_title})?"
        detail = f"Its program is still running; {doing} ends it and everything it started."
        return bool(await self.app.push_screen_wait(ConfirmScreen(question, detail, yes=verb)))

    async def discard_pane(self, pane: Pane) -> None:
        """End the pane's program and take the pane away (overridden to release what the pane held)."""
        await self.grid.remove_pane(pane)

    def action_restart_pane(self) -> None:
        if (pane := self.active_pane) is not None:
            self.restart_pane(pane)

    @work(exclusive=True, group="pane-command")
    async def restart_pane(self, pane: Pane) -> None:
        """Start ``pane``'s program again, asking first if it still runs."""
        if not await self._may_end(pane, "Restart", "restarting"):
            return
        await pane.terminal.close()
        await self.relaunch_pane(pane)
        pane.terminal.focus()

    async def relaunch_pane(self, pane: Pane) -> None:
        """Run the pane's program again (overridden when the launch must be prepared afresh)."""
        pane.terminal.restart()

    def action_scroll_mode(self, page_up: bool = False) -> None:
        pane = self.active_pane
        if pane is not None:
            pane.terminal.enter_scroll_mode()
            if page_up:
                pane.terminal.scroll_history(max(1, pane.terminal.size.height - 1))

    @work(exclusive=True, group="pane-command")
    async def action_quit(self) -> None:
        """Quit, after asking if programs are still running; every program is ended first."""
        running = [pane for pane in self.grid.panes if pane.running]
        if running:
            names = ", ".join(f"{pane.number} ({pane.terminal.program_title})" for pane in running)
            question = f"Quit Polter? {len(running)} program{'s' if len(running) > 1 else ''} still running."
            if not await self.app.push_screen_wait(ConfirmScreen(question, f"Panes {names}.", yes="Quit")):
                return
        self.about_to_quit()
        await self.grid.close_all()
        self.app.exit()

    def about_to_quit(self) -> None:
        """Called once quitting is decided, while the programs still run (to save what they were doing)."""

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


def working_directory(pane: Pane) -> Path | None:
    """Where the program in ``pane`` (its foreground job, else the program itself) currently is."""
    process = pane.terminal.process
    if process is None or not process.running:
        return None
    for pid in (process.foreground_process_group(), process.pid):
        if pid is None:
            continue
        try:
            return Path(os.readlink(f"/proc/{pid}/cwd"))
        except OSError:
            continue
    return None
