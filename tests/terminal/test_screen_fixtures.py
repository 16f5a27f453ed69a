"""Real AI-CLI output streams through the screen engine, compared with tmux's rendering of them.

The fixtures (see ``tests/fixtures/streams/README.md``) hold what Claude Code, Codex, Gemini CLI, Qwen Code and
opencode wrote to a 120×40 tmux pane, and tmux's screen at the end and just before the quit command.
The whole visible text must equal tmux's (tmux trims trailing blanks, so rows are compared
right-stripped), the cursor must be where tmux had it, and every cell that tmux's ``-e`` capture
covers must have tmux's colours and attributes.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from support.screens import STREAMS, stream_path

from polter.terminal.screen import DEFAULT_STYLE, Style, TerminalScreen

# capture → (bytes before the quit command, cursor before exit, cursor at the end), from the README.
CAPTURES = {
    "claude-code-2.1.332-120x40": (9_830, (2, 37), (0, 3)),
    "claude-code-2.1.332-120x40-classic": (14_858, (2, 22), (0, 39)),
    "codex-0.171.0-120x40": (20_637, (2, 36), (0, 7)),
    "gemini-cli-0.61.0-120x40": (182_744, (3, 35), (0, 39)),
    "qwen-code-0.24.4-120x40": (796_695, (2, 33), (0, 5)),
    "opencode-1.18.33-120x40": (43_263, (5, 34), (0, 8)),
}
CASES = [
    pytest.param(name, moment, id=f"{name}-{moment}")
    for name in CAPTURES
    for moment in ("before-exit", "end")
]
UNSTYLED = {("qwen-code-0.24.4-120x40", "end")}
"""Screens with no styled cell for the colours to be compared on (Qwen Code prints plain text on its way out)."""


def stream(name: str, moment: str) -> bytes:
    data = stream_path(name).read_bytes()
    return data[: CAPTURES[name][0]] if moment == "before-exit" else data


def reference(name: str, moment: str, suffix: str) -> Path:
    infix = ".before-exit" if moment == "before-exit" else ""
    return STREAMS / f"{name}{infix}.screen.{suffix}"


def feed_in_chunks(screen: TerminalScreen, data: bytes, rng: random.Random, largest: int) -> None:
    at = 0
    while at < len(data):
        size = rng.randint(1, largest)
        screen.feed(data[at : at + size])
        at += size


def cells(screen: TerminalScreen, y: int) -> list[tuple[str, Style]]:
    return [(char, style) for text, style in screen.line(y) for char in text]


def tmux_screen(name: str, moment: str) -> TerminalScreen:
    """tmux's ``capture-pane -e`` output read back through the engine (SGR state runs across rows)."""
    screen = TerminalScreen(120, 41)
    screen.feed(reference(name, moment, "ansi").read_bytes().replace(b"\n", b"\r\n"))
    return screen


@pytest.mark.parametrize(("name", "moment"), CASES)
def test_text_and_cursor_match_tmux(name: str, moment: str) -> None:
    replies: list[bytes] = []
    screen = TerminalScreen(120, 40, reply=replies.append)
    screen.feed(stream(name, moment))

    expected = reference(name, moment, "txt").read_text().split("\n")[:40]
    assert [row.rstrip() for row in screen.display()] == [row.rstrip() for row in expected]
    cursor = CAPTURES[name][1] if moment == "before-exit" else CAPTURES[name][2]
    assert (screen.cursor.x, screen.cursor.y) == cursor
    assert replies, "every capture queries the terminal (DA1 at least)"


@pytest.mark.parametrize(("name", "moment"), [case for case in CASES if tuple(case.values) not in UNSTYLED])
def test_colours_and_attributes_match_tmux(name: str, moment: str) -> None:
    screen = TerminalScreen(120, 40)
    screen.feed(stream(name, moment))
    tmux = tmux_screen(name, moment)

    styled = 0
    for y in range(40):
        width = len(tmux.display()[y].rstrip())
        ours, theirs = cells(screen, y)[:width], cells(tmux, y)[:width]
        assert ours == theirs, f"row {y}"
        styled += sum(style != DEFAULT_STYLE for _, style in theirs)
    assert styled > 50, "the comparison must cover styled cells"


@pytest.mark.parametrize(("name", "moment"), CASES)
def test_chunking_does_not_change_the_screen(name: str, moment: str) -> None:
    data = stream(name, moment)
    whole = TerminalScreen(120, 40)
    whole.feed(data)
    rng = random.Random(name)
    for largest in (1, 7, 4096) if len(data) < 50_000 else (13, 4096):
        pieces = TerminalScreen(120, 40)
        feed_in_chunks(pieces, data, rng, largest)
        assert pieces.display() == whole.display()
        assert [pieces.line(y) for y in range(40)] == [whole.line(y) for y in range(40)]
        assert pieces.cursor == whole.cursor
        assert pieces.title == whole.title


def test_alternate_screen_captures_restore_the_main_screen() -> None:
    """Claude Code (fullscreen) and Codex leave the alternate screen on exit: the main screen
    shows only what they printed there, as tmux shows."""
    for name in ("claude-code-2.1.332-120x40", "codex-0.171.0-120x40"):
        screen = TerminalScreen(120, 40)
        screen.feed(stream(name, "before-exit"))
        assert screen.alternate_screen
        screen.feed(stream(name, "end")[CAPTURES[name][0] :])
        assert not screen.alternate_screen
        assert not screen.mouse_tracking
        assert not screen.bracketed_paste


def test_codex_gets_its_cursor_position_reply() -> None:
    """Codex waits for the answer to ``CSI 6n`` before it draws."""
    replies: list[bytes] = []
    screen = TerminalScreen(120, 40, reply=replies.append)
    screen.feed(stream("codex-0.171.0-120x40", "end"))
    assert any(reply.endswith(b"R") and reply.startswith(b"\x1b[") for reply in replies)
    assert b"\x1b]10;rgb:" in b"".join(replies)  # OSC 10/11 colour queries answered
    assert b"\x1b]11;rgb:" in b"".join(replies)
