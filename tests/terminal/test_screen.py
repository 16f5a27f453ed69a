"""Conformance of the screen engine, feature by feature, on byte streams built here."""

from __future__ import annotations

import unicodedata

import pytest
from rich.cells import cell_len

from polter.terminal.screen import DEFAULT_STYLE, Cursor, Style, TerminalScreen

ESC = b"\x1b"
CSI = b"\x1b["


def screen_of(data: bytes, columns: int = 20, lines: int = 5, **kwargs: object) -> TerminalScreen:
    screen = TerminalScreen(columns, lines, **kwargs)  # type: ignore[arg-type]
    screen.feed(data)
    return screen


def rows(screen: TerminalScreen) -> list[str]:
    return [row.rstrip() for row in screen.display()]


def style_at(screen: TerminalScreen, x: int, y: int) -> Style:
    cells = [style for text, style in screen.line(y) for _ in text]
    return cells[x]


# -- colours and attributes ------------------------------------------------------------------
@pytest.mark.parametrize(
    ("sgr", "fg", "bg"),
    [
        (b"31", "red", None),
        (b"37", "white", None),
        (b"90", "bright_black", None),
        (b"97", "bright_white", None),
        (b"42", None, "green"),
        (b"103", None, "bright_yellow"),
        (b"38;5;1", "red", None),
        (b"38;5;9", "bright_red", None),
        (b"38;5;123", "color(123)", None),
        (b"48;5;255", None, "color(255)"),
        (b"38;2;255;0;128", "#ff0080", None),
        (b"48;2;1;2;3", None, "#010203"),
        (b"38:2::255:0:0", "#ff0000", None),  # ITU T.416 colon form with colour-space id
        (b"38:2:0:255:0", "#00ff00", None),  # common colon form without it
        (b"48:5:17", None, "color(17)"),
        (b"31;42", "red", "green"),
        (b"38;5;1;48;2;0;0;255", "red", "#0000ff"),
        (b"38;2;300;0;0", "#ff0000", None),  # clamped
    ],
)
def test_colours(sgr: bytes, fg: str | None, bg: str | None) -> None:
    screen = screen_of(CSI + sgr + b"mX")
    assert style_at(screen, 0, 0)[:2] == (fg, bg)
    assert rows(screen)[0] == "X", "no parameter may leak as text"


def test_default_colours_and_reset() -> None:
    screen = screen_of(b"\x1b[31;44ma\x1b[39mb\x1b[49mc\x1b[1;31md\x1b[0me\x1b[1;2mf\x1b[mg")
    assert [style_at(screen, x, 0)[:2] for x in range(3)] == [("red", "blue"), (None, "blue"), (None, None)]
    assert style_at(screen, 3, 0) == Style(fg="red", bold=True)
    assert style_at(screen, 4, 0) is DEFAULT_STYLE
    assert style_at(screen, 5, 0) == Style(bold=True, dim=True)
    assert style_at(screen, 6, 0) == DEFAULT_STYLE


@pytest.mark.parametrize(
    ("on", "off", "field"),
    [
        (b"1", b"22", "bold"),
        (b"2", b"22", "dim"),
        (b"3", b"23", "italic"),
        (b"4", b"24", "underline"),
        (b"4:3", b"4:0", "underline"),
        (b"21", b"24", "underline"),
        (b"5", b"25", "blink"),
        (b"7", b"27", "reverse"),
        (b"8", b"28", "conceal"),
        (b"9", b"29", "strike"),
    ],
)
def test_attributes(on: bytes, off: bytes, field: str) -> None:
    screen = screen_of(CSI + on + b"ma" + CSI + off + b"mb")
    assert getattr(style_at(screen, 0, 0), field) is True
    assert getattr(style_at(screen, 1, 0), field) is False
    assert rows(screen)[0] == "ab"


def test_styles_are_hashable_and_repeated_sequences_share_one_object() -> None:
    screen = screen_of(b"\x1b[1;38;5;200ma\x1b[0mb\x1b[38;5;200;1mc")
    a, c = style_at(screen, 0, 0), style_at(screen, 2, 0)
    assert a == c and {a: 1}[c] == 1
    screen = screen_of(b"\x1b[35mx\x1b[0m \x1b[35my\x1b[0m \x1b[35mz", columns=10)
    assert style_at(screen, 2, 0) is style_at(screen, 4, 0), "interned from the second sighting"


def test_underline_colour_and_modify_other_keys_are_not_styles() -> None:
    screen = screen_of(b"\x1b[58;2;1;2;3;1mX\x1b[0m\x1b[58:5:3mY\x1b[>4;2mZ\x1b[>4;0m\x1b[>4mW")
    assert style_at(screen, 0, 0) == Style(bold=True)
    assert style_at(screen, 1, 0) is DEFAULT_STYLE
    assert style_at(screen, 2, 0) is DEFAULT_STYLE, "CSI > 4;2 m is modifyOtherKeys, not underline"
    assert rows(screen)[0] == "XYZW"


def test_line_runs_cover_the_row() -> None:
    screen = screen_of(b"ab\x1b[31mcd\x1b[0m", columns=10)
    runs = screen.line(0)
    assert runs == [("ab", DEFAULT_STYLE), ("cd", Style(fg="red")), ("      ", DEFAULT_STYLE)]
    assert sum(len(text) for text, _ in runs) == 10


def test_erase_uses_the_current_background_only() -> None:
    screen = screen_of(b"\x1b[1;31;44m\x1b[2K", columns=4)
    assert screen.line(0) == [("    ", Style(bg="blue"))]


# -- wide and zero-width characters ----------------------------------------------------------
def test_wide_characters_take_two_cells() -> None:
    screen = screen_of("中文ab".encode(), columns=10)
    assert screen.cursor.x == 6
    assert screen.display()[0] == "中文ab    "
    text, style = screen.line(0)[0]
    assert text == "中文ab    " and style is DEFAULT_STYLE


def test_emoji_with_variation_selector_and_zwj_keep_the_rest_of_the_text() -> None:
    """pyte drops everything after VS16/ZWJ in a chunk; nothing may be lost here."""
    screen = screen_of("A❤️ tail 👩‍💻 end 中".encode(), columns=40)
    assert rows(screen)[0] == "A❤️ tail 👩‍💻 end 中"
    assert screen.cursor.x == 1 + 2 + 6 + 2 + 5 + 2


CLUSTERS = ["a", "é", "e\u0301", "中", "🎉", "❤", "❤️", "✔️", "☺️", "👩‍💻", "👨‍👩‍👧", "🇩🇪", "👍🏽", "1️⃣", "#️⃣", "𝐀"]


@pytest.mark.parametrize("cluster", CLUSTERS)
def test_grapheme_clusters_take_the_cells_rich_gives_them(cluster: str) -> None:
    """One cluster per cell group, as wide as Rich (which draws the pane) and the programs' own
    width libraries measure it: otherwise everything after an emoji would shift."""
    data = f"[{cluster}]".encode()
    whole = screen_of(data, columns=12)
    assert whole.cursor.x == 2 + cell_len(cluster)
    assert sum(cell_len(text) for text, _ in whole.line(0)) == 12
    assert rows(whole)[0] == unicodedata.normalize("NFC", f"[{cluster}]")  # marks compose, as pyte
    for cut in range(len(data) + 1):  # split between the characters of the cluster, too
        screen = TerminalScreen(12, 5)
        screen.feed(data[:cut])
        screen.feed(data[cut:])
        assert screen.display() == whole.display() and screen.cursor == whole.cursor


def test_widening_a_cell_takes_the_next_cell() -> None:
    """``❤`` then VS16 over ``b中``: the heart widens into the first half of ``中``, whose
    second half is blanked."""
    screen = screen_of("ab中".encode() + b"\x1b[2G" + "❤\ufe0f".encode(), columns=8)
    assert screen.display()[0] == "a❤️" + " " * 5
    assert screen.cursor.x == 3
    assert sum(cell_len(text) for text, _ in screen.line(0)) == 8


def test_a_joiner_at_the_start_of_a_row_is_dropped() -> None:
    screen = screen_of("\u200d\ufe0fa".encode())
    assert rows(screen)[0] == "a" and screen.cursor.x == 1


def test_characters_outside_the_bmp() -> None:
    screen = screen_of("🎉x𝐀y".encode(), columns=8)  # a wide emoji, a narrow mathematical letter
    assert screen.display()[0] == "🎉x𝐀y   "
    assert screen.cursor.x == 5


def test_combining_marks_join_the_previous_cell() -> None:
    screen = screen_of("e\u0301x".encode(), columns=5)
    assert screen.display()[0] == "éx   "
    assert screen.cursor.x == 2


def test_overwriting_half_of_a_wide_character_blanks_the_other_half() -> None:
    screen = screen_of("中文\x1b[1Gx\x1b[4Gy".encode(), columns=6)
    assert screen.display()[0] == "x  y  "


def test_wide_character_at_the_last_column_wraps() -> None:
    screen = screen_of("abcd中".encode(), columns=5)
    assert rows(screen)[:2] == ["abcd", "中"]
    assert screen.cursor == Cursor(2, 1, True, "block", False)


def test_resize_cutting_a_wide_character() -> None:
    screen = screen_of("ab中".encode(), columns=6)
    screen.resize(3, 5)
    assert screen.display()[0] == "ab "


# -- cursor movement, wrapping, editing ------------------------------------------------------
def test_pending_wrap_at_the_last_column() -> None:
    screen = screen_of(b"abcde", columns=5)
    assert screen.cursor.x == 4 and screen.cursor.y == 0
    screen.feed(b"f")
    assert rows(screen)[:2] == ["abcde", "f"]


@pytest.mark.parametrize(
    ("moves", "expected"),
    [  # each checked against tmux 3.3a: from the pending wrap, one step back lands on the last column
        (b"\x08Y", "abcdY"),
        (b"\x1b[DY", "abcdY"),
        (b"\x1b[2DY", "abcYe"),
        (b"\x1b[CY", "abcdY"),
        (b"\x1b[4h\x1b[DY\x1b[P", "abcdY"),
    ],
)
def test_moving_back_from_the_pending_wrap_counts_from_past_the_last_column(moves: bytes, expected: str) -> None:
    assert rows(screen_of(b"abcde" + moves, columns=5))[:2] == [expected, ""]


def test_carriage_return_after_the_last_column_does_not_wrap() -> None:
    screen = screen_of(b"abcde\rX", columns=5)
    assert rows(screen)[:2] == ["Xbcde", ""]


def test_autowrap_off() -> None:
    screen = screen_of(b"\x1b[?7labcdefg", columns=5)
    assert rows(screen)[:2] == ["abcdg", ""]
    assert not screen.auto_wrap
    screen.feed(b"\x1b[?7h")
    assert screen.auto_wrap


def test_cursor_movement() -> None:
    screen = screen_of(b"\x1b[3;4H", columns=10)
    assert screen.cursor[:2] == (3, 2)
    screen.feed(b"\x1b[A\x1b[2C")
    assert screen.cursor[:2] == (5, 1)
    screen.feed(b"\x1b[10B\x1b[99D")
    assert screen.cursor[:2] == (0, 4)
    screen.feed(b"\x1b[7G\x1b[2d")
    assert screen.cursor[:2] == (6, 1)
    screen.feed(b"\x1b[2E")
    assert screen.cursor[:2] == (0, 3)
    screen.feed(b"\x1b[5`\x1b[F")
    assert screen.cursor[:2] == (0, 2)
    screen.feed(b"\x1b[H\x1b[2a\x1b[e")
    assert screen.cursor[:2] == (2, 1)


def test_backspace_tab_and_tab_stops() -> None:
    screen = screen_of(b"a\tb\x08c\x1b[3Id", columns=40)
    assert rows(screen)[0] == "a" + " " * 7 + "c" + " " * 23 + "d"
    screen.feed(b"\x1b[2Ze\x1b[3g\r\tX")
    assert screen.cursor.x == 39
    screen.feed(b"\r\x1b[5C\x1bH\r\tY")
    assert screen.display()[0][5] == "Y"


def test_insert_delete_erase_characters() -> None:
    screen = screen_of(b"abcdef\x1b[3G\x1b[2@", columns=8)
    assert screen.display()[0] == "ab  cdef"
    screen.feed(b"\x1b[3P")
    assert screen.display()[0] == "abdef   "
    screen.feed(b"\x1b[2X")
    assert screen.display()[0] == "ab  f   "
    screen.feed(b"\x1b[4h12\x1b[4l")
    assert screen.display()[0] == "ab12  f "


def test_erase_in_line_and_display() -> None:
    screen = screen_of(b"aaaa\r\nbbbb\r\ncccc\x1b[2;3H\x1b[K", columns=4, lines=3)
    assert rows(screen) == ["aaaa", "bb", "cccc"]
    screen.feed(b"\x1b[1K")
    assert rows(screen) == ["aaaa", "", "cccc"]
    screen.feed(b"\x1b[J")
    assert rows(screen) == ["aaaa", "", ""]
    screen.feed(b"\x1b[1;1Hxyz\x1b[1J")
    assert rows(screen) == ["", "", ""]


def test_repeat_previous_character() -> None:
    screen = screen_of(b"ab\x1b[3b", columns=10)
    assert rows(screen)[0] == "abbbb"


def test_dec_special_graphics() -> None:
    screen = screen_of(b"\x1b(0lqqk\x1b(B lqk\x0eq\x0fq\x1b)0\x0eq\x0fq", columns=20)
    assert rows(screen)[0] == "┌──┐ lqkqq─q"


def test_save_and_restore_cursor_with_style() -> None:
    screen = screen_of(b"\x1b[2;3H\x1b[31m\x1b7\x1b[0m\x1b[H\x1b8X\x1b[5;5H\x1b[s\x1b[H\x1b[uY", columns=10)
    assert screen.display()[1][2] == "X" and style_at(screen, 2, 1).fg == "red"
    assert screen.display()[4][4] == "Y"


def test_reset_and_soft_reset() -> None:
    screen = screen_of(b"text\x1b[?25l\x1b[?2004h\x1b[31m\x1b]2;t\x07\x1bc")
    assert rows(screen) == [""] * 5
    assert screen.cursor.visible and not screen.bracketed_paste and screen.cursor[:2] == (0, 0)
    screen.feed(b"\x1b[?25l\x1b[?7l\x1b[31m\x1b[!pX")
    assert screen.cursor.visible and screen.auto_wrap and style_at(screen, 0, 0) is DEFAULT_STYLE


def test_alignment_test_pattern() -> None:
    screen = screen_of(b"\x1b#8", columns=3, lines=2)
    assert screen.display() == ["EEE", "EEE"]


# -- scroll regions --------------------------------------------------------------------------
def numbered(lines: int) -> bytes:
    return b"\r\n".join(str(n).encode() for n in range(lines))


def test_scroll_region_index_scrolls_only_the_region() -> None:
    screen = screen_of(numbered(5) + b"\x1b[2;4r\x1b[4;1H\n", lines=5)
    assert rows(screen) == ["0", "2", "3", "", "4"]
    assert screen.history_size == 0, "a partial region never feeds the scrollback"


def test_set_margins_homes_the_cursor_and_ignores_invalid_regions() -> None:
    screen = screen_of(b"\x1b[3;3H\x1b[2;4r", lines=5)
    assert screen.cursor[:2] == (0, 0)
    screen.feed(b"\x1b[3;3H\x1b[4;2r")
    assert screen.cursor[:2] == (2, 2)


def test_reverse_index_at_the_top_margin() -> None:
    screen = screen_of(numbered(5) + b"\x1b[2;4r\x1b[2;1H\x1bM", lines=5)
    assert rows(screen) == ["0", "", "1", "2", "4"]


def test_insert_and_delete_lines_inside_the_region() -> None:
    screen = screen_of(numbered(5) + b"\x1b[2;4r\x1b[3;1H\x1b[L", lines=5)
    assert rows(screen) == ["0", "1", "", "2", "4"]
    screen.feed(b"\x1b[2;1H\x1b[2M")
    assert rows(screen) == ["0", "2", "", "", "4"]
    screen.feed(b"\x1b[5;1H\x1b[L")
    assert rows(screen) == ["0", "2", "", "", "4"], "IL outside the region does nothing"


def test_scroll_up_and_down() -> None:
    screen = screen_of(numbered(5) + b"\x1b[2;4r\x1b[S", lines=5)
    assert rows(screen) == ["0", "2", "3", "", "4"]
    screen.feed(b"\x1b[2T")
    assert rows(screen) == ["0", "", "", "2", "4"]
    screen.feed(b"\x1b[r\x1b[2S")
    assert rows(screen) == ["", "2", "4", "", ""]
    assert screen.history_size == 2


def test_origin_mode() -> None:
    replies: list[bytes] = []
    screen = screen_of(b"\x1b[2;4r\x1b[?6h\x1b[1;1HA\x1b[9;1HB\x1b[6n", lines=5, reply=replies.append)
    assert rows(screen) == ["", "A", "", "B", ""]
    assert screen.origin_mode
    assert replies == [b"\x1b[3;2R"]


# -- alternate screen ------------------------------------------------------------------------
@pytest.mark.parametrize("mode", [b"47", b"1047", b"1049"])
def test_alternate_screen_restores_the_main_screen(mode: bytes) -> None:
    screen = screen_of(b"main\x1b[?" + mode + b"h\x1b[2J\x1b[HALT")
    assert screen.alternate_screen
    assert rows(screen)[0] == "ALT"
    screen.feed(b"\x1b[?" + mode + b"l")
    assert not screen.alternate_screen
    assert rows(screen)[0] == "main"
    assert screen.take_dirty() is None


def test_1049_saves_and_restores_the_cursor_and_clears_the_alternate_screen() -> None:
    screen = screen_of(b"ab\x1b[?1049hjunk\x1b[?1049l\x1b[?1049h")
    assert rows(screen)[0] == "", "1049 clears the alternate screen on entry"
    screen.feed(b"\x1b[4;4Hx\x1b[?1049l")
    assert screen.cursor[:2] == (2, 0)


def test_1047_clears_the_alternate_screen_on_exit() -> None:
    screen = screen_of(b"\x1b[?1047hjunk\x1b[?1047l\x1b[?47h")
    assert rows(screen)[0] == ""
    screen = screen_of(b"\x1b[?47hjunk\x1b[?47l\x1b[?47h")
    assert rows(screen)[0] == "junk", "47 keeps the alternate screen's contents"


def test_alternate_screen_has_no_scrollback() -> None:
    screen = screen_of(b"\x1b[?1049h" + numbered(20), lines=5)
    assert screen.history_size == 0
    screen.feed(b"\x1b[?1049l" + numbered(20))  # from the restored cursor at the top
    assert screen.history_size == 15


# -- scrollback ------------------------------------------------------------------------------
def test_scrollback_keeps_ten_thousand_lines_by_default() -> None:
    screen = screen_of(numbered(10_040), columns=10, lines=40)
    assert screen.history_size == 10_000
    assert screen.line(-1)[0][0].rstrip() == "9999"
    assert screen.line(-10_000)[0][0].rstrip() == "0"
    assert rows(screen)[0] == "10000"
    with pytest.raises(IndexError):
        screen.line(-10_001)


def test_scrollback_is_configurable_and_drops_the_oldest() -> None:
    screen = screen_of(numbered(30), lines=5, scrollback=7)
    assert screen.history_size == 7
    assert screen.scrollback_limit == 7
    assert screen.line(-7)[0][0].rstrip() == "18"  # 25 rows left the screen: 18…24 are kept
    assert screen_of(numbered(30), lines=5, scrollback=0).history_size == 0


def test_scrollback_keeps_styles_and_wide_characters() -> None:
    screen = screen_of("\x1b[31mred\x1b[0m 中\r\n".encode() + numbered(5), columns=8, lines=5)
    assert screen.history_size == 1
    assert screen.line(-1) == [("red", Style(fg="red")), (" 中  ", DEFAULT_STYLE)]  # 中 takes 2 of 8 cells


def test_erase_saved_lines_clears_only_the_scrollback() -> None:
    screen = screen_of(numbered(12), lines=5)
    assert screen.history_size == 7
    screen.feed(b"\x1b[3J")
    assert screen.history_size == 0
    assert rows(screen) == ["7", "8", "9", "10", "11"]


def test_clearing_the_screen_keeps_it_in_the_scrollback() -> None:
    """ED 2 on the main screen moves the text into history first (tmux does the same), so
    ``printf '\\e[2J'`` loses nothing; ``clear`` also sends ED 3 to drop it deliberately."""
    screen = screen_of(b"one\r\ntwo\r\n\x1b[2J", lines=5)
    assert rows(screen) == [""] * 5
    assert [screen.line(y)[0][0].rstrip() for y in (-2, -1)] == ["one", "two"]
    screen.feed(b"\x1b[H\x1b[2J\x1b[3J")
    assert screen.history_size == 0


def test_scrollback_rows_of_another_width_are_padded_or_clipped() -> None:
    screen = screen_of(b"0123456789\r\n" + numbered(5), columns=10, lines=5)
    screen.resize(6, 5)
    assert screen.line(-1) == [("012345", DEFAULT_STYLE)]
    screen.resize(12, 5)
    assert screen.line(-1) == [("0123456789  ", DEFAULT_STYLE)]


# -- resize ----------------------------------------------------------------------------------
def test_resize_keeps_the_cursor_in_range() -> None:
    """pyte leaves cursor.y past the last line after shrinking (its resize bug)."""
    screen = screen_of(numbered(10), columns=10, lines=10)
    assert screen.cursor[:2] == (1, 9)
    screen.resize(4, 5)
    assert screen.cursor[:2] == (1, 4)
    assert rows(screen) == ["5", "6", "7", "8", "9"]
    screen.feed(b"X")
    assert rows(screen)[4] == "9X"


def test_shrinking_drops_blank_rows_below_the_cursor_first() -> None:
    screen = screen_of(b"a\r\nb", columns=5, lines=10)
    screen.resize(5, 4)
    assert rows(screen) == ["a", "b", "", ""]
    assert screen.history_size == 0


def test_growing_brings_rows_back_from_the_scrollback() -> None:
    screen = screen_of(numbered(10), columns=5, lines=5)
    assert screen.history_size == 5
    screen.resize(5, 8)
    assert rows(screen) == [str(n) for n in range(2, 10)]
    assert screen.cursor[:2] == (1, 7)
    assert screen.history_size == 2


def test_resize_columns_clips_and_pads_rows() -> None:
    screen = screen_of(b"abcdefgh", columns=10, lines=2)
    screen.resize(5, 2)
    assert screen.display() == ["abcde", "     "]
    assert screen.cursor.x == 4
    screen.resize(7, 2)
    assert screen.display()[0] == "abcde  "
    assert screen.columns == 7 and screen.lines == 2


def test_resize_in_the_alternate_screen_keeps_both_pages() -> None:
    screen = screen_of(b"main\x1b[?1049h\x1b[5;5Halt", columns=10, lines=5)
    screen.resize(8, 3)
    assert screen.cursor.y <= 2
    screen.feed(b"\x1b[?1049l")
    assert rows(screen)[0] == "main"


def test_invalid_sizes_are_refused() -> None:
    with pytest.raises(ValueError):
        TerminalScreen(0, 5)
    with pytest.raises(ValueError):
        TerminalScreen(5, 5).resize(5, 0)


# -- cursor shape and visibility -------------------------------------------------------------
@pytest.mark.parametrize(
    ("param", "shape", "blinking"),
    [(b"0", "block", False), (b"1", "block", True), (b"2", "block", False), (b"3", "underline", True),
     (b"4", "underline", False), (b"5", "bar", True), (b"6", "bar", False)],
)  # fmt: skip
def test_cursor_shape(param: bytes, shape: str, blinking: bool) -> None:
    screen = screen_of(b"\x1b[5 q\x1b[" + param + b" q")
    assert (screen.cursor.shape, screen.cursor.blinking) == (shape, blinking)


def test_cursor_visibility_and_blink_mode() -> None:
    screen = screen_of(b"\x1b[?25l")
    assert not screen.cursor.visible
    screen.feed(b"\x1b[?25h\x1b[?12h")
    assert screen.cursor.visible and screen.cursor.blinking


# -- replies ---------------------------------------------------------------------------------
def replies_to(query: bytes, prefix: bytes = b"", **kwargs: object) -> list[bytes]:
    out: list[bytes] = []
    screen = TerminalScreen(80, 24, reply=out.append, **kwargs)  # type: ignore[arg-type]
    screen.feed(prefix)
    out.clear()
    screen.feed(query)
    assert rows(screen) == [""] * 24 or prefix, "a query must not draw anything"
    return out


@pytest.mark.parametrize(
    ("query", "answer"),
    [
        (b"\x1b[6n", b"\x1b[1;1R"),
        (b"\x1b[5n", b"\x1b[0n"),
        (b"\x1b[?6n", b"\x1b[?1;1;1R"),
        (b"\x1b[c", b"\x1b[?62;22c"),
        (b"\x1b[0c", b"\x1b[?62;22c"),
        (b"\x1b[>c", b"\x1b[>1;10;0c"),
        (b"\x1b[>0c", b"\x1b[>1;10;0c"),
        (b"\x1b[?2026$p", b"\x1b[?2026;2$y"),
        (b"\x1b[?2004$p", b"\x1b[?2004;2$y"),
        (b"\x1b[?1016$p", b"\x1b[?1016;0$y"),
        (b"\x1b[?7$p", b"\x1b[?7;1$y"),
        (b"\x1b[4$p", b"\x1b[4;2$y"),
        (b"\x1b[12$p", b"\x1b[12;0$y"),
        (b"\x1b[18t", b"\x1b[8;24;80t"),
        (b"\x1b]10;?\x07", b"\x1b]10;rgb:e5e5/e5e5/e5e5\x07"),
        (b"\x1b]11;?\x1b\\", b"\x1b]11;rgb:1212/1212/1212\x1b\\"),
        (b"\x1b]4;1;?\x07", b"\x1b]4;1;rgb:cdcd/0000/0000\x07"),
    ],
)
def test_replies(query: bytes, answer: bytes) -> None:
    assert replies_to(query) == [answer]


def test_da2_is_not_answered_as_da1() -> None:
    (answer,) = replies_to(b"\x1b[>c")
    assert answer.startswith(b"\x1b[>") and not answer.startswith(b"\x1b[?")


def test_xtversion() -> None:
    (answer,) = replies_to(b"\x1b[>0q")
    assert answer.startswith(b"\x1bP>|Polter(") and answer.endswith(b")\x1b\\")
    assert replies_to(b"\x1b[>q") == [answer]


def test_cursor_position_report_is_one_based_and_follows_the_cursor() -> None:
    assert replies_to(b"\x1b[6n", prefix=b"\x1b[5;7Hx") == [b"\x1b[5;8R"]
    assert replies_to(b"\x1b[6n", prefix=b"x" * 80) == [b"\x1b[1;80R"]


def test_decrqm_reports_set_modes() -> None:
    prefix = b"\x1b[?2026h\x1b[?2004h\x1b[?1002h\x1b[?1049h\x1b[4h"
    assert replies_to(b"\x1b[?2026$p\x1b[?2004$p\x1b[?1002$p\x1b[?1000$p\x1b[?1049$p\x1b[4$p", prefix) == [
        b"\x1b[?2026;1$y", b"\x1b[?2004;1$y", b"\x1b[?1002;1$y", b"\x1b[?1000;2$y",
        b"\x1b[?1049;1$y", b"\x1b[4;1$y",
    ]  # fmt: skip


def test_kitty_keyboard_query_gets_no_reply_but_da1_does() -> None:
    """We do not implement the kitty keyboard protocol: the program sends ``CSI ? u`` then DA1,
    and a DA1 answer with no ``CSI ? flags u`` before it tells it so."""
    assert replies_to(b"\x1b[?u\x1b[c") == [b"\x1b[?62;22c"]


def test_no_reply_without_a_reply_callable() -> None:
    screen = screen_of(b"\x1b[6n\x1b[c\x1b]11;?\x07")
    assert rows(screen) == [""] * 5


# -- modes -----------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("on", "off", "name", "value"),
    [
        (b"\x1b[?2004h", b"\x1b[?2004l", "bracketed_paste", True),
        (b"\x1b[?1h", b"\x1b[?1l", "application_cursor_keys", True),
        (b"\x1b=", b"\x1b>", "application_keypad", True),
        (b"\x1b[?1000h", b"\x1b[?1000l", "mouse_tracking", 1000),
        (b"\x1b[?1002h", b"\x1b[?1002l", "mouse_tracking", 1002),
        (b"\x1b[?1003h", b"\x1b[?1003l", "mouse_tracking", 1003),
        (b"\x1b[?9h", b"\x1b[?9l", "mouse_tracking", 9),
        (b"\x1b[?1006h", b"\x1b[?1006l", "mouse_sgr", True),
        (b"\x1b[?1004h", b"\x1b[?1004l", "focus_events", True),
        (b"\x1b[?2026h", b"\x1b[?2026l", "synchronized_output", True),
        (b"\x1b[?1049h", b"\x1b[?1049l", "alternate_screen", True),
        (b"\x1b[?1007h", b"\x1b[?1007l", "alternate_scroll", True),
        (b"\x1b[?5h", b"\x1b[?5l", "reverse_video", True),
        (b"\x1b[?6h", b"\x1b[?6l", "origin_mode", True),
    ],
)
def test_mode_flags(on: bytes, off: bytes, name: str, value: object) -> None:
    screen = TerminalScreen(20, 5)
    initial = getattr(screen, name)
    assert initial in (False, 0)
    screen.feed(on)
    assert getattr(screen, name) == value
    screen.feed(off)
    assert getattr(screen, name) == initial


def test_mouse_modes_replace_each_other_and_any_reset_turns_tracking_off() -> None:
    screen = screen_of(b"\x1b[?1000h\x1b[?1002h\x1b[?1003h")
    assert screen.mouse_tracking == 1003
    screen.feed(b"\x1b[?1000l")
    assert screen.mouse_tracking == 0, "as in xterm and tmux"


def test_several_modes_in_one_sequence() -> None:
    screen = screen_of(b"\x1b[?1000;1006;2004h")
    assert (screen.mouse_tracking, screen.mouse_sgr, screen.bracketed_paste) == (1000, True, True)


def test_newline_mode() -> None:
    screen = screen_of(b"\x1b[20hab\ncd", columns=5)
    assert rows(screen)[:2] == ["ab", "cd"]
    screen.feed(b"\x1b[20l\nef")
    assert rows(screen)[2] == "  ef"


# -- sequences that must be consumed silently ------------------------------------------------
SILENT = [
    b"\x1b[<u", b"\x1b[<1u", b"\x1b[>4;2m", b"\x1b[>4;0m", b"\x1b[>4m", b"\x1b[>4;?m", b"\x1b[>7u",
    b"\x1b[=1;1u", b"\x1b[=c", b"\x1b[?u", b"\x1b[?2031h", b"\x1b[?1016l", b"\x1b[16t", b"\x1b[14t",
    b"\x1bP+q544e\x1b\\", b"\x1bP$qm\x1b\\", b"\x1bPq#0;2;0;0;0#0~~@@vv@@~~$-\x1b\\",
    b"\x1b_Gi=31,s=1,v=1,a=q,t=d,f=24;AAAA\x1b\\", b"\x1b^privacy message\x1b\\", b"\x1bXstring\x1b\\",
    b"\x1b]7501;state=working\x1b\\", b"\x1b]7501;?\x07", b"\x1b]8;id=1;https://example.com\x1b\\",
    b"\x1b]8;;\x1b\\", b"\x1b]52;c;aGVsbG8=\x07", b"\x1b]133;A\x07", b"\x1b]133;D;0\x1b\\",
    b"\x1b]1337;File=inline=1:AAAA\x07", b"\x1b[0 q", b"\x1b[?1007l", b"\x1b[?1015l", b"\x1bN", b"\x1b%G",
    b"\x1b[!p", b"\x1b*0", b"\x1b[>1;2;3T", b"\x1b[2;3;4;5;6T",
]  # fmt: skip


@pytest.mark.parametrize("sequence", SILENT, ids=lambda s: repr(s)[2:30])
def test_unknown_and_unsupported_sequences_print_nothing(sequence: bytes) -> None:
    data = b"ab" + sequence + b"cd"
    expected = ["abcd"] + [""] * 4
    for cut in range(len(data) + 1):  # split across two reads at every byte
        screen = TerminalScreen(20, 5)
        screen.feed(data[:cut])
        screen.feed(data[cut:])
        assert rows(screen) == expected, f"split at {cut}"


def test_strings_split_at_every_byte_with_one_byte_reads() -> None:
    data = b"x\x1b]0;title\x1b\\y\x1bP1$r0m\x1b\\z\x1b_G;AAAA\x07w"
    screen = TerminalScreen(20, 5)
    for byte in data:
        screen.feed(bytes([byte]))
    assert rows(screen)[0] == "xyzw"
    assert screen.title == "title"


def test_a_string_ended_by_another_escape_sequence() -> None:
    screen = screen_of(b"\x1b]2;abc\x1b[31mX")
    assert screen.title == "abc"
    assert rows(screen)[0] == "X" and style_at(screen, 0, 0).fg == "red"


def test_cancel_aborts_a_string() -> None:
    screen = screen_of(b"\x1b]2;abc\x18X")
    assert screen.title == ""
    assert rows(screen)[0] == "X"


def test_huge_strings_are_consumed_without_keeping_them() -> None:
    screen = TerminalScreen(20, 5)
    screen.feed(b"a\x1bPq")
    for _ in range(300):
        screen.feed(b"#0;2;0;0;0#0~~@@vv@@~~$-" * 200)
    screen.feed(b"\x1b\\b\x1b]2;" + b"t" * 100_000 + b"\x07c")
    assert rows(screen)[0] == "abc"
    assert screen.title == "", "an over-long OSC is ignored"
    assert len(screen._tokenizer._string_payload) == 0


def test_malformed_sequences_do_not_crash() -> None:
    screen = screen_of(b"\x1b[12\x05x\x1b\x1b[31my\x1b(\x07z\x1b[99999999999999999999Xw\x1b[;;;;;Hv")
    # Dropped: the interrupted CSI, the lone ESC, ESC ( without a final. ECH's huge count is
    # clamped, and CUP with empty parameters homes the cursor, so "v" overwrites "x".
    assert rows(screen) == ["vyzw", "", "", "", ""]


# -- titles ----------------------------------------------------------------------------------
def test_titles() -> None:
    screen = screen_of(b"\x1b]0;both\x07")
    assert (screen.title, screen.icon_title) == ("both", "both")
    screen.feed(b"\x1b]2;window\x1b\\\x1b]1;icon\x07")
    assert (screen.title, screen.icon_title) == ("window", "icon")
    screen.feed("\x1b]2;✳ Claude\x07".encode())
    assert screen.title == "✳ Claude"


def test_title_stack() -> None:
    screen = screen_of(b"\x1b]2;one\x07\x1b[22;0t\x1b]2;two\x07")
    assert screen.title == "two"
    screen.feed(b"\x1b[23;0t")
    assert screen.title == "one"


def test_working_directory_and_bell() -> None:
    screen = screen_of(b"\x1b]7;file://host/home/me\x07\x07\x07")
    assert screen.cwd == "file://host/home/me"
    assert screen.bell_count == 2


# -- encoding --------------------------------------------------------------------------------
def test_utf8_split_across_reads_at_every_byte() -> None:
    data = "aé中❤️👩‍💻b".encode()
    expected = TerminalScreen(20, 2)
    expected.feed(data)
    for cut in range(len(data) + 1):
        screen = TerminalScreen(20, 2)
        screen.feed(data[:cut])
        screen.feed(data[cut:])
        assert screen.display() == expected.display()
    assert expected.display()[0].rstrip() == "aé中❤️👩‍💻b"


def test_invalid_bytes_become_replacement_characters() -> None:
    screen = screen_of(b"a\xffb\xc3(c\xe2\x82d\xed\xa0\x80e")
    assert rows(screen)[0] == "a\ufffdb\ufffd(c\ufffdd\ufffd\ufffd\ufffde"


def test_c1_and_other_controls_are_not_printed() -> None:
    screen = screen_of("a\u009b31mb\u0085c\x00\x7fd".encode())
    assert rows(screen)[0] == "a31mbcd"


# -- dirty rows ------------------------------------------------------------------------------
def test_take_dirty() -> None:
    screen = TerminalScreen(10, 5)
    assert screen.take_dirty() is None, "everything is dirty at first"
    assert screen.take_dirty() == set()
    screen.feed(b"\x1b[3;1Hx\x1b[5;1H\x1b[K")
    assert screen.take_dirty() == {2, 4}
    screen.feed(b"\r\n")
    assert screen.take_dirty() is None, "a scroll moves every row"
    screen.resize(8, 4)
    assert screen.take_dirty() is None


def test_the_screen_model_imports_no_textual() -> None:
    """The architecture rule: only the widget uses Textual."""
    import subprocess
    import sys

    code = "import sys, polter.terminal.screen; print(any(m.split('.')[0] in ('textual', 'rich') for m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_desktop_notifications_a_program_asks_for_are_kept() -> None:
    """OSC 9 (iTerm2), OSC 777 notify (urxvt, WezTerm, Ghostty, foot) and OSC 99 (kitty), with either
    terminator; ConEmu's numbered OSC 9 commands (progress) are not notifications; nothing is drawn."""
    screen = TerminalScreen(40, 3)
    screen.feed(b"\x1b]9;Build done\x07\x1b]9;4;1;50\x07\x1b]777;notify;Tests;12 passed\x1b\\")
    screen.feed(b"\x1b]99;i=1:d=0;kitty says hi\x1b\\\x1b]777;notify;Only a title;\x07\x1b]9;4\x07")
    assert list(screen.notifications) == ["Build done", "Tests: 12 passed", "kitty says hi", "Only a title"]
    assert screen.display()[0].strip() == "" and screen.bell_count == 0
