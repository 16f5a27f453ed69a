"""The panes on screen: arranged as a grid, columns or rows; one may be zoomed to fill the space."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Container
from textual.reactive import reactive

from polter.terminal.launch import LaunchSpec
from polter.terminal.widget import TypingClock
from polter.ui.layout import Direction, LayoutMode, grid_shape, neighbour
from polter.ui.pane import Pane

if TYPE_CHECKING:
    from polter.session.agents import AgentPane

__all__ = ["PaneGrid"]


class PaneGrid(Container):
    """Holds the panes in order; the order is their numbering (1, 2, ...) and the reading order."""

    DEFAULT_CSS = """
    PaneGrid {
        layout: grid;
        grid-gutter: 0 1;
        width: 1fr;
        height: 1fr;
        & > Pane.-hidden { display: none; }
    }
    """

    layout_mode: reactive[LayoutMode] = reactive("grid")
    zoomed: reactive[Pane | None] = reactive(None)

    def __init__(self, specs: list[LaunchSpec], *, layout_mode: LayoutMode = "grid", scrollback: int = 10_000) -> None:
        super().__init__()
        self._initial = specs
        self.scrollback = scrollback
        self.typing = TypingClock()
        """Shared by the panes: a busy pane yields to the echo of what the user types in another."""
        self.set_reactive(PaneGrid.layout_mode, layout_mode)

    def compose(self) -> ComposeResult:
        for number, spec in enumerate(self._initial, 1):
            yield Pane(spec, number=number, scrollback=self.scrollback, typing=self.typing)

    def on_mount(self) -> None:
        self._arrange()

    @property
    def panes(self) -> list[Pane]:
        return list(self.query_children(Pane))

    async def add_pane(self, spec: LaunchSpec, agent: AgentPane | None = None) -> Pane:
        """Append a pane running ``spec`` (unzooming, so it can be seen) and return it."""
        pane = Pane(spec, number=len(self.panes) + 1, scrollback=self.scrollback, agent=agent, typing=self.typing)
        self.zoomed = None
        await self.mount(pane)
        self._arrange()
        return pane

    async def remove_pane(self, pane: Pane) -> None:
        """End the pane's program (and all it started) and take the pane away."""
        if self.zoomed is pane:
            self.zoomed = None
        await pane.terminal.close()
        await pane.remove()
        self._arrange()

    async def close_all(self) -> None:
        """End every pane's program, all at once."""
        await asyncio.gather(*(pane.terminal.close() for pane in self.panes))

    def toggle_zoom(self, pane: Pane) -> None:
        self.zoomed = None if self.zoomed is pane else pane

    def watch_zoomed(self) -> None:
        if self.is_mounted:
            self._arrange()

    def watch_layout_mode(self) -> None:
        if self.is_mounted:
            self._arrange()

    def neighbour(self, pane: Pane, direction: Direction) -> Pane | None:
        """The visible pane next to ``pane`` on screen in ``direction``."""
        visible = [candidate for candidate in self.panes if candidate.display]
        if pane not in visible:
            return None
        index = neighbour([candidate.region for candidate in visible], visible.index(pane), direction)
        return None if index is None else visible[index]

    def _arrange(self) -> None:
        panes = self.panes
        for number, pane in enumerate(panes, 1):
            pane.number = number
            pane.set_class(self.zoomed is not None and pane is not self.zoomed, "-hidden")
            pane.styles.column_span = 1
        visible = [self.zoomed] if self.zoomed is not None else panes
        shape = grid_shape(len(visible), self.layout_mode)
        self.styles.grid_size_columns = shape.columns
        self.styles.grid_size_rows = shape.rows
        if visible:
            visible[-1].styles.column_span = shape.last_span
