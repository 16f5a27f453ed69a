"""Which pane has the keyboard, and moving it: by direction, by number, to the next pane, to the pane that has
waited longest for the human; zooming and the layout; and what the host is told of where the human looks
(the ``view`` call: the next window starts there; the ``looking`` call: that pane needs no notification)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from polter.window.layout import Direction, next_layout
from polter.window.pane import PaneWidget

if TYPE_CHECKING:
    from polter.window.session_screen import SessionScreen

__all__ = ["PaneFocus"]


class PaneFocus:
    """The focus among ``screen``'s panes."""

    def __init__(self, screen: SessionScreen) -> None:
        self.screen = screen
        self._active: PaneWidget | None = None
        self.when_added: str | None = None
        """A pane being opened from here: focused once it shows."""

    @property
    def active(self) -> PaneWidget | None:
        """The pane with the keyboard focus (or the last one that had it)."""
        if self._active is not None and self._active.is_attached:
            return self._active
        panes = self.screen.grid.panes
        return panes[0] if panes else None

    def focused(self, pane: PaneWidget) -> None:
        """Something inside ``pane`` took the focus."""
        if pane is not self._active:
            self._active = pane
            self.remember_view()
            self.report_looking()

    def remember_view(self) -> None:
        grid = self.screen.grid
        active = self._active.remote.id if self._active is not None else None
        zoomed = grid.zoomed.remote.id if grid.zoomed is not None else None
        self.screen.session.set_view(active, zoomed)

    def report_looking(self, app_focused: bool | None = None) -> None:
        """Tell the host which pane the human looks at here (none while the terminal is in the background)."""
        screen = self.screen
        active = self._active if self._active is not None and self._active.is_attached else None
        focused = screen.app.app_focus if app_focused is None else app_focused
        notifies = screen.notices.terminal_notifies
        screen.session.set_looking(active.remote.id if active is not None else None, focused, notifies=notifies)

    # -- moving it ----------------------------------------------------------------------------------------

    def go_to(self, pane: PaneWidget) -> None:
        grid = self.screen.grid
        if grid.zoomed is not None and grid.zoomed is not pane:
            grid.zoomed = None
        pane.terminal.focus()

    def direction(self, direction: Direction) -> None:
        pane, grid = self.active, self.screen.grid
        if pane is None:
            return
        if grid.zoomed is not None:
            grid.zoomed = None
            self.screen.call_after_refresh(self.direction, direction)
            return
        target = grid.neighbour(pane, direction)
        if target is not None:
            self.go_to(target)

    def number(self, number: int) -> None:
        panes = self.screen.grid.panes
        if 1 <= number <= len(panes):
            self.go_to(panes[number - 1])

    def next(self) -> None:
        panes = self.screen.grid.panes
        pane = self.active
        if pane is not None and panes:
            self.go_to(panes[(panes.index(pane) + 1) % len(panes)])

    def sender(self) -> None:
        """Focus the pane whose agent gave the focused pane its current task (docs/team.md)."""
        pane = self.active
        agent = pane.remote.state.agent if pane is not None else None
        sender = agent.task_from if agent is not None else None
        target = next((other for other in self.screen.grid.panes if other.remote.id == sender), None)
        if target is None:
            self.screen.notify("No agent gave this pane its task." if sender is None else "That pane was closed.")
            return
        self.go_to(target)

    def waiting_panes(self) -> list[PaneWidget]:
        """The panes whose agent waits for the human, the one waiting longest first."""
        waiting = [pane for pane in self.screen.grid.panes if pane.waiting_since is not None]
        return sorted(waiting, key=lambda pane: pane.waiting_since or 0)

    def next_waiting(self) -> None:
        """Focus the next pane that waits for you: the one waiting longest, then the next oldest, and so on; its
        asks that were put off show again."""
        screen = self.screen
        waiting = self.waiting_panes()
        if not waiting:
            screen.notify("No pane waits for you.")
            return
        active = self.active
        index = waiting.index(active) + 1 if active in waiting else 0
        target = waiting[index % len(waiting)]
        if target is not active:
            self.go_to(target)
            screen.asks.arrived_at(target)
        elif not screen.asks.arrived_at(target):
            screen.notify(f"Only pane {target.number} waits for you.")

    def toggle_zoom(self) -> None:
        pane = self.active
        if pane is not None:
            self.screen.grid.toggle_zoom(pane)
            pane.terminal.focus()
            self.remember_view()

    def next_layout(self) -> None:
        grid = self.screen.grid
        grid.layout_mode = next_layout(grid.layout_mode)
        self.screen.session.set_layout(grid.layout_mode)

    def scroll_mode(self, page_up: bool = False) -> None:
        pane = self.active
        if pane is not None:
            pane.terminal.enter_scroll_mode()
            if page_up:
                pane.terminal.scroll_history(max(1, pane.terminal.size.height - 1))

    # -- panes coming and going ---------------------------------------------------------------------------

    def added(self, pane: PaneWidget) -> None:
        if self.when_added == pane.remote.id or len(self.screen.grid.panes) == 1:
            self.when_added = None
            pane.terminal.focus()

    def opened(self, pane_id: str) -> None:
        """The host opened pane ``pane_id`` for this window: focus it now if it shows, else once it does."""
        self.when_added = pane_id
        pane = self.screen.grid.pane_of(pane_id)
        if pane is not None:
            self.when_added = None
            pane.terminal.focus()
