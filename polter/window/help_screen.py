"""Every key Polter uses, on one screen (prefix then ``?``, or "Keys and help" in the palette).

The tables are built from the bindings themselves (the prefix commands, scroll-mode keys, the
modal's and the screens' ``BINDINGS``), so the help cannot drift from what the keys do.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable
from typing import ClassVar, Final

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown

from polter.window.ask_screen import AskScreen
from polter.window.audit_screen import AuditScreen
from polter.window.capabilities_screen import CapabilitiesScreen
from polter.window.prefix import PREFIX_COMMANDS, format_key_name
from polter.window.terminal_view import TerminalView

__all__ = ["HelpScreen", "help_markdown"]

PREFIX_HELP: Final = {
    "focus_direction": "focus the pane in that direction",
    "focus_number": "focus pane 1 … 9, 10 (the number in its header)",
    "focus_next": "focus the next pane",
    "next_waiting": "focus the next pane that waits for you (the one waiting longest first)",
    "focus_sender": "focus the pane whose agent gave this pane its current task (docs/team.md)",
    "toggle_zoom": "zoom the pane to fill the window, or unzoom",
    "new_pane": "new pane: the focused pane's CLI and role, in its directory",
    "close_pane": "close the pane (asks first if its program still runs)",
    "restart_pane": "restart the pane's program (applies a new role to CLIs that need a restart)",
    "scroll_mode": "scroll mode (keys below)",
    "next_layout": "next layout: grid → columns → rows",
    "command_palette": "command palette: roles, panes, phases, capabilities, asks, audit, themes, quit",
    "help": "this help",
    "detach": "detach: close this window, the programs keep running (polter attach brings them back)",
    "quit": "leave: detach, or end every program in the session (it asks which)",
}
SCROLL_HELP: Final = {
    "line_up": "a line back",
    "line_down": "a line forward",
    "page_up": "a page back",
    "page_down": "a page forward",
    "top": "the oldest line",
    "bottom": "the newest line",
    "leave": "back to the live screen",
}
_KEY_NAMES: Final = {
    "left_square_bracket": "[",
    "question_mark": "?",
    "colon": ":",
    "space": "space",
    "pageup": "PgUp",
    "pagedown": "PgDn",
}


def _key(name: str) -> str:
    return _KEY_NAMES.get(name, format_key_name(name) if "+" in name else name)


def _escape(cell: str) -> str:
    return cell.replace("|", r"\|")


def _rows(pairs: Iterable[tuple[str, str]]) -> str:
    lines = ["| Keys | What they do |", "| :- | :- |"]
    lines += [f"| {_escape(keys)} | {text} |" for keys, text in pairs]
    return "\n".join(lines)


def _grouped(mapping: dict[str, str], help_for: dict[str, str]) -> list[tuple[str, str]]:
    """Keys that run the same action (ignoring its arguments) share a row, in first-seen order."""
    keys: dict[str, list[str]] = defaultdict(list)
    for key, action in mapping.items():
        keys[re.sub(r"\(.*\)$", "", action)].append(_key(key))
    return [(" ".join(f"`{key}`" for key in names), help_for.get(action, action)) for action, names in keys.items()]


def _bindings(bindings: Iterable[BindingType]) -> list[tuple[str, str]]:
    rows = []
    for binding in bindings:
        if isinstance(binding, Binding) and binding.description:
            keys = " ".join(f"`{_key(key.strip())}`" for key in binding.key.split(","))
            rows.append((keys, binding.description.lower()))
    return rows


def help_markdown(prefix: str, palette_key: str | None = None) -> str:
    shown = format_key_name(prefix)
    direct = [(f"`{format_key_name(palette_key)}`", PREFIX_HELP["command_palette"])] if palette_key else []
    sections = [
        "# Keys",
        f"Every key goes to the focused pane's program, except the **prefix key** (`{shown}`)"
        + (f" and the palette key `{format_key_name(palette_key)}`." if palette_key else "."),
        f"## After the prefix key `{shown}`",
        _rows([*_grouped(PREFIX_COMMANDS, PREFIX_HELP), (f"`{shown}`", "send the prefix key itself to the program")]),
        "## Anywhere",
        _rows(
            [
                *direct,
                ("`shift+Enter`", "a new line in an agent CLI's prompt (sent as ctrl+J)"),
                ("`shift+PgUp` `shift+PgDn`", "scroll back / forward a page (typing jumps back to the live screen)"),
                ("mouse wheel", "scroll back (the program's own when it asked for the mouse; hold shift to scroll)"),
                ("click", "focus a pane"),
                (
                    "drag, double-click, triple-click",
                    "select text, a word, a line; copied at once (with shift when the program uses the mouse)",
                ),
            ]
        ),
        "## Scroll mode",
        _rows(_grouped(TerminalView.SCROLL_MODE_KEYS, SCROLL_HELP)),
        "## An ask",
        "Keys and clicks in the first half second (or until you stop typing for that long) are ignored.",
        _rows(_bindings(AskScreen.BINDINGS)),
        "## The audit log",
        _rows(_bindings(AuditScreen.BINDINGS)),
        "## Capabilities",
        _rows(_bindings(CapabilitiesScreen.BINDINGS)),
    ]
    return "\n\n".join(sections)


class HelpScreen(ModalScreen[None]):
    """Every key. ``escape``, ``q`` or ``?`` closes it."""

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
        & > VerticalScroll {
            width: 90;
            max-width: 100%;
            height: 90%;
            border: thick $primary 60%;
            background: $surface;
            padding: 0 1;
        }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,q,question_mark", "dismiss", "Close", show=False)]

    def __init__(self, prefix: str, palette_key: str | None = None) -> None:
        super().__init__()
        self.prefix = prefix
        self.palette_key = palette_key

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Markdown(help_markdown(self.prefix, self.palette_key))
