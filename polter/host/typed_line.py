"""The line the human is typing into a pane, rebuilt from the keys and pastes sent to the program.

The gateway needs the human's own words (keyword gates, new research phases), and Polter sees the
keystrokes before the program does. :class:`TypedLine` follows them as a readline-style editor
would: printable text is inserted at the cursor, the usual editing keys edit, and Enter submits.
It is deliberately conservative where the program's behaviour cannot be known from the keys alone:

- history (``up``/``down``, ``ctrl+p``/``ctrl+n``) replaces the line with text Polter never saw, so
  the line starts over empty (what the human types next still counts);
- completion (``tab``) inserts unknown text, so it is ignored (the words typed around it remain);
- ``ctrl+c`` and ``ctrl+g`` abandon the line; other control and function keys change nothing;
- a paste is inserted as typed text; its newlines submit only when the program did not ask for
  bracketed paste (with bracketed paste, shells and agent CLIs keep a pasted newline in the line).

Pure Python on Textual's key names, no I/O: testable alone.
"""

from __future__ import annotations

import re
from typing import Final

__all__ = ["MAX_LINE", "TypedLine"]

MAX_LINE: Final = 8192
"""Characters kept per line; a longer line keeps its start (evidence is rarely in a paste's tail)."""

_SUBMIT = frozenset({"enter", "ctrl+m"})
_NEWLINE = frozenset({"shift+enter", "alt+enter", "ctrl+enter", "ctrl+j"})
_BACKSPACE = frozenset({"backspace", "ctrl+h"})
_DELETE = frozenset({"delete", "ctrl+d"})
_LEFT = frozenset({"left", "ctrl+b"})
_RIGHT = frozenset({"right", "ctrl+f"})
_HOME = frozenset({"home", "ctrl+a"})
_END = frozenset({"end", "ctrl+e"})
_WORD_LEFT = frozenset({"ctrl+left", "alt+left", "alt+b"})
_WORD_RIGHT = frozenset({"ctrl+right", "alt+right", "alt+f"})
_KILL_START = frozenset({"ctrl+u"})
_KILL_END = frozenset({"ctrl+k"})
_KILL_WORD = frozenset({"ctrl+w", "alt+backspace", "ctrl+backspace", "alt+ctrl+h"})
_ABANDON = frozenset({"ctrl+c", "ctrl+g"})
_RECALL = frozenset(
    {"up", "down", "ctrl+p", "ctrl+n", "pageup", "pagedown", "alt+less_than_sign", "alt+greater_than_sign"}
)
_NEWLINES = re.compile(r"\r\n|\r|\n")


class TypedLine:
    """The current line and its cursor; :meth:`key` and :meth:`paste` return the lines submitted."""

    def __init__(self) -> None:
        self.text = ""
        self.cursor = 0

    def key(self, key: str, character: str | None = None) -> str | None:
        """Follow one key (Textual's name, and the character it typed); return the line it submitted."""
        if key in _SUBMIT:
            return self._submit()
        if key in _NEWLINE:
            self._insert("\n")
        elif key in _BACKSPACE:
            if self.cursor:
                self.text = self.text[: self.cursor - 1] + self.text[self.cursor :]
                self.cursor -= 1
        elif key in _DELETE:
            self.text = self.text[: self.cursor] + self.text[self.cursor + 1 :]
        elif key in _LEFT:
            self.cursor = max(0, self.cursor - 1)
        elif key in _RIGHT:
            self.cursor = min(len(self.text), self.cursor + 1)
        elif key in _HOME:
            self.cursor = 0
        elif key in _END:
            self.cursor = len(self.text)
        elif key in _WORD_LEFT:
            self.cursor = self._word_start()
        elif key in _WORD_RIGHT:
            self.cursor = self._word_end()
        elif key in _KILL_START:
            self.text, self.cursor = self.text[self.cursor :], 0
        elif key in _KILL_END:
            self.text = self.text[: self.cursor]
        elif key in _KILL_WORD:
            start = self._word_start()
            self.text, self.cursor = self.text[:start] + self.text[self.cursor :], start
        elif key in _ABANDON or key in _RECALL:
            self.clear()
        elif character and _typed(key, character):
            self._insert(character)
        return None

    def paste(self, text: str, *, bracketed: bool = True) -> list[str]:
        """Insert pasted text; without bracketed paste each newline submits the line it ends."""
        if bracketed:
            self._insert(_NEWLINES.sub("\n", text))
            return []
        submitted = []
        *complete, rest = _NEWLINES.split(text)
        for part in complete:
            self._insert(part)
            line = self._submit()
            if line is not None:
                submitted.append(line)
        self._insert(rest)
        return submitted

    def clear(self) -> None:
        self.text, self.cursor = "", 0

    def _submit(self) -> str | None:
        line = self.text.strip()
        self.clear()
        return line or None

    def _insert(self, text: str) -> None:
        text = "".join(char for char in text if char == "\n" or char.isprintable())
        room = MAX_LINE - len(self.text)
        if room <= 0 or not text:
            return
        text = text[:room]
        self.text = self.text[: self.cursor] + text + self.text[self.cursor :]
        self.cursor += len(text)

    def _word_start(self) -> int:
        position = self.cursor
        while position and not self.text[position - 1].isalnum():
            position -= 1
        while position and self.text[position - 1].isalnum():
            position -= 1
        return position

    def _word_end(self) -> int:
        position, end = self.cursor, len(self.text)
        while position < end and not self.text[position].isalnum():
            position += 1
        while position < end and self.text[position].isalnum():
            position += 1
        return position


def _typed(key: str, character: str) -> bool:
    """Whether a key typed its character into the line (not ``ctrl+x``, ``alt+x`` or ``escape``)."""
    if len(character) != 1 or not character.isprintable():
        return False
    return not key.startswith(("ctrl+", "alt+", "meta+", "super+"))
