"""The flood fast path (`polter.terminal._flood`) against the general feed loop, stream for stream.

Every stream is fed twice, once with the fast path and once without, in the same chunking: the screens,
the scrollback rows, the cursor and the rows to redraw must be equal, and so must the history's stored
rows once both are compacted (the fast path stores rows of a few styles compacted already). The streams:
generated floods (text, SGR, CR LF, LF, wraps, wide characters and the controls that end a flood, cut
anywhere), long coloured floods, seq's output and the recorded CLI streams.
"""

from __future__ import annotations

import random

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.screens import STREAMS

from polter.terminal.screen import Style, TerminalScreen

# What a flood is made of, and (rarer) what ends one or changes how it must be drawn.
FLOOD = [
    b"\r\n", b"\r\n", b"\n", b"word", b"a", b" ", b"  ", b"longer words to wrap", b"x" * 13,
    b"\x1b[31m", b"\x1b[0m", b"\x1b[m", b"\x1b[1;44m", b"\x1b[48;5;236m", b"\x1b[38;2;0;200;120m", b"\x1b[7m",
]  # fmt: skip
OTHERS = [
    b"\r", b"\x1b[K", b"\x1b[2J", b"\x1b[H", b"\x1b[3;5r", b"\x1b[r", b"\x1b[4h", b"\x1b[4l", b"\x1b(0", b"\x1b(B",
    b"\x1b[?7l", b"\x1b[?7h", b"\x1b[20h", b"\x1b[20l", b"\x1b[?1049h", b"\x1b[?1049l", b"\x1bM", b"\t",
    "中".encode(), "e\u0301".encode(), "❤️".encode(), b"\x1b[A", b"\x1b[5G", b"\x08", b"\x0b",
    # strings, one holding a line feed (the flood may not cut the text there), a CSI that ends in neither SGR nor
    # its own "m", C1 and NBSP (text the tokenizer keeps, but not Python's printable)
    b"\x1b]0;title\x07", b"\x1b]2;a\r\nb\x07", b"\x1bPq\r\n#\x1b\\", b"\x1b]8;;http://x\x1b\\", b"\x1b[1Hm", b"\xc2\x9b",
    "\u00a0".encode(),
]  # fmt: skip
fragment = st.one_of(st.sampled_from(FLOOD), st.sampled_from(FLOOD), st.sampled_from(FLOOD), st.sampled_from(OTHERS))
floods = st.tuples(st.lists(st.sampled_from(OTHERS), max_size=3), st.lists(fragment, min_size=40, max_size=300)).map(
    lambda parts: b"".join(parts[0] + parts[1])
)


def snapshot(screen: TerminalScreen) -> tuple[object, ...]:
    history = screen._history
    rows = [screen.line(y) for y in range(-screen.history_size, screen.lines)]
    left = screen.compact_history(budget=10**9)  # the fast path stores its rows compacted already
    return (
        screen.display(),
        rows,
        left,
        history.stored(),
        history.pushed,
        history.left_to_compact(),
        screen.cursor,
        screen._x,
        screen._style,
        screen.take_dirty(),
    )


def feed(
    data: bytes, cuts: list[int], *, fast: bool, size: tuple[int, int] = (12, 5), scrollback: int = 8
) -> tuple[object, ...]:
    screen = TerminalScreen(*size, scrollback=scrollback)
    screen.flood_path = fast
    start = 0
    for cut in [*sorted(cuts), len(data)]:
        screen.feed(data[start:cut])
        start = max(start, cut)
    return snapshot(screen)


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=floods,
    cuts=st.lists(st.integers(min_value=0, max_value=3000), max_size=8),
    scrollback=st.sampled_from([0, 3, 8, 100]),
)
@example(
    data=b"plain\r\n" * 10 + b"\x1b[31mred\x1b[0m rest\r\n" * 10, cuts=[], scrollback=100
)  # the first row to compact
@example(data=b"\x1b[20h" + b"ab\n" * 10, cuts=[], scrollback=8)  # LNM: LF alone returns too
def test_the_fast_path_gives_what_the_general_loop_gives(data: bytes, cuts: list[int], scrollback: int) -> None:
    cuts = [min(cut, len(data)) for cut in cuts]
    assert feed(data, cuts, fast=True, scrollback=scrollback) == feed(data, cuts, fast=False, scrollback=scrollback)


def flood_lines(seed: int, count: int, colours: int) -> bytes:
    rng = random.Random(seed)
    palette = ["\x1b[1;31m", "\x1b[33m", "\x1b[38;5;208m", "\x1b[38;2;0;200;120m", "\x1b[48;5;236m", "\x1b[36m"]
    lines = []
    for _ in range(count):
        words = [
            rng.choice(["build", "test", "ok", "fail", "warning: unused", "x" * rng.randint(1, 90)])
            for _ in range(rng.randint(0, 12))
        ]
        coloured = [f"{rng.choice(palette)}{word}\x1b[0m" if rng.random() < colours / 12 else word for word in words]
        lines.append(" ".join(coloured))
    return ("\r\n".join(lines) + "\r\n").encode()


@pytest.mark.parametrize("colours", [0, 1, 12])
@pytest.mark.parametrize("scrollback", [0, 50, 10_000])
def test_long_floods_in_reads_of_any_size(colours: int, scrollback: int) -> None:
    data = flood_lines(colours, 3000, colours)
    rng = random.Random(scrollback)
    cuts = sorted(rng.randrange(len(data)) for _ in range(40))
    fast = feed(data, cuts, fast=True, size=(80, 24), scrollback=scrollback)
    assert fast == feed(data, cuts, fast=False, size=(80, 24), scrollback=scrollback)


def test_seq_output() -> None:
    data = "".join(f"{n}\r\n" for n in range(1, 20_001)).encode()
    cuts = list(range(0, len(data), 4096))
    assert feed(data, cuts, fast=True, size=(160, 45), scrollback=10_000) == feed(
        data, cuts, fast=False, size=(160, 45), scrollback=10_000
    )


@pytest.mark.parametrize("path", sorted(STREAMS.glob("*.bin")), ids=lambda path: path.stem)
def test_recorded_cli_streams(path: object) -> None:
    data = path.read_bytes()  # type: ignore[attr-defined]
    cuts = list(range(0, len(data), 1500))
    assert feed(data, cuts, fast=True, size=(120, 40), scrollback=10_000) == feed(
        data, cuts, fast=False, size=(120, 40), scrollback=10_000
    )


def test_a_flood_in_reads_is_taken_by_the_fast_path_after_its_first_screen() -> None:
    """The fast path does not only give what the general loop gives (the tests above): it runs. In 32 KiB reads of a
    coloured flood only the rows before the cursor reaches the bottom go through the general loop, and the rows
    that leave the screen between two reads go to the history as the flood made them (runs of styles), not copied
    from their cells (a style per cell, until the history is compacted)."""
    data = flood_lines(7, 3000, 12)
    screen = TerminalScreen(160, 45, scrollback=10_000)
    general: list[str] = []  # what the general loop consumed
    feed_pairs = screen._feed_pairs

    def counted_feed(parts: list[str], *, stop: bool) -> int:
        consumed = feed_pairs(parts, stop=stop)
        general.append("".join(parts)[: consumed if consumed >= 0 else None])
        return consumed

    screen._feed_pairs = counted_feed  # type: ignore[method-assign]
    for start in range(0, len(data), 32_768):
        screen.feed(data[start : start + 32_768])
    copied = sum(not isinstance(row, Style) and len(row) == 160 for row in screen._history._styles)
    assert screen.history_pushed > 2000
    lines = "".join(general).count("\r\n")
    assert lines < 45 and copied < 45, (lines, copied)
