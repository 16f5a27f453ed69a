"""Where a pane's view is in its scrollback, and scroll mode's keys.

:class:`HistoryScroll` belongs to one :class:`~polter.window.terminal_view.TerminalView`: it keeps the offset
above the live screen (0 = live), keeps the lines being read in place while the history grows, and tells
the view's screen (``ScrollChanged``) whenever the offset or the mode changes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar

if TYPE_CHECKING:
    from polter.window.terminal_view import TerminalView

__all__ = ["HistoryScroll"]


class HistoryScroll:
    """The scrollback position of ``view``, and scroll mode (keys scroll instead of going to the program)."""

    KEYS: ClassVar[dict[str, str]] = {
        "up": "line_up", "k": "line_up", "down": "line_down", "j": "line_down",
        "pageup": "page_up", "pagedown": "page_down", "space": "page_down",
        "home": "top", "g": "top", "end": "bottom", "G": "bottom", "shift+g": "bottom",
        "q": "leave", "escape": "leave", "enter": "leave",
    }  # fmt: skip

    def __init__(self, view: TerminalView) -> None:
        self.view = view
        self.offset = 0
        """Lines above the live screen (0: live)."""
        self.mode = False
        """Scroll mode: keys scroll (see :attr:`KEYS`)."""
        self._history_size = 0

    @property
    def _history(self) -> int:
        screen = self.view.screen_model
        return screen.history_size if screen is not None else 0

    def by(self, lines: int) -> None:
        """Move ``lines`` further back into the scrollback (negative: towards live)."""
        offset = max(0, min(self.offset + lines, self._history))
        if offset != self.offset:
            self.offset = offset
            self.view.refresh()
            self._post()

    def to_live(self) -> None:
        self.mode = False
        if self.offset:
            self.by(-self.offset)

    def enter_mode(self) -> None:
        self.mode = True
        self._post()

    def leave_mode(self) -> None:
        self.mode = False
        self.by(-self.offset)
        self._post()

    def mode_key(self, key: str) -> None:
        page = max(1, self.view.size.height - 1)
        history = self._history
        match self.KEYS.get(key):
            case "line_up":
                self.by(1)
            case "line_down":
                self.by(-1)
            case "page_up":
                self.by(page)
            case "page_down":
                self.by(-page)
            case "top":
                self.by(history)
            case "bottom":
                self.by(-history)
            case "leave":
                self.leave_mode()

    def follow(self, history: int) -> None:
        """The scrollback now holds ``history`` rows: the lines being read stay in place."""
        if history != self._history_size:
            if self.offset:
                self.offset = max(0, min(self.offset + history - self._history_size, history))
                self._post()
            self._history_size = history

    def clamp(self) -> None:
        """After a resize: the offset stays within the scrollback."""
        history = self._history_size = self._history
        if self.offset > history:
            self.offset = history
            self._post()

    def _post(self) -> None:
        view = self.view
        view.post_message(view.ScrollChanged(view, self.offset, self._history, self.mode))
