"""Selecting a pane's text with the mouse: the text of a selection, and how it is drawn."""

from __future__ import annotations

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Offset
from textual.selection import Selection
from textual.strip import Strip

from polter.terminal.screen import TerminalScreen
from polter.window.selection import highlight, line_number, selected_text, word_or_line


def screen_with(text: str, columns: int = 20, lines: int = 3) -> TerminalScreen:
    screen = TerminalScreen(columns, lines)
    screen.feed(text.replace("\n", "\r\n").encode())
    return screen


def test_a_selection_within_a_line_and_across_lines_drops_trailing_blanks() -> None:
    screen = screen_with("hello world\nsecond line\nthird")
    assert selected_text(screen, Selection(Offset(6, 0), Offset(11, 0))) == "world"
    assert selected_text(screen, Selection(Offset(6, 0), Offset(6, 1))) == "world\nsecond"
    assert selected_text(screen, Selection(Offset(0, 2), None)) == "third"


def test_lines_count_from_the_oldest_scrollback_line_so_history_is_selectable() -> None:
    screen = screen_with("one\ntwo\nthree\nfour\nfive")  # three rows: "one" and "two" went to the scrollback
    assert screen.history_size == 2 and line_number(screen, -2) == 0 and line_number(screen, 0) == 2
    assert selected_text(screen, Selection(Offset(0, 0), Offset(5, 2))) == "one\ntwo\nthree"


def test_wide_characters_count_once_as_in_textuals_selection() -> None:
    screen = screen_with("日本語 text")
    assert selected_text(screen, Selection(Offset(0, 0), Offset(3, 0))) == "日本語"
    assert selected_text(screen, Selection(Offset(4, 0), Offset(8, 0))) == "text"


def test_the_highlight_covers_the_selected_characters_cells_and_keeps_the_rest() -> None:
    strip = Strip([Segment("日本 ab", Style(color="red"))], 7)
    marked = highlight(strip, "日本 ab", (1, 3), Style(bgcolor="blue"))
    assert [(segment.text, segment.style.bgcolor is not None) for segment in marked] == [
        ("日", False), ("本 ", True), ("ab", False)]
    assert all(segment.style.color.name == "red" for segment in marked)  # the text keeps its own colour
    assert highlight(strip, "日本 ab", None, Style(bgcolor="blue")) is strip
    assert [segment.text for segment in highlight(strip, "日本 ab", (4, -1), Style(bgcolor="blue"))][-1] == "b"


def test_a_double_click_picks_the_word_under_the_pointer_and_a_triple_click_the_line() -> None:
    text = "  see 日本 and polter/ui.py   "
    assert word_or_line(text, 7, 3, 2) == Selection(Offset(2, 7), Offset(5, 7))  # "see"
    assert word_or_line(text, 7, 7, 2) == Selection(Offset(6, 7), Offset(8, 7))  # a cell of 日本
    assert word_or_line(text, 7, 20, 2) == Selection(Offset(13, 7), Offset(25, 7))  # "polter/ui.py"
    assert word_or_line(text, 7, 0, 2) is None and word_or_line(text, 7, 40, 2) is None  # blanks
    assert word_or_line(text, 7, 0, 3) == Selection(Offset(0, 7), Offset(25, 7))
    assert word_or_line("   ", 7, 1, 3) is None
