"""Screen text out of Textual's SVG screenshots, so a snapshot mismatch can be told in words."""

from __future__ import annotations

import difflib
import html
import re

CELL_WIDTH = 12.2
"""Pixels per cell in Textual's SVG screenshots."""

_TEXT = re.compile(r'<text class="[^"]*" x="([\d.]+)" y="[\d.]+"[^>]*clip-path="url\(#[^"]*line-(\d+)\)">(.*?)</text>')
_STYLED_TEXT = re.compile(r'<text class="[^"]*-(r\d+)" x="([\d.]+)" y="[\d.]+"[^>]*line-(\d+)\)">(.*?)</text>')
_STYLE = re.compile(r"\.[\w-]*-(r\d+) \{ ([^}]*) \}")
_BACKGROUND = re.compile(r'<rect fill="(#[0-9a-fA-F]+)" x="([\d.]+)" y="([\d.]+)" width="([\d.]+)"')


def screen_lines(svg: str) -> list[str]:
    """The text of a Textual SVG screenshot, one string per screen row."""
    rows: dict[int, list[str]] = {}
    for x, line, text in _TEXT.findall(svg):
        row = rows.setdefault(int(line), [])
        column = round(float(x) / CELL_WIDTH)
        row.extend(" " * (column - len(row)))
        row[column:column + len(text)] = html.unescape(text).replace("\xa0", " ")
    return ["".join(rows.get(index, [])).rstrip() for index in range(max(rows, default=-1) + 1)]


def styled_runs(svg: str) -> list[tuple[int, int, str, str]]:
    """Each run of text as (row, column, text, its style), the style resolved from the SVG's classes."""
    styles = dict(_STYLE.findall(svg))
    return [(int(line), round(float(x) / CELL_WIDTH), html.unescape(text).replace("\xa0", " ").strip(),
             styles.get(name, name)) for name, x, line, text in _STYLED_TEXT.findall(svg) if text.strip()]


def backgrounds(svg: str) -> set[tuple[int, int, int, str]]:
    """The background cells' colours as (row, column, width in cells, colour)."""
    return {(round((float(y) - 1.5) / 24.4), round(float(x) / CELL_WIDTH), round(float(width) / CELL_WIDTH), fill)
            for fill, x, y, width in _BACKGROUND.findall(svg)}


def mismatch(expected_svg: str, actual_svg: str) -> str:
    """What differs between two screenshots: their text as a diff, else which runs of text or
    backgrounds changed style (row and column, 0-based)."""
    expected, actual = screen_lines(expected_svg), screen_lines(actual_svg)
    if expected != actual:
        return "\n".join(difflib.unified_diff(expected, actual, "snapshot", "this run", lineterm="", n=1))
    told = ["the same text; these differ in style (snapshot → this run):"]
    for before, after in zip(styled_runs(expected_svg), styled_runs(actual_svg), strict=False):
        if before != after:
            told.append(f"  row {before[0]} column {before[1]} {before[2]!r}: {before[3]} → {after[3]}")
    gone, new = backgrounds(expected_svg) - backgrounds(actual_svg), backgrounds(actual_svg) - backgrounds(expected_svg)
    told += [f"  background row {row} columns {column}+{width}: {fill} only in the snapshot" for row, column, width, fill in sorted(gone)[:10]]
    told += [f"  background row {row} columns {column}+{width}: {fill} only in this run" for row, column, width, fill in sorted(new)[:10]]
    return "\n".join(told)
