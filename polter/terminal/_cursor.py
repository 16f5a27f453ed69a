"""Where a screen's cursor is and how it looks (a small module of its own: windows read it without
loading the screen engine)."""

from __future__ import annotations

from typing import Literal, NamedTuple

__all__ = ["Cursor", "CursorShape"]

CursorShape = Literal["block", "underline", "bar"]


class Cursor(NamedTuple):
    x: int
    y: int
    visible: bool
    shape: CursorShape
    blinking: bool
