"""Every private attribute of a library that the tests read, one helper each, so an upgrade breaks here.

Textual and the MCP SDK have no public accessor for these. ``tests/test_privates.py`` checks each helper against the
installed version; a helper that no longer finds its attribute fails the test using it with the
library's version and this file named.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from importlib.metadata import version
from typing import Any, TypeVar

import pytest
from mcp import ClientSession
from textual.app import App
from textual.screen import Screen
from textual.strip import Strip

__all__ = [
    "key_for_character",
    "live_styles_caches",
    "notification_messages",
    "rendered_strips",
    "requests_awaiting_answer",
    "slow_screen_updates",
]

T = TypeVar("T")


def _private(library: str, what: str, read: Callable[[], T]) -> T:
    try:
        return read()
    except (AttributeError, ImportError) as exc:
        raise AssertionError(
            f"{library} {version(library)} no longer has {what}, which tests/support/privates.py reads: {exc}"
        ) from exc


def notification_messages(app: App[Any]) -> list[str]:
    """The messages of the notifications the app holds (``App._notifications``), oldest first."""
    return _private("textual", "App._notifications", lambda: [str(note.message) for note in app._notifications])


def rendered_strips(screen: Screen[Any]) -> list[Strip]:
    """The screen as its compositor last drew it, one strip per row (``Screen._compositor.render_strips``)."""
    return _private("textual", "Screen._compositor.render_strips()", lambda: screen._compositor.render_strips())


def key_for_character(character: str) -> str:
    """The key name Textual gives a typed character that is not a letter or digit: ``!`` is
    ``exclamation_mark`` (``textual.keys._character_to_key``)."""

    def read() -> str:
        from textual.keys import _character_to_key

        return _character_to_key(character)

    return _private("textual", "textual.keys._character_to_key", read)


def requests_awaiting_answer(session: ClientSession) -> int:
    """How many requests an MCP client session has sent and not yet had answered
    (``ClientSession._dispatcher._pending``): a call is in flight at the server when this is non-zero."""
    return _private("mcp", "ClientSession._dispatcher._pending", lambda: len(session._dispatcher._pending))


def live_styles_caches() -> int:
    """How many widgets' drawn lines are alive after a full collection: every widget has one
    ``textual._styles_cache.StylesCache``."""

    def read() -> int:
        from textual._styles_cache import StylesCache

        gc.collect()
        return sum(isinstance(thing, StylesCache) for thing in gc.get_objects())

    return _private("textual", "textual._styles_cache.StylesCache", read)


def slow_screen_updates(monkeypatch: pytest.MonkeyPatch, seconds: float) -> None:
    """Screens made from now on compose on their update timer only every ``seconds``
    (``textual.screen.UPDATE_PERIOD``, read when a screen makes its timer)."""
    import textual.screen

    _private("textual", "textual.screen.UPDATE_PERIOD", lambda: textual.screen.UPDATE_PERIOD)
    monkeypatch.setattr(textual.screen, "UPDATE_PERIOD", seconds)
