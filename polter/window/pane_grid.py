"""The panes on screen: arranged as a grid, columns or rows; one may be zoomed to fill the space."""

from __future__ import annotations

from textual.containers import Container
from textual.reactive import reactive

from polter.window.layout import Direction, grid_shape, neighbour
from polter.window.pane import PaneWidget
from polter.window.prefix import DEFAULT_PREFIX
from polter.window.remote import RemotePane
from polter.wire.options import LayoutMode

__all__ = ["PaneGrid"]


class PaneGrid(Container):
    """Holds the panes in order; the order is their numbering (1, 2, ...) and the reading order."""

    DEFAULT_CSS = """
    PaneGrid {
        layout: grid;
        grid-gutter: 0 1;
        width: 1fr;
        height: 1fr;
        & > PaneWidget.-hidden { display: none; }
    }
    """

    layout_mode: reactive[LayoutMode] = reactive("grid")
    zoomed: reactive[PaneWidget | None] = reactive(None)

    def __init__(self, *, layout_mode: LayoutMode = "grid", prefix: str = DEFAULT_PREFIX) -> None:
        super().__init__()
        self.set_reactive(PaneGrid.layout_mode, layout_mode)
        self.prefix = prefix
        """The prefix key, which an ended pane's hint names."""

    def on_mount(self) -> None:
        self._arrange()

    @property
    def panes(self) -> list[PaneWidget]:
        return list(self.query_children(PaneWidget))

    def pane_of(self, pane_id: str) -> PaneWidget | None:
        return next((pane for pane in self.panes if pane.remote.id == pane_id), None)

    async def add_pane(self, remote: RemotePane, index: int | None = None) -> PaneWidget:
        """Show the session's pane ``remote`` at ``index`` (last by default), unzooming so it can be seen."""
        panes = self.panes
        index = len(panes) if index is None else min(index, len(panes))
        pane = PaneWidget(remote, number=index + 1, prefix=self.prefix)
        self.zoomed = None
        if index < len(panes):
            await self.mount(pane, before=panes[index])
        else:
            await self.mount(pane)
        self._arrange()
        return pane

    async def remove_pane(self, pane: PaneWidget) -> None:
        """Take the pane away (its program has ended in the session)."""
        if self.zoomed is pane:
            self.zoomed = None
        await pane.remove()
        self._arrange()

    def toggle_zoom(self, pane: PaneWidget) -> None:
        self.zoomed = None if self.zoomed is pane else pane

    def watch_zoomed(self) -> None:
        if self.is_mounted:
            self._arrange()

    def watch_layout_mode(self) -> None:
        if self.is_mounted:
            self._arrange()

    def neighbour(self, pane: PaneWidget, direction: Direction) -> PaneWidget | None:
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
