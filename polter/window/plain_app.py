"""How the window shows what agents, their CLIs and MCP servers wrote: as plain, printable text.

Textual reads a string as content markup unless told otherwise: ``[/]`` in it raises (the window dies), ``[on
black]`` restyles it (and can hide part of an ask from the human approving it). And neither Textual nor Rich
drops ESC from what a widget shows: an escape sequence in a command line an agent ran would reach the human's
terminal and act on it (OSC 52 sets its clipboard). A pane's title (its program sets it), a CLI's message, a
call's arguments, a server's reasons, names and forms are shown through :func:`plain`, and Polter's apps derive
from :class:`PlainApp`, whose notifications are plain too. ``tests/window/test_hostile_text.py`` shows each
place the worst of it.
"""

from __future__ import annotations

from rich.text import Text
from textual.app import App
from textual.content import Content
from textual.notifications import SeverityLevel

from polter.printable import printable

__all__ = ["PlainApp", "plain", "plain_cell"]


def plain(text: str) -> Content:
    """``text`` as content to show: never markup, its control characters spelled out."""
    return Content(printable(text))


def plain_cell(text: str) -> Text:
    """``text`` as a table's cell: one line, never markup (a string cell would be read as markup)."""
    return Text(printable(text, one_line=True))


class PlainApp(App[None]):
    """An app whose notifications are plain: they carry names and words that agents choose."""

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        super().notify(printable(message), title=printable(title), severity=severity, timeout=timeout, markup=False)
