"""The typed-line reconstruction: keys and pastes in, submitted lines out."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from polter.host.typed_line import MAX_LINE, TypedLine


def typed(*keys: str) -> tuple[list[str], TypedLine]:
    """Feed Textual key names; a one-character name types itself (``space`` types a blank)."""
    line = TypedLine()
    submitted = []
    for key in keys:
        character = " " if key == "space" else key if len(key) == 1 else None
        result = line.key(key, character)
        if result is not None:
            submitted.append(result)
    return submitted, line


def chars(text: str) -> list[str]:
    return ["space" if char == " " else char for char in text]


def test_printable_keys_build_the_line_and_enter_submits_it() -> None:
    submitted, line = typed(*chars("make it rain"), "enter")
    assert submitted == ["make it rain"]
    assert line.text == "" and line.cursor == 0


def test_blank_lines_are_not_submitted_and_lines_are_stripped() -> None:
    assert typed("enter", "space", "enter", *chars("  hi  "), "enter")[0] == ["hi"]


def test_backspace_and_delete() -> None:
    assert typed(*chars("hardmoed"), "backspace", "backspace", *chars("de"), "enter")[0] == ["hardmode"]
    assert typed(*chars("abc"), "home", "delete", "enter")[0] == ["bc"]
    assert typed("backspace", "delete", *chars("x"), "enter")[0] == ["x"]


def test_cursor_movement_inserts_in_the_middle() -> None:
    assert typed(*chars("turn hardmode"), "ctrl+a", *chars("please "), "end", *chars(" on"), "enter")[0] == [
        "please turn hardmode on"
    ]
    assert typed(*chars("ac"), "left", "b", "right", "d", "enter")[0] == ["abcd"]
    assert typed("left", "left", "a", "enter")[0] == ["a"]  # the cursor cannot leave the line


def test_word_movement_and_kills() -> None:
    assert typed(*chars("one two three"), "ctrl+w", "enter")[0] == ["one two"]
    assert typed(*chars("one two three"), "ctrl+left", "ctrl+k", "enter")[0] == ["one two"]
    assert typed(*chars("one two three"), "ctrl+left", "ctrl+u", "enter")[0] == ["three"]
    assert typed(*chars("one two"), "home", "ctrl+right", "x", "enter")[0] == ["onex two"]


def test_ctrl_c_abandons_the_line_and_history_recall_starts_over() -> None:
    assert typed(*chars("rm -rf"), "ctrl+c", *chars("ls"), "enter")[0] == ["ls"]
    assert typed(*chars("abc"), "up", "enter")[0] == []
    assert typed("up", *chars("new words"), "enter")[0] == ["new words"]


def test_control_function_and_alt_keys_type_nothing() -> None:
    line = TypedLine()
    for key, character in [("ctrl+x", "\x18"), ("f5", None), ("escape", "\x1b"), ("alt+x", "x"), ("tab", "\t")]:
        assert line.key(key, character) is None
    assert line.text == ""


def test_unicode_text() -> None:
    line = TypedLine()
    for char in "开启困难模式":
        line.key(char, char)
    assert line.key("enter") == "开启困难模式"


def test_shift_enter_is_a_newline_inside_the_prompt() -> None:
    submitted, _ = typed(*chars("first"), "shift+enter", *chars("second"), "enter")
    assert submitted == ["first\nsecond"]


def test_a_bracketed_paste_is_text_and_an_unbracketed_one_submits_at_newlines() -> None:
    line = TypedLine()
    assert line.paste("turn on\r\nhardmode") == []
    assert line.key("enter") == "turn on\nhardmode"
    assert line.paste("one\ntwo\nthr", bracketed=False) == ["one", "two"]
    assert line.text == "thr"
    assert line.key("enter") == "thr"


def test_a_very_long_line_keeps_its_start() -> None:
    line = TypedLine()
    line.paste("x" * (MAX_LINE + 100))
    line.key("y", "y")
    assert len(line.text) == MAX_LINE and set(line.text) == {"x"}


@pytest.mark.parametrize(("pasted", "kept"), [("ab\x07c", "abc"), ("ab\x1b[Ac", "ab[Ac")])
def test_control_characters_inside_a_paste_are_dropped(pasted: str, kept: str) -> None:
    line = TypedLine()
    line.paste(pasted)
    assert line.text == kept


@given(
    st.lists(
        st.sampled_from(
            [
                "a",
                "b",
                "space",
                "left",
                "right",
                "home",
                "end",
                "backspace",
                "delete",
                "ctrl+w",
                "ctrl+u",
                "ctrl+k",
                "ctrl+left",
                "ctrl+right",
                "up",
                "ctrl+c",
            ]
        )
    )
)
def test_the_cursor_always_stays_inside_the_line(keys: list[str]) -> None:
    _, line = typed(*keys)
    assert 0 <= line.cursor <= len(line.text)
