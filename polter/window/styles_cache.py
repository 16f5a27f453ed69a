"""Letting go of what Textual keeps of widgets that are gone.

Textual 8's ``StylesCache.get_inner_outer`` is a ``functools.lru_cache`` on a method, so its 1,024 entries
are keyed by the ``StylesCache`` of every widget drawn, and keep it alive with the lines it drew after the
widget is gone. In Polter that is every prefix key's hint screen, every palette and modal, every closed
pane: the window's heap grows by screen-wide lines with each prefix key, and each full garbage collection
of the window walks them all, long enough to be the worst keystroke echo (docs/terminal.md has the
figures). :func:`forget_styles_cache` empties that cache; its entries are two ``Style`` objects each,
made again on the next frame.

``textual._styles_cache`` is private: ``tests/window/test_styles_cache.py`` fails naming the Textual version
when it changes.
"""

from __future__ import annotations

from textual._styles_cache import StylesCache

__all__ = ["forget_styles_cache"]


def forget_styles_cache() -> None:
    """Drop what Textual's caches hold of widgets that were drawn (call when screens or panes close)."""
    StylesCache.get_inner_outer.cache_clear()
