"""What a terminal program expects to read for a key, a paste, a mouse event or a focus change.

Pure functions from Textual's key *names* (``"ctrl+left"``, ``"full_stop"``, ``"shift+tab"``) to the
bytes xterm would send. Names, not ``Key.character``: headless drivers and many real ones give no
character for ``ctrl+a`` or ``shift+tab``. The encodings follow xterm's defaults (``modifyCursorKeys``
2, ``metaSendsEscape``), which is what programs built for ``TERM=xterm-256color`` expect.
"""

from __future__ import annotations

import unicodedata
from enum import IntEnum
from functools import lru_cache
from typing import Final, Literal

__all__ = [
    "MouseButton",
    "MouseKind",
    "X10_TRACKING",
    "encode_focus",
    "encode_key",
    "encode_mouse",
    "encode_paste",
]

ESC: Final = "\x1b"
CSI: Final = ESC + "["
SS3: Final = ESC + "O"

_MODIFIER_BITS: Final = {"shift": 1, "alt": 2, "meta": 2, "ctrl": 4, "super": 8, "hyper": 8}
"""xterm's modifier parameter is ``1 + sum of these``; Textual's ``meta`` is the Alt/Option key."""

_CURSOR_KEYS: Final = {"up": "A", "down": "B", "right": "C", "left": "D", "home": "H", "end": "F"}
"""Keys sent as ``CSI x`` (or ``SS3 x`` in application-cursor mode), ``CSI 1;m x`` when modified."""

_TILDE_KEYS: Final = {
    "insert": 2, "delete": 3, "pageup": 5, "pagedown": 6,
    "f5": 15, "f6": 17, "f7": 18, "f8": 19, "f9": 20, "f10": 21, "f11": 23, "f12": 24,
}  # fmt: skip
"""Keys sent as ``CSI n ~``, ``CSI n;m ~`` when modified."""

_PF_KEYS: Final = {"f1": "P", "f2": "Q", "f3": "R", "f4": "S"}
"""F1–F4 are ``SS3 x``, ``CSI 1;m x`` when modified."""

_PLAIN_KEYS: Final = {
    "enter": "\r", "return": "\r", "tab": "\t", "backspace": "\x7f", "escape": ESC,
    "space": " ", "newline": "\n",
}  # fmt: skip

_NEWLINE_KEYS: Final = frozenset({"shift+enter", "ctrl+enter", "ctrl+shift+enter"})
"""Enter with shift or ctrl (which Textual tells apart only in terminals with the kitty keyboard
protocol) means a new line in the prompt: sent as ``^J``, which Claude Code, Codex, Gemini CLI, Qwen
Code and opencode all take as "insert a newline" (a shell takes it as Enter). A plain ``^M`` would
submit the half-written prompt."""

_CTRL_SYMBOLS: Final = {
    "space": "\x00", "2": "\x00", "3": ESC, "4": "\x1c", "5": "\x1d", "6": "\x1e",
    "7": "\x1f", "minus": "\x1f", "slash": "\x1f", "8": "\x7f",
    "enter": "\r", "tab": "\t", "backspace": "\x08", "escape": ESC,
}  # fmt: skip
"""What xterm sends for ctrl plus a digit or a named key (``ctrl+backspace`` is ``^H``, ``ctrl+2`` is NUL);
ctrl plus one of ``@[\\]^_?`` is the character with bit 6 flipped, as on a VT100."""


def _split(key: str) -> tuple[frozenset[str], str]:
    *modifiers, base = key.split("+")
    return frozenset(modifiers), base


def _modifier_parameter(modifiers: frozenset[str]) -> int:
    return 1 + sum({_MODIFIER_BITS[name] for name in modifiers if name in _MODIFIER_BITS})


def encode_key(key: str, *, application_cursor: bool = False) -> bytes | None:
    """The bytes for a Textual key name, or ``None`` for a key a terminal cannot express.

    Args:
        key: ``Key.key``, e.g. ``"a"``, ``"A"``, ``"ctrl+c"``, ``"alt+shift+left"``, ``"f5"``, ``"euro_sign"``.
        application_cursor: DECCKM (``CSI ? 1 h``) is set: unmodified arrows, Home and End use SS3.
    """
    if key in _NEWLINE_KEYS:
        return b"\n"
    modifiers, base = _split(key)
    if not base:
        return None
    unknown = modifiers - _MODIFIER_BITS.keys()
    if unknown:
        return None
    alt = bool(modifiers & {"alt", "meta"})
    ctrl = "ctrl" in modifiers
    shift = "shift" in modifiers

    if base in _CURSOR_KEYS or base in _TILDE_KEYS or base in _PF_KEYS or _function_key(base):
        return _encode_function_key(base, modifiers, application_cursor).encode()

    if base == "tab" and shift and not ctrl:
        return (ESC if alt else "").encode() + (CSI + "Z").encode()
    if ctrl:
        text = _control_character(base)
    elif base in _PLAIN_KEYS:
        text = _PLAIN_KEYS[base]
    else:
        text = _printable(base, shift=shift)
    if text is None:
        return None
    return ((ESC if alt else "") + text).encode()


def _function_key(base: str) -> bool:
    """F13–F24: xterm reports them as shifted F1–F12."""
    return base.startswith("f") and base[1:].isdigit() and 13 <= int(base[1:]) <= 24


def _encode_function_key(base: str, modifiers: frozenset[str], application_cursor: bool) -> str:
    if _function_key(base):
        base = f"f{int(base[1:]) - 12}"
        modifiers = modifiers | {"shift"}
    parameter = _modifier_parameter(modifiers)
    if base in _TILDE_KEYS:
        number = _TILDE_KEYS[base]
        return f"{CSI}{number}~" if parameter == 1 else f"{CSI}{number};{parameter}~"
    final = _CURSOR_KEYS.get(base) or _PF_KEYS[base]
    if parameter != 1:
        return f"{CSI}1;{parameter}{final}"
    if base in _PF_KEYS or application_cursor:
        return SS3 + final
    return CSI + final


_SHORT_NAMES: Final = {
    "slash": "solidus", "backslash": "reverse solidus", "at": "commercial at", "minus": "hyphen-minus",
    "plus": "plus sign", "underscore": "low line", "hyphen_minus": "hyphen-minus",
    "less_than_sign": "less-than sign", "greater_than_sign": "greater-than sign",
}  # fmt: skip
"""Textual's key names that are not the character's Unicode name with ``_`` for spaces."""


@lru_cache(1024)
def _character(base: str) -> str | None:
    """The character a key name stands for (``"full_stop"`` → ``"."``, ``"plus"`` → ``"+"``), as Textual
    names keys: the Unicode name, lower case, ``_`` for spaces (this module imports no Textual, so
    the session host does not load it; a test checks it agrees with ``textual.keys.key_to_character``)."""
    if len(base) == 1:
        return base
    try:
        return unicodedata.lookup(_SHORT_NAMES.get(base, base.replace("_", " ")))
    except KeyError:
        return None


def _printable(base: str, *, shift: bool) -> str | None:
    character = _character(base)
    if character is None or not character.isprintable():
        return None
    return character.upper() if shift else character


def _control_character(base: str) -> str | None:
    if base in _CTRL_SYMBOLS:
        return _CTRL_SYMBOLS[base]
    if len(base) == 1 and base.isascii() and base.isalpha():
        return chr(ord(base.lower()) & 0x1F)
    character = _character(base)
    if character is not None and character in "@[\\]^_?":
        return chr(ord(character) ^ 0x40)
    return None


def encode_paste(text: str, *, bracketed: bool) -> bytes:
    """Pasted text as a terminal sends it: line breaks become CR, wrapped in ``CSI 200~``/``CSI 201~``
    when the program enabled bracketed paste (``?2004``). An end marker inside the text is dropped,
    so a paste cannot break out of the bracket."""
    text = text.replace("\r\n", "\r").replace("\n", "\r")
    if not bracketed:
        return text.encode()
    text = text.replace(f"{CSI}201~", "").replace(f"{CSI}200~", "")
    return f"{CSI}200~{text}{CSI}201~".encode()


def encode_focus(focused: bool) -> bytes:
    """Focus in (``CSI I``) or out (``CSI O``), for programs that enabled ``?1004``."""
    return (CSI + ("I" if focused else "O")).encode()


class MouseButton(IntEnum):
    """Button numbers as Textual reports them (``MouseEvent.button``); wheel directions added."""

    NONE = 0
    LEFT = 1
    MIDDLE = 2
    RIGHT = 3
    WHEEL_UP = 4
    WHEEL_DOWN = 5
    WHEEL_LEFT = 6
    WHEEL_RIGHT = 7


MouseKind = Literal["press", "release", "motion"]

_BUTTON_CODES: Final = {
    MouseButton.LEFT: 0, MouseButton.MIDDLE: 1, MouseButton.RIGHT: 2, MouseButton.NONE: 3,
    MouseButton.WHEEL_UP: 64, MouseButton.WHEEL_DOWN: 65, MouseButton.WHEEL_LEFT: 66, MouseButton.WHEEL_RIGHT: 67,
}  # fmt: skip

X10_TRACKING: Final = 9
"""``CSI ? 9 h``: xterm's X10 compatibility mode, button presses only."""

_X10_LIMIT: Final = 223
"""The legacy encoding puts ``32 + 1 + coordinate`` into one byte; xterm drops events beyond it."""


def encode_mouse(
    kind: MouseKind,
    button: MouseButton,
    x: int,
    y: int,
    *,
    tracking: int,
    sgr: bool,
    shift: bool = False,
    alt: bool = False,
    ctrl: bool = False,
) -> bytes | None:
    """A mouse event for a program that enabled mouse reporting, or ``None`` if it did not ask for it.

    Args:
        kind: press, release or motion (a wheel step is a press of a wheel button).
        button: which button; ``NONE`` for motion with no button held.
        x: zero-based column inside the terminal.
        y: zero-based row inside the terminal.
        tracking: the mode the program set: 0 (off), 9 (X10: presses only, without modifiers),
            1000 (presses and releases), 1002 (+ drag), 1003 (+ all motion).
        sgr: the program set ``?1006``: ``CSI < b;x;y M/m``, else the legacy ``CSI M`` bytes.
        shift: modifiers held.
        alt: modifiers held.
        ctrl: modifiers held.
    """
    if tracking not in (X10_TRACKING, 1000, 1002, 1003) or x < 0 or y < 0:
        return None
    if tracking == X10_TRACKING:
        if kind != "press":
            return None
        shift = alt = ctrl = False  # as xterm: X10 reports carry no modifiers
    if kind == "motion":
        if tracking == 1000 or (tracking == 1002 and button == MouseButton.NONE):
            return None
    wheel = button >= MouseButton.WHEEL_UP
    if wheel and kind != "press":
        return None
    code = _BUTTON_CODES[button]
    if kind == "motion":
        code += 32
    code += 4 * shift + 8 * alt + 16 * ctrl
    if sgr:
        final = "m" if kind == "release" else "M"
        return f"{CSI}<{code};{x + 1};{y + 1}{final}".encode()
    if kind == "release":
        code = (code & ~3) | 3  # the legacy encoding cannot say which button went up
    if x + 1 > _X10_LIMIT or y + 1 > _X10_LIMIT:
        return None
    return bytes((0x1B, 0x5B, 0x4D, 32 + code, 33 + x, 33 + y))
