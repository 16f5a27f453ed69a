"""After the prefix key: catch the next key and show what the keys do, tmux-style with a hint bar."""

from __future__ import annotations

from collections.abc import Sequence

from textual import events
from textual.app import ComposeResult
from textual.content import Content
from textual.screen import ModalScreen
from textual.widgets import Static

__all__ = ["PrefixScreen"]


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
