"""Properties of the screen engine over generated input (hypothesis).

* Any bytes, fed in any chunking, never raise, and the chunking never changes the result.
* On streams that avoid pyte's known bugs, the visible text and cursor equal `pyte.Screen`'s.
* The tokenizer's split in bulk (`split_complete`) gives the tokens its regular expression specifies.
"""

from __future__ import annotations

import pyte
import wcwidth
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from support.generated import Tally

from polter.terminal._parser import _TOKEN, Tokenizer, split_complete
from polter.terminal._width import cluster_width
from polter.terminal.screen import TerminalScreen

# Fragments that make escape sequences, strings, UTF-8 and controls likely, cut anywhere.
FRAGMENTS = [
    b"\x1b", b"[", b"]", b"P", b"_", b"^", b"X", b"\\", b"\x07", b"\x18", b"?", b">", b"<", b"=",
    b";", b":", b"$", b" ", b"!", b"0", b"1", b"2", b"5", b"6", b"25", b"38", b"48", b"1049", b"2026",
    b"m", b"H", b"J", b"K", b"A", b"B", b"C", b"D", b"L", b"M", b"P", b"@", b"S", b"T", b"X", b"r",
    b"h", b"l", b"c", b"n", b"q", b"u", b"t", b"p", b"b", b"(", b"#", b"8", b"7", b"\r", b"\n", b"\t",
    b"\x08", b"\x0e", b"\x0f", b"abc", b"xyz ", "中".encode(), "❤️".encode(), "e\u0301".encode(),
    "👩‍💻".encode(), b"\xff", b"\xe4\xb8", b"\xad", b"\xc3", "│─".encode(), b"\x1b]0;", b"\x1b[?",
    b"\x1b[38;2;", b"\x1bP", b"\x1b\\",
]  # fmt: skip
streams = st.one_of(
    st.binary(max_size=400),
    st.lists(st.sampled_from(FRAGMENTS), max_size=120).map(b"".join),
)


def snapshot(screen: TerminalScreen) -> tuple[object, ...]:
    return (
        screen.display(),
        [screen.line(y) for y in range(-screen.history_size, screen.lines)],
        screen.cursor,
        screen.title,
        screen.icon_title,
        screen.history_size,
        screen.bracketed_paste,
        screen.application_cursor_keys,
        screen.application_keypad,
        screen.mouse_tracking,
        screen.mouse_sgr,
        screen.focus_events,
        screen.synchronized_output,
        screen.alternate_screen,
    )


def run(data: bytes, cuts: list[int], max_sequence: int | None) -> tuple[tuple[object, ...], list[bytes]]:
    replies: list[bytes] = []
    screen = TerminalScreen(12, 6, scrollback=20, reply=replies.append)
    if max_sequence is not None:  # exercise the over-long-sequence rules with short sequences
        screen._max_sequence = screen._tokenizer.max_sequence = max_sequence
    start = 0
    for cut in [*sorted(cuts), len(data)]:
        screen.feed(data[start:cut])
        start = max(start, cut)
    return snapshot(screen), replies


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    data=streams,
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=12),
    max_sequence=st.sampled_from([None, 3, 8]),
)
@example(data=b"\x1b] \x1b\x1b", cuts=[2], max_sequence=None)  # an OSC that an ESC ends, the read's last byte ESC
def test_any_bytes_in_any_chunking_give_the_same_screen(data: bytes, cuts: list[int], max_sequence: int | None) -> None:
    whole = run(data, [], max_sequence)
    pieces = run(data, [min(cut, len(data)) for cut in cuts], max_sequence)
    assert pieces == whole


@settings(max_examples=150, deadline=None)
@given(data=streams, columns=st.integers(1, 15), lines=st.integers(1, 8))
def test_resizing_never_breaks_the_invariants(data: bytes, columns: int, lines: int) -> None:
    screen = TerminalScreen(10, 5, scrollback=30)
    screen.feed(data)
    screen.resize(columns, lines)
    screen.feed(data)
    cursor = screen.cursor
    assert 0 <= cursor.x < columns and 0 <= cursor.y < lines
    assert len(screen.display()) == lines
    for y in range(-screen.history_size, lines):
        runs = screen.line(y)
        assert sum(cell_count(text) for text, _ in runs) == columns


def cell_count(text: str) -> int:
    """Cells taken by a run's text (one grapheme cluster per cell, of width 1 or 2)."""
    return sum(cluster_width(cluster) for cluster in wcwidth.iter_graphemes(text))


# -- differential: pyte.Screen is the reference where it has no known bug -----------------
def ops(lines: int, *, regions: bool) -> st.SearchStrategy[bytes]:
    """Sequences pyte 0.8.2 implements correctly (no wide text, alt screen, private CSI, strings…).

    Left out where pyte is wrong (each is tested on its own in test_screen.py): HPA (CSI `),
    which pyte binds to "'"; NEL (ESC E), a bare line feed in pyte; IL/DL (CSI L/M), which skip
    rows pyte never touched; origin mode, where pyte's VPA asserts; DECSTBM with empty
    parameters, which pyte does not home; auto-wrap off, where pyte parks the cursor past the
    last column. With scroll regions the cursor is kept inside the region (moved to its top
    after DECSTBM, no absolute or vertical moves, no DECRC): pyte moves a cursor outside the
    region onto the margins, where xterm and tmux move it to the screen edge.
    """
    number = st.integers(0, 12).map(lambda n: str(n).encode() if n else b"")
    finals = [b"C", b"D", b"G", b"P", b"@", b"X", b"a"]
    if not regions:
        finals += [b"A", b"B", b"E", b"F", b"e", b"H", b"f", b"d"]
    csi = st.builds(
        lambda n, m, final: b"\x1b[" + n + (b";" + m if final in b"Hf" else b"") + final,
        number, number, st.sampled_from(finals),
    )  # fmt: skip
    region = st.builds(  # always valid for the screen, so that the cursor lands inside it
        lambda t, size: b"\x1b[%d;%dr\x1b[%dH" % (t, t + size, t),
        st.integers(1, lines - 1), st.integers(1, lines - 1),
    ).filter(lambda op: int(op.split(b";")[1].split(b"r")[0]) <= lines)  # fmt: skip
    erase = st.builds(lambda n, final: b"\x1b[" + n + final, st.sampled_from([b"", b"0", b"1", b"2"]),
                      st.sampled_from([b"J", b"K"]))  # fmt: skip  (pyte raises on ED/EL > 2)
    sgr = st.sampled_from([b"\x1b[31m", b"\x1b[1;44m", b"\x1b[0m", b"\x1b[38;5;100m", b"\x1b[7m"])
    text = st.text(alphabet="abcdefghij XYZ│─é", min_size=1, max_size=25).map(str.encode)
    controls = st.sampled_from([b"\r", b"\n", b"\r\n", b"\x08", b"\t", b"\x1bD", b"\x1bM", b"\x1b[4h", b"\x1b[4l"])
    items = [csi, erase, sgr, text, controls]
    if regions:
        items.append(region)
    else:  # DECSC … DECRC as a pair: pyte pops a stack, so a second DECRC homes the cursor there
        inner = st.lists(st.one_of(*items), max_size=8).map(b"".join)
        items.append(inner.map(lambda ops: b"\x1b7" + ops + b"\x1b8"))
    return st.lists(st.one_of(*items), max_size=60).map(b"".join)


@settings(max_examples=300, deadline=None)
@given(data=st.data(), columns=st.integers(2, 14), lines=st.integers(2, 7), regions=st.booleans())
@example(data=None, columns=2, lines=2, regions=False).via("CI: moving back from the pending wrap")
@example(data=b"XXX\x08", columns=3, lines=2, regions=False).via("CI: backspace at the pending wrap")
@example(data=b"\x1b7XX\x1b8\x1b[@\x1b[P", columns=2, lines=2, regions=False).via("CI: ICH pushes a cell off")
def test_same_text_and_cursor_as_pyte(data: st.DataObject | bytes | None, columns: int, lines: int,
                                      regions: bool) -> None:
    if isinstance(data, bytes):
        stream = data
    else:
        stream = b"XXXXXXXX\x1b[4h\x1b[DX\x1b[P" if data is None else data.draw(ops(lines, regions=regions))
    check_same_as_pyte(stream, columns, lines)


class PendingWrapAsTmux(pyte.Screen):  # type: ignore[misc]
    """pyte.Screen with two of its bugs fixed, so that it can serve as the reference:

    - BS and CUB from the pending wrap (the cursor just past the last column) count from there, as
      tmux 3.3a does (``test_moving_back_from_the_pending_wrap_...`` in test_screen.py); pyte first
      steps back onto the last column, landing one cell short.
    - ICH pushes the last cell off the line; pyte keeps it in a cell past the last column, and a
      later DCH pulls it back onto the screen (found by hypothesis: ``XX``, ICH, DCH on 2 columns).
    """

    def cursor_back(self, count: int | None = None) -> None:
        self.cursor.x -= count or 1
        self.ensure_hbounds()

    def insert_characters(self, count: int | None = None) -> None:
        super().insert_characters(count)
        line = self.buffer[self.cursor.y]
        for x in [x for x in line if x >= self.columns]:
            del line[x]


def check_same_as_pyte(data: bytes, columns: int, lines: int) -> None:
    ours = TerminalScreen(columns, lines)
    ours.feed(data)
    theirs = PendingWrapAsTmux(columns, lines)
    pyte.ByteStream(theirs).feed(data)
    assert ours.display() == theirs.display
    assert (ours.cursor.x, ours.cursor.y) == (min(theirs.cursor.x, columns - 1), theirs.cursor.y)


# Text as the tokenizer holds it after decoding: sequences (SGRs repeated, so that the caches hit),
# strings and their ends, lines, C0 and C1 controls, and printable text that `str.isprintable` is not.
TEXT_FRAGMENTS = [
    "\x1b", "[", "]", "P", "_", "^", "X", "\\", "\x07", "\x18", "\x1a", "?", ";", ":", " ", "!", "0", "1", "31",
    "m", "H", "K", "(", "B", "#", "8", "\r\n", "\r", "\n", "\t", "\x00", "\x7f", "\x85", "\x9c", "\xa0", "\u200d",
    "abc", "the fox", "中", "\x1b[1;31m", "\x1b[0m", "\x1b[m", "\x1b[38;2;0;200;120m", "\x1b]0;title", "\x1b\\",
    "\x1bPq#0\x1b\\", "\x1b[2J", "\x1b[?25l", "\x1b(B", "12345\r\n", "INFO \x1b[0m words\r\n",
]  # fmt: skip


def _case(text: str) -> str:
    if "\x1b" not in text:
        return "lines only" if "\r\n" in text and text.replace("\r\n", "").isprintable() else "no ESC"
    if "\x1b\\" in text and any(f"\x1b{kind}" in text for kind in "]P_^X"):
        return "a string and ST"
    if "\x1b[" in text and "m" in text:
        return "SGRs"
    return "other sequences"


def test_the_bulk_split_is_the_regular_expressions_split() -> None:
    seen = Tally()

    @settings(max_examples=1500, deadline=None)
    @given(st.lists(st.sampled_from(TEXT_FRAGMENTS), max_size=40).map("".join))
    def check(text: str) -> None:
        last_esc = text.rfind("\x1b")
        complete = Tokenizer()._hold_tail(text, last_esc) if last_esc >= 0 else text  # as `split_text` hands it on
        seen(_case(complete))
        assert split_complete(complete) == _TOKEN.split(complete)

    check()
    seen.require({"lines only": 5, "no ESC": 20, "a string and ST": 10, "SGRs": 100, "other sequences": 100})
