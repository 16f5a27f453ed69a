"""Screen text out of Textual's SVG screenshots, so a snapshot mismatch can be told in words."""

from __future__ import annotations

import difflib
import html
import re

CELL_WIDTH = 12.2
"""Pixels per cell in Textual's SVG screenshots."""

_TEXT = re.compile(r'<text class="[^"]*" x="([\d.]+)" y="[\d.]+"[^>]*clip-path="url\(#[^"]*line-(\d+)\)">(.*?)</text>')


def screen_lines(svg: str) -> list[str]:
    """The text of a Textual SVG screenshot, one string per screen row."""
    rows: dict[int, list[str]] = {}
    for x, line, text in _TEXT.findall(svg):
        row = rows.setdefault(int(line), [])
        column = round(float(x) / CELL_WIDTH)
        row.extend(" " * (column - len(row)))
        row[column:column + len(text)] = html.unescape(text).replace("\xa0", " ")
    return ["".join(rows.get(index, [])).rstrip() for index in range(max(rows, default=-1) + 1)]


def mismatch(expected_svg: str, actual_svg: str) -> str:
    """What differs between two screenshots: their text as a diff, else that only the styles do."""
    expected, actual = screen_lines(expected_svg), screen_lines(actual_svg)
    if expected == actual:
        return "the same text; colours or attributes differ"
    diff = difflib.unified_diff(expected, actual, "snapshot", "this run", lineterm="", n=1)
    return "\n".join(diff)
