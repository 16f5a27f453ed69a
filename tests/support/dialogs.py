"""Waiting for Polter's dialogs in a window under Pilot."""

from __future__ import annotations

from typing import Any

from textual.app import App

from polter.window.confirm import ConfirmScreen


def confirm_shown(app: App[Any]) -> bool:
    """A confirmation is the window's screen and its buttons are mounted: a key pressed before that is lost, and a
    query of its labels fails (a CI run read the question of a dialog pushed but not yet composed)."""
    screen = app.screen
    return isinstance(screen, ConfirmScreen) and bool(screen.query("#no"))
