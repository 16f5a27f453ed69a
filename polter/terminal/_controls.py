"""What each control sequence does to the screen model, and the replies to terminal queries.

Tokens come whole from `polter.terminal._parser.Tokenizer`. CSI sequences are looked up by
(prefix, intermediates, final) and their parameters parsed once: the resulting call is memoised
per token, so a stream that repeats ``CSI 2K`` or ``CSI 1A`` pays for parsing only the first time.
Plain escape sequences (ESC 7, ESC 8, ESC D, ESC E, ESC M, ESC H, ESC c, ESC # 8) go through
pyte's parser FSM, which drives this model through pyte's listener vocabulary. Sequences pyte
gets wrong or does not know (private-prefix CSI, DCS/APC/PM/SOS strings, colon SGR, DECRQM,
DA2, the kitty keyboard protocol…) never reach it.
"""

from __future__ import annotations

import re
from collections import deque
from collections.abc import Callable
from functools import partial
from typing import Any

import pyte

from polter import __version__
from polter.terminal._cursor import CursorShape
from polter.terminal._model import ScreenModel
from polter.terminal._parser import MAX_SEQUENCE
from polter.terminal._style import DEFAULT_STYLE, apply_sgr, blank_style

__all__ = ["ControlSequences", "PRIVATE_MODES", "xterm_rgb"]

NOTIFICATIONS_KEPT = 100
"""Notification requests a screen keeps (the newest)."""

#: Private (DEC) modes this terminal implements; DECRQM reports the others as unknown (0).
PRIVATE_MODES = frozenset({1, 5, 6, 7, 9, 12, 25, 47, 1000, 1002, 1003, 1004, 1006, 1007, 1047, 1048, 1049, 2004, 2026})
#: ANSI modes this terminal implements: IRM (insert) and LNM (newline).
ANSI_MODES = frozenset({4, 20})
MOUSE_MODES = frozenset({9, 1000, 1002, 1003})
ALTERNATE_MODES = frozenset({47, 1047, 1049})

DA1_REPLY = b"\x1b[?62;22c"  # VT220 with ANSI colour
DA2_REPLY = b"\x1b[>1;10;0c"  # a VT220-class terminal, firmware 10: deliberately not "xterm"
XTVERSION_REPLY = f"\x1bP>|Polter({__version__})\x1b\\".encode()

_CURSOR_SHAPES: dict[int, tuple[CursorShape, bool]] = {1: ("block", True), 2: ("block", False), 3: ("underline", True),
                  4: ("underline", False), 5: ("bar", True), 6: ("bar", False)}  # fmt: skip
_C0_NAMES = {
    "\x07": "bell",
    "\x08": "backspace",
    "\t": "tab",
    "\n": "linefeed",
    "\x0b": "linefeed",
    "\x0c": "linefeed",
    "\r": "carriage_return",
    "\x0e": "shift_out",
    "\x0f": "shift_in",
}
# ESC finals pyte's FSM handles correctly (its "escape" and "sharp" tables).
_PYTE_ESCAPES = frozenset({"\x1b7", "\x1b8", "\x1bD", "\x1bE", "\x1bM", "\x1bH", "\x1bc", "\x1b#8"})


def xterm_rgb(index: int) -> tuple[int, int, int]:
    """xterm's default RGB for a 256-colour palette index."""
    base16 = (
        (0, 0, 0), (205, 0, 0), (0, 205, 0), (205, 205, 0), (0, 0, 238), (205, 0, 205),
        (0, 205, 205), (229, 229, 229), (127, 127, 127), (255, 0, 0), (0, 255, 0),
        (255, 255, 0), (92, 92, 255), (255, 0, 255), (0, 255, 255), (255, 255, 255),
    )  # fmt: skip
    if index < 16:
        return base16[index]
    if index < 232:
        index -= 16
        steps = (0, 95, 135, 175, 215, 255)
        return steps[index // 36], steps[index // 6 % 6], steps[index % 6]
    level = 8 + 10 * (index - 232)
    return level, level, level


def _x11_rgb(hex_colour: str) -> str:
    """``#rrggbb`` → ``rgb:rrrr/gggg/bbbb`` (the form xterm answers colour queries in)."""
    r, g, b = (hex_colour[i : i + 2] for i in (1, 3, 5))
    return f"rgb:{r}{r}/{g}{g}/{b}{b}"


class _PyteListener:
    """Presents the model to pyte's parser under pyte's event names."""

    def __init__(self, screen: ControlSequences) -> None:
        self.reset = screen.reset
        self.index = screen.index
        self.linefeed = screen.next_line  # pyte sends NEL (ESC E) to "linefeed"
        self.reverse_index = screen.reverse_index
        self.set_tab_stop = screen.set_tab_stop
        self.save_cursor = screen.save_cursor
        self.restore_cursor = screen.restore_cursor
        self.alignment_display = screen.alignment_display

    def __getattr__(self, name: str) -> Callable[..., None]:
        return _ignore  # every other pyte event; never reached with the sequences routed here


def _ignore(*_args: Any, **_kwargs: Any) -> None:
    return None


class ControlSequences(ScreenModel):
    """Interprets control tokens; owns modes, title and the reply channel."""

    #: Memoised calls per token are dropped and rebuilt when there are more than this many.
    MAX_MEMO = 8192

    def __init__(self, columns: int, lines: int, scrollback: int, reply: Callable[[bytes], None] | None) -> None:
        super().__init__(columns, lines, scrollback)
        self._reply = reply
        self._max_sequence = MAX_SEQUENCE  # longer CSI bodies and string payloads are ignored
        self.title = ""
        self.icon_title = ""
        self.cwd = ""  # from OSC 7, e.g. "file://host/home/user"
        self.bell_count = 0
        self.notifications: deque[str] = deque(maxlen=NOTIFICATIONS_KEPT)
        """Desktop notifications the program asked for (OSC 9, OSC 777 notify, OSC 99), newest last."""
        self.foreground_color = "#e5e5e5"  # answered to OSC 10 queries
        self.background_color = "#121212"  # answered to OSC 11 queries
        self._title_stack: list[str] = []
        self._fast: dict[str, Callable[[], None]] = {}
        self._c0: dict[str, Callable[[], None]] = {char: getattr(self, name) for char, name in _C0_NAMES.items()}
        self._csi_table: dict[tuple[str, str, str], Callable[[list[int]], None]] = self._build_csi_table()
        self._pyte = pyte.Stream(_PyteListener(self), strict=False)  # type: ignore[arg-type]  # typed as a Screen
        self._reset_modes()

    def _reset_modes(self) -> None:
        self._modes: set[int] = {7, 25}  # set private modes (besides the dedicated flags below)
        self._mouse = 0
        self._alternate = False
        self._application_keypad = False
        self._cursor_visible = True
        self._cursor_shape: CursorShape = "block"
        self._cursor_blinking = False

    # -- queries and replies -----------------------------------------------------------------
    def _send(self, data: bytes) -> None:
        if self._reply is not None:
            self._reply(data)

    def bell(self) -> None:
        self.bell_count += 1

    def reset(self) -> None:
        """RIS (ESC c): back to the initial state. History and title survive, as in tmux."""
        self._reset_state()
        self._reset_modes()
        self._title_stack.clear()

    def set_tab_stop(self) -> None:
        self._tabs.add(self._column())

    # -- dispatch ------------------------------------------------------------------------------
    def _control(self, token: str) -> None:
        """Handle a control token the feed loop had no memoised call for."""
        first = token[0]
        if first != "\x1b":
            handler = self._c0.get(first, _ignore) if token != "\r\n" else self._crlf
            self._fast[token] = handler
            handler()
            return
        kind = token[1:2]
        if kind == "[":
            self._csi(token)
        elif kind and kind in "]P_^X":
            self._string(kind, token)
        elif token in _PYTE_ESCAPES:
            self._remember(token, partial(self._pyte.feed, token))
        else:
            self._remember(token, partial(self._escape, token))

    def _crlf(self) -> None:
        self._x = 0
        self.index()

    def _remember(self, token: str, call: Callable[[], None]) -> None:
        if len(self._fast) >= self.MAX_MEMO:
            self._fast.clear()
        self._fast[token] = call
        call()

    def _escape(self, token: str) -> None:
        final = token[-1]
        if len(token) == 2:
            if final == "=":
                self._application_keypad = True
            elif final == ">":
                self._application_keypad = False
        elif len(token) == 3 and token[1] in "()" and final in "0AB":
            self.designate_charset(0 if token[1] == "(" else 1, "B" if final == "A" else final)
        # Anything else (ESC \ on its own, SS2/SS3, ESC % G, G2/G3 sets…) is consumed silently.

    def _csi(self, token: str) -> None:
        body = token[2:-1]
        final = token[-1]
        if len(token) < 3 or not ("@" <= final <= "~") or len(body) > self._max_sequence:
            self._remember(token, _ignore)  # incomplete (interrupted) or over-long: dropped
            return
        end = len(body)
        while end and " " <= body[end - 1] <= "/":
            end -= 1
        intermediates = body[end:]
        params = body[:end]
        prefix = ""
        if params and params[0] in "<=>?":
            prefix, params = params[0], params[1:]
        if final == "m" and not prefix and not intermediates:
            self._style = apply_sgr(self._style, params)  # reached only if the loop skipped it
            return
        handler = self._csi_table.get((prefix, intermediates, final))
        if handler is None:
            self._remember(token, _ignore)
            return
        numbers = []
        for part in params.split(";"):
            head = part.split(":", 1)[0]
            numbers.append(min(int(head), 65_535) if head.isdigit() else 0)
        self._remember(token, partial(handler, numbers))

    def _build_csi_table(self) -> dict[tuple[str, str, str], Callable[[list[int]], None]]:
        def count(method: Callable[[int], None]) -> Callable[[list[int]], None]:
            return lambda p: method(min(p[0] or 1, 65_535))

        return {
            ("", "", "@"): count(self.insert_characters),
            ("", "", "A"): count(self.cursor_up),
            ("", "", "B"): count(self.cursor_down),
            ("", "", "e"): count(self.cursor_down),
            ("", "", "C"): count(self.cursor_forward),
            ("", "", "a"): count(self.cursor_forward),
            ("", "", "D"): count(self.cursor_back),
            ("", "", "E"): self._cursor_next_line,
            ("", "", "F"): self._cursor_previous_line,
            ("", "", "G"): lambda p: self.cursor_to_column((p[0] or 1) - 1),
            ("", "", "`"): lambda p: self.cursor_to_column((p[0] or 1) - 1),
            ("", "", "d"): lambda p: self.cursor_to_line((p[0] or 1) - 1),
            ("", "", "H"): self._cup,
            ("", "", "f"): self._cup,
            ("", "", "I"): lambda p: self.tab(min(p[0] or 1, self.columns)),
            ("", "", "Z"): lambda p: self.back_tab(min(p[0] or 1, self.columns)),
            ("", "", "J"): lambda p: self.erase_in_display(p[0]),
            ("?", "", "J"): lambda p: self.erase_in_display(p[0]),
            ("", "", "K"): lambda p: self.erase_in_line(p[0]),
            ("?", "", "K"): lambda p: self.erase_in_line(p[0]),
            ("", "", "L"): count(self.insert_lines),
            ("", "", "M"): count(self.delete_lines),
            ("", "", "P"): count(self.delete_characters),
            ("", "", "X"): count(self.erase_characters),
            ("", "", "S"): lambda p: self.scroll_up(min(p[0] or 1, self.lines)),
            ("", "", "T"): self._scroll_down,
            ("", "", "b"): count(self.repeat_last),
            ("", "", "g"): self._clear_tab_stops,
            ("", "", "r"): lambda p: self.set_margins(
                (p[0] or 1) - 1, (p[1] if len(p) > 1 and p[1] else self.lines) - 1
            ),
            ("", "", "s"): lambda p: self.save_cursor(),
            ("", "", "u"): lambda p: self.restore_cursor(),
            ("", "", "h"): lambda p: self._set_ansi_modes(p, True),
            ("", "", "l"): lambda p: self._set_ansi_modes(p, False),
            ("?", "", "h"): lambda p: self._set_private_modes(p, True),
            ("?", "", "l"): lambda p: self._set_private_modes(p, False),
            ("", "$", "p"): lambda p: self._report_mode(p[0], private=False),
            ("?", "$", "p"): lambda p: self._report_mode(p[0], private=True),
            ("", "!", "p"): lambda p: self.soft_reset(),
            ("", " ", "q"): self._cursor_style,
            ("", "", "n"): self._device_status,
            ("?", "", "n"): self._device_status_private,
            ("", "", "c"): lambda p: self._answer_query(p, DA1_REPLY),
            (">", "", "c"): lambda p: self._answer_query(p, DA2_REPLY),
            (">", "", "q"): lambda p: self._answer_query(p, XTVERSION_REPLY),
            ("", "", "t"): self._window_op,
            # Kitty keyboard protocol (CSI ? u query, CSI > u push, CSI < u pop, CSI = u set) and
            # xterm's modifyOtherKeys (CSI > 4;2 m): not supported, so no reply (the program's DA1
            # sentinel arrives first) and nothing drawn.
        }

    # -- CSI handlers --------------------------------------------------------------------------
    def _cursor_next_line(self, p: list[int]) -> None:
        self.cursor_down(p[0] or 1)
        self.carriage_return()

    def _cursor_previous_line(self, p: list[int]) -> None:
        self.cursor_up(p[0] or 1)
        self.carriage_return()

    def _scroll_down(self, p: list[int]) -> None:
        if len(p) == 1:  # with more parameters, CSI T is xterm's highlight mouse tracking: ignored
            self.scroll_down(min(p[0] or 1, self.lines))

    def _answer_query(self, p: list[int], reply: bytes) -> None:
        if p[0] == 0:
            self._send(reply)

    def _cup(self, p: list[int]) -> None:
        self.cursor_position((p[0] or 1) - 1, ((p[1] if len(p) > 1 else 0) or 1) - 1)

    def _clear_tab_stops(self, p: list[int]) -> None:
        if p[0] == 0:
            self._tabs.discard(self._column())
        elif p[0] == 3:
            self._tabs.clear()

    def _cursor_style(self, p: list[int]) -> None:
        shape, blinking = _CURSOR_SHAPES.get(p[0], ("block", False))  # 0: the default
        self._cursor_shape, self._cursor_blinking = shape, blinking

    def _device_status(self, p: list[int]) -> None:
        if p[0] == 5:
            self._send(b"\x1b[0n")
        elif p[0] == 6:
            row, column = self._report_position()
            self._send(f"\x1b[{row};{column}R".encode())

    def _device_status_private(self, p: list[int]) -> None:
        if p[0] == 6:
            row, column = self._report_position()
            self._send(f"\x1b[?{row};{column};1R".encode())

    def _report_position(self) -> tuple[int, int]:
        row = self._y - self._top if self._origin else self._y
        return row + 1, self._column() + 1

    def _window_op(self, p: list[int]) -> None:
        op = p[0]
        if op == 18:
            self._send(f"\x1b[8;{self.lines};{self.columns}t".encode())
        elif op == 22 and (len(p) < 2 or p[1] in (0, 2)):
            self._title_stack = [*self._title_stack[-9:], self.title]
        elif op == 23 and (len(p) < 2 or p[1] in (0, 2)) and self._title_stack:
            self.title = self._title_stack.pop()

    def soft_reset(self) -> None:
        """DECSTR: modes, margins, style and saved cursor back to defaults; text stays."""
        self.set_insert_mode(False)
        self._origin = False
        self._autowrap = True
        self._modes.add(7)
        self._cursor_visible = True
        self._style = DEFAULT_STYLE
        self._top, self._bottom = 0, self.lines - 1
        self._charsets, self._shift = ["B", "B"], 0
        self._update_translate()
        self._page.saved = None
        self._application_keypad = False
        self._modes.discard(1)

    # -- modes -------------------------------------------------------------------------------
    def _set_ansi_modes(self, modes: list[int], on: bool) -> None:
        for mode in modes:
            if mode == 4:
                self.set_insert_mode(on)
            elif mode == 20:
                self._newline_mode = on

    def _set_private_modes(self, modes: list[int], on: bool) -> None:
        for mode in modes:
            if mode in MOUSE_MODES:
                self._mouse = mode if on else 0
            elif mode in ALTERNATE_MODES:
                self._set_alternate(mode, on)
            elif mode == 1048:
                self.save_cursor() if on else self.restore_cursor()
            elif mode == 7:
                self._autowrap = on
            elif mode == 6:
                self._origin = on
                self.cursor_position(0, 0)
            elif mode == 25:
                self._cursor_visible = on
            elif mode == 12:
                self._cursor_blinking = on
            elif mode == 5 and on != (5 in self._modes):
                self._all_dirty = True
            if on:
                self._modes.add(mode)
            else:
                self._modes.discard(mode)

    def _set_alternate(self, mode: int, on: bool) -> None:
        if on == self._alternate:
            return
        if on:
            if mode == 1049:
                self.save_cursor()
            self._switch_page(self._alt)
            if mode == 1049:
                self._alt.clear(blank_style(self._style))
        else:
            if mode == 1047:
                self._alt.clear(blank_style(self._style))
            self._switch_page(self._main)
            if mode == 1049:
                self.restore_cursor()
        self._alternate = on

    def _mode_is_set(self, mode: int) -> bool:
        if mode in MOUSE_MODES:
            return self._mouse == mode
        if mode in ALTERNATE_MODES:
            return self._alternate
        if mode == 7:
            return self._autowrap
        if mode == 6:
            return self._origin
        if mode == 25:
            return self._cursor_visible
        if mode == 12:
            return self._cursor_blinking
        return mode in self._modes

    def _report_mode(self, mode: int, *, private: bool) -> None:
        """DECRQM: 1 set, 2 reset, 0 not recognised."""
        if private:
            state = (1 if self._mode_is_set(mode) else 2) if mode in PRIVATE_MODES else 0
            self._send(f"\x1b[?{mode};{state}$y".encode())
        else:
            flags = {4: self._insert, 20: self._newline_mode}
            state = (1 if flags[mode] else 2) if mode in ANSI_MODES else 0
            self._send(f"\x1b[{mode};{state}$y".encode())

    # -- strings: OSC, DCS, APC, PM, SOS ---------------------------------------------------
    def _string(self, kind: str, token: str) -> None:
        if token.endswith("\x1b\\"):
            payload, terminator = token[2:-2], "\x1b\\"
        elif token[-1] in "\x07\x18\x1a" and len(token) > 2:
            payload, terminator = token[2:-1], token[-1]
        else:
            payload, terminator = token[2:], "\x1b\\"  # ended by the ESC of the next sequence
        if kind != "]" or terminator in "\x18\x1a" or len(payload) > self._max_sequence:
            return  # DCS/APC/PM/SOS (e.g. a kitty graphics query) and aborted strings: consumed
        self._osc(payload, terminator)

    def _osc(self, payload: str, terminator: str) -> None:
        command, _, argument = payload.partition(";")
        if command in ("0", "1", "2"):
            text = "".join(ch for ch in argument if ch >= " ")
            if command in ("0", "2"):
                self.title = text
            if command in ("0", "1"):
                self.icon_title = text
        elif command == "7":
            self.cwd = argument
        elif command in ("10", "11", "12") and argument == "?":
            colour = self.background_color if command == "11" else self.foreground_color
            self._send(f"\x1b]{command};{_x11_rgb(colour)}{terminator}".encode())
        elif command == "4":
            self._palette_query(argument, terminator)
        elif (notice := _notification(command, argument)) is not None:
            self.notifications.append(notice)
        # OSC 8 (hyperlinks), 52 (clipboard: never honoured), 133 (prompt marks), 7501 and the
        # rest are consumed without effect.

    def _palette_query(self, argument: str, terminator: str) -> None:
        items = argument.split(";")
        for index, spec in zip(items[::2], items[1::2], strict=False):
            if spec == "?" and index.isdigit() and int(index) < 256:
                r, g, b = xterm_rgb(int(index))
                rgb = f"rgb:{r:02x}{r:02x}/{g:02x}{g:02x}/{b:02x}{b:02x}"
                self._send(f"\x1b]4;{index};{rgb}{terminator}".encode())


def _notification(command: str, argument: str) -> str | None:
    """The text of a desktop notification request: OSC 9 (iTerm2's; not ConEmu's numbered commands such as
    progress, ``9;4;...``), OSC 777 ``notify;title;body`` (urxvt's, WezTerm's, Ghostty's, foot's), OSC 99 (kitty's,
    ``metadata;payload``)."""
    if command == "9" and not re.match(r"\d+(;|$)", argument):
        return argument
    if command == "777" and argument.startswith("notify;"):
        title, _, body = argument[len("notify;") :].partition(";")
        return f"{title}: {body}" if body and body != title else title
    if command == "99":
        return argument.partition(";")[2]
    return None
