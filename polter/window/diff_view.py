"""A unified diff, coloured, with old and new line numbers: the review screen's right-hand side.

Drawn with the line API (a diff can be tens of thousands of lines): each row is built once, cached,
and cropped to the scroll position. Colours come from component classes, so themes apply.
"""

from __future__ import annotations

import re
from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.cache import LRUCache
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.strip import Strip

__all__ = ["DiffLine", "DiffView", "parse_diff"]

_HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")
_FILE_HEADERS = (
    "diff ",
    "index ",
    "--- ",
    "+++ ",
    "new file",
    "deleted file",
    "old mode",
    "new mode",
    "similarity",
    "rename ",
    "copy ",
    "Binary files",
    "dissimilarity",
)
GUTTER = 12
"""Two five-digit line numbers and their spaces."""


class DiffLine:
    """One row: its kind (``heading``, ``header``, ``hunk``, ``added``, ``removed``, ``context``, ``note``),
    its text, and its line numbers in the old and the new file."""

    __slots__ = ("kind", "new", "old", "text")

    def __init__(self, kind: str, text: str, old: int | None = None, new: int | None = None) -> None:
        self.kind, self.text, self.old, self.new = kind, text, old, new


def parse_diff(text: str) -> list[DiffLine]:
    """A unified diff (``git diff`` output) as rows with line numbers."""
    rows: list[DiffLine] = []
    old = new = 0
    in_hunk = False
    for raw in text.splitlines():
        line = raw.expandtabs(4).replace("\r", "")
        if match := _HUNK.match(line):
            old, new, in_hunk = int(match.group(1)), int(match.group(2)), True
            rows.append(DiffLine("hunk", line))
        elif line.startswith("diff ") or (not in_hunk and line.startswith(_FILE_HEADERS)):
            in_hunk = False
            rows.append(DiffLine("header", line))
        elif in_hunk and line.startswith("+"):
            rows.append(DiffLine("added", line, new=new))
            new += 1
        elif in_hunk and line.startswith("-"):
            rows.append(DiffLine("removed", line, old=old))
            old += 1
        elif in_hunk and line.startswith("\\"):
            rows.append(DiffLine("note", line))
        elif in_hunk:
            rows.append(DiffLine("context", line, old=old, new=new))
            old, new = old + 1, new + 1
        else:
            rows.append(DiffLine("header", line))
    return rows


class DiffView(ScrollView, can_focus=True):
    """Sections of unified diff, each under a heading, coloured by kind of line.

    | Key | Does |
    | :- | :- |
    | up/down, page up/down, home/end | scroll (ScrollView's own keys) |
    | left/right | scroll sideways |

    | Component class | Styles |
    | :- | :- |
    | `diff-view--heading` | a section's heading |
    | `diff-view--header` | a file's header lines (`diff --git`, `index`, `---`, `+++`) |
    | `diff-view--hunk` | `@@ ... @@` |
    | `diff-view--added` / `diff-view--removed` | added and removed lines |
    | `diff-view--gutter` | the line numbers |
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "diff-view--heading",
        "diff-view--header",
        "diff-view--hunk",
        "diff-view--added",
        "diff-view--removed",
        "diff-view--gutter",
        "diff-view--note",
    }

    DEFAULT_CSS = """
    DiffView {
        background: $surface;
        & > .diff-view--heading { background: $panel; color: $text; text-style: bold; }
        & > .diff-view--header { color: $text-muted; text-style: bold; }
        & > .diff-view--hunk { color: $accent; }
        & > .diff-view--added { color: $text-success; background: $success-muted; }
        & > .diff-view--removed { color: $text-error; background: $error-muted; }
        & > .diff-view--gutter { color: $text-disabled; }
        & > .diff-view--note { color: $text-muted; text-style: italic; }
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.rows: list[DiffLine] = []
        self._cache: LRUCache[int, Strip] = LRUCache(1024)

    def show(self, sections: list[tuple[str, str]], *, empty: str = "") -> None:
        """Show ``(heading, diff text)`` sections (those without text are left out), or ``empty``."""
        rows: list[DiffLine] = []
        for heading, text in sections:
            if text:
                rows.append(DiffLine("heading", f" {heading} "))
                rows.extend(parse_diff(text))
                rows.append(DiffLine("context", ""))
        self.rows = rows or ([DiffLine("note", empty)] if empty else [])
        self._cache.clear()
        width = max((cell_len(row.text) for row in self.rows), default=0) + GUTTER
        self.virtual_size = Size(width, len(self.rows))
        self.scroll_to(0, 0, animate=False)
        self.refresh()

    @property
    def text(self) -> str:
        """What is shown, as plain text (no line numbers)."""
        return "\n".join(row.text for row in self.rows)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._cache.clear()

    def render_line(self, y: int) -> Strip:
        scroll_x, scroll_y = self.scroll_offset
        index = scroll_y + y
        width = self.scrollable_content_region.width
        if index >= len(self.rows):
            return Strip.blank(width, self.rich_style)
        strip = self._cache.get(index)
        if strip is None:
            strip = self._build(self.rows[index])
            self._cache[index] = strip
        return strip.crop(scroll_x, scroll_x + width).extend_cell_length(width, self._row_style(self.rows[index]))

    def _row_style(self, row: DiffLine) -> Style:
        base = self.rich_style
        if row.kind in ("heading", "header", "hunk", "added", "removed", "note"):
            return base + self.get_component_rich_style(f"diff-view--{row.kind}")
        return base

    def _build(self, row: DiffLine) -> Strip:
        style = self._row_style(row)
        if row.kind == "heading":
            return Strip([Segment(row.text, style)])
        gutter = style + self.get_component_rich_style("diff-view--gutter")
        return Strip([Segment(f"{_number(row.old)} {_number(row.new)} ", gutter), Segment(row.text, style)])


def _number(value: int | None) -> str:
    return f"{value:>5}" if value is not None else " " * 5
