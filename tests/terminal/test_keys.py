"""Key, paste, focus and mouse encoding: every class of input against the bytes xterm sends."""

from __future__ import annotations

import string

import pytest
from support.privates import key_for_character

from polter.terminal.keys import X10_TRACKING, MouseButton, encode_focus, encode_key, encode_mouse, encode_paste


@pytest.mark.parametrize("character", [c for c in string.printable if c not in "\t\n\r\x0b\x0c"])
def test_every_printable_ascii_character_round_trips_through_its_textual_key_name(character: str) -> None:
    key = character if character.isalnum() else key_for_character(character)  # what Textual reports
    assert encode_key(key) == character.encode()


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("é", "é"),
        ("euro_sign", "€"),
        ("A", "A"),
        ("shift+a", "A"),
        ("space", " "),
        ("enter", "\r"),
        ("shift+enter", "\n"),  # a new line in an agent CLI's prompt, not a submission
        ("ctrl+enter", "\n"),
        ("tab", "\t"),
        ("shift+tab", "\x1b[Z"),
        ("backspace", "\x7f"),
        ("escape", "\x1b"),
    ],
)
def test_text_and_editing_keys(key: str, expected: str) -> None:
    assert encode_key(key) == expected.encode()


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("ctrl+a", "\x01"),
        ("ctrl+c", "\x03"),
        ("ctrl+d", "\x04"),
        ("ctrl+z", "\x1a"),
        ("ctrl+shift+a", "\x01"),
        ("ctrl+space", "\x00"),
        ("ctrl+at", "\x00"),
        ("ctrl+2", "\x00"),
        ("ctrl+left_square_bracket", "\x1b"),
        ("ctrl+backslash", "\x1c"),
        ("ctrl+right_square_bracket", "\x1d"),
        ("ctrl+circumflex_accent", "\x1e"),
        ("ctrl+underscore", "\x1f"),
        ("ctrl+minus", "\x1f"),
        ("ctrl+question_mark", "\x7f"),
        ("ctrl+backspace", "\x08"),
    ],
)
def test_ctrl_keys_become_control_characters(key: str, expected: str) -> None:
    assert encode_key(key) == expected.encode()


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("alt+x", "\x1bx"),
        ("alt+shift+x", "\x1bX"),
        ("meta+x", "\x1bx"),
        ("alt+full_stop", "\x1b."),
        ("alt+enter", "\x1b\r"),
        ("alt+backspace", "\x1b\x7f"),
        ("alt+escape", "\x1b\x1b"),
        ("ctrl+alt+a", "\x1b\x01"),
        ("alt+shift+tab", "\x1b\x1b[Z"),
    ],
)
def test_alt_prefixes_escape(key: str, expected: str) -> None:
    assert encode_key(key) == expected.encode()


@pytest.mark.parametrize(
    ("key", "normal", "application"),
    [
        ("up", "\x1b[A", "\x1bOA"),
        ("down", "\x1b[B", "\x1bOB"),
        ("right", "\x1b[C", "\x1bOC"),
        ("left", "\x1b[D", "\x1bOD"),
        ("home", "\x1b[H", "\x1bOH"),
        ("end", "\x1b[F", "\x1bOF"),
        # modified keys are the same in both modes
        ("ctrl+left", "\x1b[1;5D", "\x1b[1;5D"),
        ("shift+up", "\x1b[1;2A", "\x1b[1;2A"),
        ("alt+right", "\x1b[1;3C", "\x1b[1;3C"),
        ("ctrl+shift+down", "\x1b[1;6B", "\x1b[1;6B"),
        ("shift+alt+ctrl+home", "\x1b[1;8H", "\x1b[1;8H"),
        ("ctrl+end", "\x1b[1;5F", "\x1b[1;5F"),
    ],
)
def test_cursor_keys_honour_application_cursor_mode(key: str, normal: str, application: str) -> None:
    assert encode_key(key) == normal.encode()
    assert encode_key(key, application_cursor=True) == application.encode()


@pytest.mark.parametrize(
    ("key", "expected"),
    [
        ("insert", "\x1b[2~"),
        ("delete", "\x1b[3~"),
        ("pageup", "\x1b[5~"),
        ("pagedown", "\x1b[6~"),
        ("shift+delete", "\x1b[3;2~"),
        ("ctrl+pageup", "\x1b[5;5~"),
        ("f1", "\x1bOP"),
        ("f2", "\x1bOQ"),
        ("f3", "\x1bOR"),
        ("f4", "\x1bOS"),
        ("f5", "\x1b[15~"),
        ("f6", "\x1b[17~"),
        ("f7", "\x1b[18~"),
        ("f8", "\x1b[19~"),
        ("f9", "\x1b[20~"),
        ("f10", "\x1b[21~"),
        ("f11", "\x1b[23~"),
        ("f12", "\x1b[24~"),
        ("shift+f1", "\x1b[1;2P"),
        ("ctrl+f5", "\x1b[15;5~"),
        ("alt+f12", "\x1b[24;3~"),
        ("f13", "\x1b[1;2P"),  # xterm: F13 is shift+F1
        ("f24", "\x1b[24;2~"),
    ],
)
def test_editing_and_function_keys(key: str, expected: str) -> None:
    assert encode_key(key) == expected.encode()
    assert encode_key(key, application_cursor=True) == expected.encode()


@pytest.mark.parametrize("key", ["", "ctrl+", "hyperdrive", "<scroll-up>", "banana+a", "ctrl+euro_sign"])
def test_keys_a_terminal_cannot_express_give_none(key: str) -> None:
    assert encode_key(key) is None


def test_paste_is_bracketed_only_when_the_program_asked() -> None:
    assert encode_paste("ls\n", bracketed=False) == b"ls\r"
    assert encode_paste("a\r\nb\nc", bracketed=True) == b"\x1b[200~a\rb\rc\x1b[201~"


def test_a_paste_cannot_close_the_bracket_early() -> None:
    assert encode_paste("x\x1b[201~rm -rf ~\n", bracketed=True) == b"\x1b[200~xrm -rf ~\r\x1b[201~"


def test_focus_reports() -> None:
    assert encode_focus(True) == b"\x1b[I"
    assert encode_focus(False) == b"\x1b[O"


def test_mouse_is_silent_unless_the_program_enabled_tracking() -> None:
    assert encode_mouse("press", MouseButton.LEFT, 3, 4, tracking=0, sgr=True) is None


@pytest.mark.parametrize(
    ("kind", "button", "modifiers", "expected"),
    [
        ("press", MouseButton.LEFT, {}, "\x1b[<0;4;5M"),
        ("release", MouseButton.LEFT, {}, "\x1b[<0;4;5m"),
        ("press", MouseButton.MIDDLE, {}, "\x1b[<1;4;5M"),
        ("press", MouseButton.RIGHT, {"ctrl": True}, "\x1b[<18;4;5M"),
        ("press", MouseButton.LEFT, {"shift": True, "alt": True}, "\x1b[<12;4;5M"),
        ("press", MouseButton.WHEEL_UP, {}, "\x1b[<64;4;5M"),
        ("press", MouseButton.WHEEL_DOWN, {}, "\x1b[<65;4;5M"),
    ],
)
def test_sgr_mouse_encoding(kind: str, button: MouseButton, modifiers: dict[str, bool], expected: str) -> None:
    assert encode_mouse(kind, button, 3, 4, tracking=1000, sgr=True, **modifiers) == expected.encode()  # type: ignore[arg-type]


def test_x10_mouse_encoding_offsets_by_32_and_cannot_name_the_released_button() -> None:
    assert encode_mouse("press", MouseButton.LEFT, 3, 4, tracking=1000, sgr=False) == b"\x1b[M $%"
    assert encode_mouse("release", MouseButton.RIGHT, 3, 4, tracking=1000, sgr=False) == b"\x1b[M#$%"
    assert encode_mouse("press", MouseButton.WHEEL_UP, 0, 0, tracking=1000, sgr=False) == b"\x1b[M`!!"
    assert encode_mouse("press", MouseButton.LEFT, 300, 4, tracking=1000, sgr=False) is None  # beyond the byte
    assert encode_mouse("press", MouseButton.LEFT, 300, 4, tracking=1000, sgr=True) == b"\x1b[<0;301;5M"


def test_x10_mode_reports_presses_only_and_without_modifiers() -> None:
    assert encode_mouse("press", MouseButton.LEFT, 3, 4, tracking=X10_TRACKING, sgr=False) == b"\x1b[M $%"
    assert encode_mouse("press", MouseButton.RIGHT, 3, 4, tracking=X10_TRACKING, sgr=False, ctrl=True,
                        shift=True) == b"\x1b[M\"$%"
    assert encode_mouse("press", MouseButton.WHEEL_UP, 0, 0, tracking=X10_TRACKING, sgr=True) == b"\x1b[<64;1;1M"
    assert encode_mouse("release", MouseButton.LEFT, 3, 4, tracking=X10_TRACKING, sgr=False) is None
    assert encode_mouse("motion", MouseButton.LEFT, 3, 4, tracking=X10_TRACKING, sgr=True) is None
    assert encode_mouse("motion", MouseButton.NONE, 3, 4, tracking=X10_TRACKING, sgr=True) is None


def test_motion_is_reported_per_tracking_mode() -> None:
    drag = ("motion", MouseButton.LEFT, 1, 1)
    hover = ("motion", MouseButton.NONE, 1, 1)
    assert encode_mouse(*drag, tracking=1000, sgr=True) is None
    assert encode_mouse(*drag, tracking=1002, sgr=True) == b"\x1b[<32;2;2M"
    assert encode_mouse(*hover, tracking=1002, sgr=True) is None
    assert encode_mouse(*hover, tracking=1003, sgr=True) == b"\x1b[<35;2;2M"
    assert encode_mouse("release", MouseButton.WHEEL_UP, 1, 1, tracking=1003, sgr=True) is None


@pytest.mark.parametrize(
    "key",
    [key_for_character(c) for c in string.punctuation] + ["euro_sign", "pound_sign", "slash", "at", "plus", "minus"],
)
def test_characters_of_key_names_agree_with_textuals(key: str) -> None:
    """keys.py names characters itself (the session host must not load Textual): the same as Textual does."""
    from textual.keys import REPLACED_KEYS, key_to_character

    from polter.terminal.keys import _character

    assert _character(key) == key_to_character(REPLACED_KEYS.get(key, key))


def test_the_session_host_loads_no_textual() -> None:
    import subprocess
    import sys

    script = "import sys, polter.host.session_host, polter.cli._host_process; print('textual' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "False"
