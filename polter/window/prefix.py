"""The prefix key: what the key after it does, and the screen that catches that key and shows what the keys do,
tmux-style with a hint bar."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from textual import events
from textual.app import ComposeResult
from textual.content import Content
from textual.keys import format_key
from textual.screen import ModalScreen
from textual.widgets import Static

__all__ = ["DEFAULT_PREFIX", "PREFIX_COMMANDS", "PREFIX_HINTS", "PrefixScreen", "format_key_name"]

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
    "s": "focus_sender",
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
"""What the key after the prefix does: a key name → an action of
:class:`~polter.window.session_screen.SessionScreen`."""

PREFIX_HINTS: Final = (
    ("←↑→↓", "move"), ("1-9", "pane"), ("o", "next"), ("n", "waiting"), ("z", "zoom"), ("c", "new"), ("x", "close"),
    ("r", "restart"), ("[", "scroll"), ("space", "layout"), (": p", "commands"), ("?", "keys"),
    ("d", "detach"), ("q", "quit"),
)  # fmt: skip


def format_key_name(key: str) -> str:
    """``ctrl+b`` → ``^b`` as Textual shows keys; plain keys as their character."""
    *modifiers, base = key.split("+")
    shown = format_key(base)
    if "ctrl" in modifiers:
        modifiers.remove("ctrl")
        shown = f"^{shown}"
    return "+".join([*modifiers, shown])


class PrefixScreen(ModalScreen[str | None]):
    """Dismisses with the name of the next key pressed (``None`` if the user clicked instead).

    The screen below stays fully visible; only a hint bar at the bottom shows the commands, so the
    prefix key is discoverable without a manual.
    """

    DEFAULT_CSS = """
    PrefixScreen {
        background: transparent;
        align: left bottom;
        & > #prefix-hints {
            dock: bottom;
            width: 1fr;
            height: auto;
            background: $primary-muted;
            color: $text;
            padding: 0 1;
        }
    }
    """

    def __init__(self, prefix_display: str, hints: Sequence[tuple[str, str]]) -> None:
        super().__init__()
        self.prefix_display = prefix_display
        self.hints = hints
        self._chosen = False
        self._held: list[events.Key] | None = []
        """Keys typed behind the command's key, held until the command ran (:meth:`release`)."""

    def compose(self) -> ComposeResult:
        parts: list[Content | str] = [Content.styled(self.prefix_display, "bold reverse"), " "]
        for keys, description in self.hints:
            parts += [Content.styled(keys, "bold"), f" {description}  "]
        yield Static(Content.assemble(*parts), id="prefix-hints")

    def on_key(self, event: events.Key) -> None:
        """The first key is the command. Keys typed right behind it (several in one read from the terminal: a
        fast typist, a paste, a slow machine) reached this screen before it went: they go on to the app once the
        command ran, so ``prefix 2 echo hi`` in one burst types into pane 2, not into the pane focused before."""
        event.stop()
        event.prevent_default()
        if not self._chosen:
            self._chosen = True
            self.dismiss(event.key)
            return
        key = events.Key(event.key, event.character)
        if self._held is None:
            self.app.post_message(key)
        else:
            self._held.append(key)

    def release(self) -> None:
        """The command ran: the keys held behind it go on to the app (to the pane the command focused)."""
        held, self._held = self._held or [], None
        for key in held:
            self.app.post_message(key)

    def on_mouse_down(self, event: events.MouseDown) -> None:
        event.stop()
        self.dismiss(None)
