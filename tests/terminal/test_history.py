"""Scrollback kept compact: rows read the same before and after their styles are stored as runs."""

from __future__ import annotations

import tracemalloc

from polter.terminal._history import History
from polter.terminal._style import Style
from polter.terminal.screen import TerminalScreen


def test_compacting_keeps_every_row_and_takes_less_memory() -> None:
    red, blue = Style(fg="red"), Style(bg="blue", bold=True)
    rows = [(list(f"{n:05d} the quick brown fox".ljust(120)), [red] * 5 + [Style()] * 100 + [blue] * 15)
            for n in range(3000)]
    plain = (list("x" * 120), [Style()] * 120)
    confetti = (list("y" * 120), [red, blue] * 60)  # runs would be longer: stays per cell
    tracemalloc.start()
    history = History(5000)
    for chars, styles in [*rows, plain, confetti]:
        history.append(chars, styles)
    loose = tracemalloc.get_traced_memory()[0]
    assert history.compact(budget=1000) == 2002  # the newest first, a budget at a time (the plain row among them)
    while history.compact():
        pass
    compact = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    assert compact < loose / 2
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
