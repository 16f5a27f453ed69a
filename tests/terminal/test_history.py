"""Scrollback kept compact: rows read the same before and after their styles are stored as runs and after they
are sealed into compressed blocks, and the limit, the rows' numbers and taking rows back hold across blocks."""

from __future__ import annotations

import tracemalloc

from polter.terminal._history import BLOCK, OPEN_ROWS, History
from polter.terminal._style import Style
from polter.terminal.screen import TerminalScreen


def test_rows_copied_from_cells_read_the_same_sealed_and_compacted_a_budget_at_a_time() -> None:
    red, blue = Style(fg="red"), Style(bg="blue", bold=True)
    rows = [(list(f"{n:05d} the quick brown fox".ljust(120)), [red] * 5 + [Style()] * 100 + [blue] * 15)
            for n in range(3000)]
    plain = (list("x" * 120), [Style()] * 120)
    confetti = (list("y" * 120), [red, blue] * 60)  # runs would be longer: stays per cell
    history = History(5000)
    for chars, styles in [*rows, plain, confetti]:
        history.append(chars, styles)
    assert history.sealed_rows == (3002 - OPEN_ROWS) // BLOCK * BLOCK + BLOCK  # sealed as they came
    left = history.left_to_compact()
    while left:  # the rest a budget at a time: open rows' runs, the last blocks sealed, every block compressed
        now = history.compact(budget=500)
        assert 0 < left - now < 500 + BLOCK, (left, now)
        left = now
    assert history.sealed_rows == 3002 // BLOCK * BLOCK
    for index, (chars, styles) in enumerate([*rows, plain, confetti]):
        assert history.row(index - len(history), 120) == (chars, styles)
    assert history.row(-1, 60) == (confetti[0][:60], confetti[1][:60])  # narrower now: clipped


def test_the_screen_reads_the_same_after_compacting() -> None:
    screen = TerminalScreen(40, 5)
    screen.feed(b"".join(b"\x1b[31m%05d\x1b[0m plain \x1b[1;44mbold blue\x1b[0m\r\n" % n for n in range(200)))
    before = [screen.line(row) for row in range(-screen.history_size, 0)]
    assert screen.compact_history() == 0
    assert [screen.line(row) for row in range(-screen.history_size, 0)] == before


def test_trailing_default_blanks_are_not_kept_and_rows_read_the_same() -> None:
    """A row's trailing blanks of the default style cost nothing (a reader pads with them), so the same
    lines take no more memory in a wider pane; a blank of another style is content and stays."""
    red, on_blue, default = Style(fg="red"), Style(bg="blue"), Style()
    lines = [
        ("plain", [default] * 5),  # one style: cut at once
        ("00001 the quick brown fox", [red] * 5 + [default] * 20),  # cut when compacting
        ("status" + " " * 40, [red] * 6 + [default] * 30 + [on_blue] * 10),  # the blue blanks stay
        ("", []),
        (" " * 10, [on_blue] * 10),
    ]

    def rows(width: int) -> list[tuple[list[str], list[Style]]]:
        return [(list(text.ljust(width)), styles + [default] * (width - len(styles))) for text, styles in lines]

    def filled(width: int) -> tuple[History, int]:
        tracemalloc.start()
        try:
            before = tracemalloc.get_traced_memory()[0]
            history = History(3000)
            for _ in range(500):
                for chars, styles in rows(width):
                    history.append(chars, styles)
            while history.compact():
                pass
            return history, tracemalloc.get_traced_memory()[0] - before
        finally:
            tracemalloc.stop()

    history, narrow = filled(80)
    _, wide = filled(240)
    assert wide < narrow * 1.05, (narrow, wide)  # 160 more blank cells a row cost nothing
    for index, (chars, styles) in enumerate(rows(80)):
        assert history.row(index - len(lines), 80) == (chars, styles)
        assert history.row(index - len(lines), 100) == (chars + [" "] * 20, styles + [default] * 20)
        assert history.row(index - len(lines), 40) == (chars[:40], styles[:40])


def varied_rows(count: int, width: int = 80) -> list[tuple[list[str], list[Style]]]:
    """Rows of every stored kind: one style, runs, a style per cell, wide characters, blank, a coloured blank."""
    red, on_blue, bold = Style(fg="red"), Style(bg="blue"), Style(fg="#12ab34", bold=True)
    rows = []
    for n in range(count):
        kind = n % 6
        if kind == 0:
            cells, styles = list(f"plain {n}"), [Style()] * len(f"plain {n}")
        elif kind == 1:
            cells, styles = list(f"{n:05d} the quick brown fox"), [red] * 5 + [Style()] * 20
        elif kind == 2:
            cells, styles = list("confetti"), [red, bold] * 4
        elif kind == 3:
            cells, styles = ["界", "", "x", "é", "界", ""], [bold] * 6
        elif kind == 4:
            cells, styles = [], []
        else:
            cells, styles = [" "] * 10, [on_blue] * 10
        rows.append((cells + [" "] * (width - len(cells)), styles + [Style()] * (width - len(styles))))
    return rows


def test_sealed_rows_read_the_same_at_every_width() -> None:
    rows = varied_rows(5 * BLOCK + 17)
    history = History(10_000)
    for chars, styles in rows:
        history.append(chars, styles)
    while history.compact(budget=100):
        pass
    assert history.sealed_rows == 5 * BLOCK and len(history) == len(rows)
    for index, (chars, styles) in enumerate(rows):
        assert history.row(index - len(rows), 80) == (chars, styles)
        assert history.row(index - len(rows), 90) == (chars + [" "] * 10, styles + [Style()] * 10)
        narrow = history.row(index - len(rows), 5)
        assert narrow[1] == styles[:5] and narrow[0] == chars[:4] + [" " if chars[5] == "" else chars[4]]


def test_the_limit_and_the_numbers_hold_across_sealed_blocks() -> None:
    """Rows past the limit go one at a time, from a sealed block too: the history keeps exactly ``limit`` rows,
    and row ``-k`` is still the ``pushed - k``-th."""
    history = History(1000)
    rows = varied_rows(3 * 1000 + 55)
    for number, (chars, styles) in enumerate(rows):
        history.append(chars, styles)
        if number % 333 == 0:
            history.compact()
        assert len(history) == min(number + 1, 1000)
    history.compact(budget=10**9)
    assert history.sealed_rows > 0
    for k in range(1, 1001):
        assert history.row(-k, 80) == rows[history.pushed - k], k
    flood = [f"{n} flooded" for n in range(700)]  # the flood fast path's rows, already compact
    history.extend(flood, [Style()] * 700)
    assert len(history) == 1000
    assert history.row(-1000, 80) == rows[-300]
    assert history.row(-1, 80)[0][:11] == list("699 flooded")


def test_rows_taken_back_come_out_of_their_sealed_block_newest_first() -> None:
    """A screen growing taller takes back the newest rows; they may all be sealed."""
    rows = varied_rows(3 * BLOCK)
    history = History(2 * BLOCK + 7)  # the oldest sealed block has rows past the limit
    for chars, styles in rows:
        history.append(chars, styles)
    history.compact(budget=10**9)
    assert not history._texts and history.sealed_rows == 2 * BLOCK + 7  # the oldest block partly gone
    epoch = history.epoch
    taken = [history.pop(80) for _ in range(len(history))]
    assert taken == rows[::-1][: 2 * BLOCK + 7]
    assert len(history) == 0 and history.epoch == epoch + 2 * BLOCK + 7
    assert history.pushed == 3 * BLOCK - (2 * BLOCK + 7)


def test_clearing_forgets_sealed_rows() -> None:
    history = History(1000)
    for chars, styles in varied_rows(600):
        history.append(chars, styles)
    history.compact(budget=10**9)
    history.row(-600, 80)  # a block opened and kept
    history.clear()
    assert len(history) == 0 and history.stored() == [] and history.left_to_compact() == 0
    history.append(list("after"), [Style()] * 5)
    assert history.row(-1, 6) == (list("after "), [Style()] * 6)


def test_a_full_sealed_scrollback_is_a_small_fraction_of_its_rows() -> None:
    """10,000 coloured log lines in a pane 160 wide: what the host keeps of each pane, as the flood leaves it and
    once it is quiet, against the rows kept as objects (the text, and the styles as runs)."""
    red, green = Style(fg="red"), Style(fg="green")
    lines = [(f"{n:05d} the quick brown fox jumps over the lazy dog", red if n % 2 else green) for n in range(12_000)]
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        objects = [(text[:], (style, 5, Style(), 155)) for text, style in lines[2000:]]
        as_objects = tracemalloc.get_traced_memory()[0] - before
        del objects
        before = tracemalloc.get_traced_memory()[0]
        history = History(10_000)
        for text, style in lines:
            history.append(list(text.ljust(160)), [style] * 5 + [Style()] * 155)
        flooded = tracemalloc.get_traced_memory()[0] - before
        while history.compact():
            pass
        quiet = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert flooded < as_objects * 0.6 and quiet < as_objects / 20, (as_objects, flooded, quiet)
    assert history.row(-1, 160)[0][:5] == list("11999") and history.row(-10_000, 160)[0][:5] == list("02000")
