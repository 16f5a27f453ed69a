"""A window's copy of a screen, kept from frames, reads exactly like the screen it mirrors.

The recorded Claude Code, Codex, Gemini CLI, Qwen Code and opencode streams are fed to a screen engine in random
pieces; a frame of what changed goes to a mirror after each piece (as the session host sends them), and after
every frame each row of the mirror — text, styles and cursor — equals the engine's. Scrollback rows
come on request, numbered so that a window can cache them.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from polter.wire import frames as frames_module
from polter.wire.frames import HistoryRows, ScreenFrame, StyleTable, WindowStyles, encode_frame, encode_history
from polter.window.mirror import HISTORY_BLOCK, MirrorScreen
from polter.terminal.screen import TerminalScreen

STREAMS = Path(__file__).parent.parent / "fixtures" / "streams"
RECORDINGS = sorted(path.stem for path in STREAMS.glob("*.bin"))


def test_the_recordings_are_in_the_repository() -> None:
    assert len(RECORDINGS) == 6, f"tests/fixtures/streams holds {RECORDINGS}"


def _over_the_wire(frame: ScreenFrame) -> ScreenFrame:
    return ScreenFrame.model_validate_json(frame.model_dump_json())


def assert_same(mirror: MirrorScreen, screen: TerminalScreen) -> None:
    assert (mirror.columns, mirror.lines) == (screen.columns, screen.lines)
    for y in range(screen.lines):
        assert mirror.line(y) == screen.line(y), f"row {y}"
    assert mirror.cursor == screen.cursor
    assert mirror.history_size == screen.history_size
    assert mirror.alternate_screen == screen.alternate_screen
    assert mirror.application_cursor_keys == screen.application_cursor_keys


@pytest.mark.parametrize("name", RECORDINGS)
def test_frames_of_a_real_cli_keep_the_mirror_equal_to_the_screen(name: str) -> None:
    data = (STREAMS / f"{name}.bin").read_bytes()
    generator = random.Random(name)
    screen = TerminalScreen(120, 40)
    table, window = StyleTable(), WindowStyles()
    mirror = MirrorScreen(120, 40)
    mirror.apply(_over_the_wire(encode_frame(screen, screen.take_dirty(), table, window)))
    position = 0
    while position < len(data):
        size = generator.choice((1, 7, 64, 512, 4096))
        screen.feed(data[position : position + size])
        position += size
        if generator.random() < 0.5:  # frames are paced: several reads may go into one
            continue
        mirror.apply(_over_the_wire(encode_frame(screen, screen.take_dirty(), table, window)))
        assert_same(mirror, screen)
    mirror.apply(_over_the_wire(encode_frame(screen, screen.take_dirty(), table, window)))
    assert_same(mirror, screen)
    assert mirror.display() == screen.display()


def test_a_second_window_starts_from_a_whole_frame_and_learns_every_style_it_needs() -> None:
    screen = TerminalScreen(40, 5)
    table = StyleTable()
    first, second = WindowStyles(), WindowStyles()
    screen.feed(b"\x1b[1;31mred\x1b[0m \x1b[38;2;1;2;3mrgb\x1b[0m\r\n")
    encode_frame(screen, screen.take_dirty(), table, first)  # the first window learnt these styles
    late = MirrorScreen(40, 5)
    late.apply(_over_the_wire(encode_frame(screen, None, table, second)))
    assert_same(late, screen)


def test_style_numbers_start_again_after_the_table_is_full(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(frames_module, "MAX_STYLES", 8)
    screen = TerminalScreen(60, 4)
    table, window = StyleTable(), WindowStyles()
    mirror = MirrorScreen(60, 4)
    for round_ in range(4):  # a truecolour gradient: more styles than the table holds
        line = "".join(f"\x1b[38;2;{round_};{n};9m{n % 10}" for n in range(20)) + "\x1b[0m\r\n"
        screen.feed(line.encode())
        mirror.apply(_over_the_wire(encode_frame(screen, screen.take_dirty(), table, window)))
        assert_same(mirror, screen)
    assert table.epoch > 0


def test_scrollback_rows_are_fetched_by_number_and_cached() -> None:
    screen = TerminalScreen(20, 4, scrollback=1000)
    screen.feed("".join(f"line {n}\r\n" for n in range(300)).encode())
    table, window = StyleTable(), WindowStyles()
    asked: list[tuple[int, int]] = []
    mirror = MirrorScreen(20, 4, fetch=lambda first, count: asked.append((first, count)))
    mirror.apply(encode_frame(screen, None, table, window))
    assert mirror.history_size == screen.history_size == 297
    assert mirror.text(-1).strip() == ""  # not fetched yet: blank, and asked for
    assert asked == [(2 * HISTORY_BLOCK, HISTORY_BLOCK)]
    rows = HistoryRows.model_validate_json(encode_history(screen, *asked[0], table, window).model_dump_json())
    assert mirror.apply_history(rows)
    for row in range(-1, -screen.history_size - 1, -1):
        if mirror.history_pushed + row >= 2 * HISTORY_BLOCK:
            assert mirror.line(row) == screen.line(row)
    mirror.text(-200)  # another block
    assert asked[-1] == (0, HISTORY_BLOCK) and len(asked) == 2
    mirror.text(-1)
    assert len(asked) == 2  # cached: not asked again


def test_cleared_scrollback_is_not_read_from_the_cache() -> None:
    screen = TerminalScreen(20, 4)
    screen.feed(b"".join(b"old %d\r\n" % n for n in range(50)))
    table, window = StyleTable(), WindowStyles()
    mirror = MirrorScreen(20, 4, fetch=lambda first, count: None)
    mirror.apply(encode_frame(screen, None, table, window))
    assert mirror.apply_history(encode_history(screen, 0, HISTORY_BLOCK, table, window))
    assert mirror.text(-1).startswith("old 46")
    screen.feed(b"\x1b[3J" + b"".join(b"new %d\r\n" % n for n in range(10)))
    mirror.apply(encode_frame(screen, screen.take_dirty(), table, window))
    assert mirror.history_size == screen.history_size
    assert not mirror.text(-1).startswith("old")  # the old rows' numbers mean nothing now
    stale = encode_history(screen, 0, HISTORY_BLOCK, table, window)
    assert mirror.apply_history(stale) and mirror.text(-1) == screen.text(-1)
