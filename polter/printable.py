"""Text that agents, their CLIs and MCP servers wrote, made safe to show on the human's terminal.

A command line an agent ran, a reason a server gave or a CLI's message can hold control characters, and an
escape sequence that reaches a terminal raw acts on it: OSC 52 sets its clipboard, CSI 2J clears it, CSI 8m
hides what follows, OSC 2 retitles it. Neither Textual nor Rich drops ESC from the text a widget shows, and a
plain ``print`` drops nothing, so whatever shows such text spells its control characters out (``\\x1b``).
"""

from __future__ import annotations

import re

__all__ = ["printable"]

_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
"""C0 but newline and tab (which move nothing but the text itself), DEL, and C1 (a terminal may read U+009B as
CSI)."""
_LINE_BREAKS = re.compile(r"[\n\t]")


def printable(text: str, *, one_line: bool = False) -> str:
    """``text`` with its control characters spelled out; ``one_line`` spells out newlines and tabs too (a table's
    cell)."""
    text = _CONTROLS.sub(_spelled, text)
    return _LINE_BREAKS.sub(_spelled, text) if one_line else text


def _spelled(match: re.Match[str]) -> str:
    return f"\\x{ord(match.group()):02x}"
