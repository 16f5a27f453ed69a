"""The base of Polter's Textual apps: no notification is read as markup."""

from __future__ import annotations

from textual.app import App
from textual.notifications import SeverityLevel

__all__ = ["PlainApp"]


class PlainApp(App[None]):
    """Textual reads a notification's text as content markup unless told otherwise: ``[/]`` in it raises (the
    window dies), ``[on black]`` restyles it. Polter's notifications carry names and words that agents choose (a
    pane's title from its terminal, a CLI's message, a tool's name), so none of them is markup, whoever sends it.

    The widgets that show such text are made with ``markup=False`` or given ``Text``/``Content`` (a table's
    cells, a select's options, a border's title, a server's form) for the same reason;
    ``tests/window/test_hostile_text.py`` shows each one an agent's worst."""

    def notify(
        self,
        message: str,
        *,
        title: str = "",
        severity: SeverityLevel = "information",
        timeout: float | None = None,
        markup: bool = False,
    ) -> None:
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=False)
