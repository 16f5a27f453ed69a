"""Pane arrangement as pure functions: the grid shape for N panes and the neighbour in a direction."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal, NamedTuple

from textual.geometry import Region

from polter.wire.options import LayoutMode

__all__ = ["Direction", "LAYOUT_MODES", "GridShape", "grid_shape", "neighbour", "next_layout"]

LAYOUT_MODES: tuple[LayoutMode, ...] = ("grid", "columns", "rows")
Direction = Literal["left", "right", "up", "down"]


def next_layout(mode: LayoutMode) -> LayoutMode:
    """The layout after ``mode`` (grid, columns, rows, grid again), as prefix then space goes."""
    return LAYOUT_MODES[(LAYOUT_MODES.index(mode) + 1) % len(LAYOUT_MODES)]


class GridShape(NamedTuple):
    """A grid of ``columns`` × ``rows``; the last pane spans ``last_span`` columns so no cell stays empty."""

    columns: int
    rows: int
    last_span: int


def grid_shape(count: int, mode: LayoutMode) -> GridShape:
    """How ``count`` panes are arranged: side by side (columns), stacked (rows), or in a near-square
    grid that is wider than tall (4 → 2×2, 3 → 2×2 with the last pane spanning the bottom row,
    5 → 3×2, 9 → 3×3)."""
    count = max(count, 1)
    if mode == "columns":
        return GridShape(count, 1, 1)
    if mode == "rows":
        return GridShape(1, count, 1)
    columns = math.ceil(math.sqrt(count))
    rows = math.ceil(count / columns)
    return GridShape(columns, rows, columns * rows - count + 1)


def neighbour(regions: Sequence[Region], current: int, direction: Direction) -> int | None:
    """The index of the pane next to ``regions[current]`` in ``direction``, or ``None`` at the edge.

    Among the panes entirely on that side, the nearest wins; ties go to the one that overlaps the
    current pane most along the other axis, then to the one whose centre is closest.
    """
    here = regions[current]
    best: tuple[int, int, float] | None = None
    best_index: int | None = None
    for index, region in enumerate(regions):
        if index == current:
            continue
        match direction:
            case "left":
                gap, overlap = here.x - region.right, _overlap(here.y, here.bottom, region.y, region.bottom)
            case "right":
                gap, overlap = region.x - here.right, _overlap(here.y, here.bottom, region.y, region.bottom)
            case "up":
                gap, overlap = here.y - region.bottom, _overlap(here.x, here.right, region.x, region.right)
            case "down":
                gap, overlap = region.y - here.bottom, _overlap(here.x, here.right, region.x, region.right)
        if gap < 0:
            continue
        centre_distance = abs(region.center[0] - here.center[0]) + abs(region.center[1] - here.center[1])
        key = (gap, -overlap, centre_distance)
        if best is None or key < best:
            best, best_index = key, index
    return best_index


def _overlap(start_a: float, end_a: float, start_b: float, end_b: float) -> int:
    return int(max(0, min(end_a, end_b) - max(start_a, start_b)))
