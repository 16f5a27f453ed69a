"""What Textual keeps of widgets that are gone (polter/window/styles_cache.py): its ``StylesCache.get_inner_outer``
cache holds the drawn lines of every widget it ever drew, so every prefix key's hint screen stayed in the
window's heap (and in every full garbage collection) until the window closed."""

from __future__ import annotations

from importlib.metadata import version

from support.panes import bash_spec, wait_for_prompt
from support.privates import live_styles_caches
from support.session import hosted, window
from support.waiting import wait_until
from textual.app import App, ComposeResult
from textual.screen import ModalScreen
from textual.widgets import Static

from polter.window.styles_cache import forget_styles_cache
from polter.window.prefix import PrefixScreen

TEXTUAL = version("textual")


class Hint(ModalScreen[None]):
    def compose(self) -> ComposeResult:
        yield Static("a hint " * 20)


async def test_textual_keeps_the_lines_of_closed_screens_until_forgotten() -> None:
    """If the first assertion fails, Textual (the version named) no longer keeps them: remove
    polter/window/styles_cache.py and its calls."""
    app = App[None]()
    async with app.run_test(size=(80, 24)) as pilot:
        forget_styles_cache()
        before = live_styles_caches()
        for _ in range(20):
            await app.push_screen(Hint())
            await pilot.pause()
            app.pop_screen()
            await pilot.pause()
        kept = live_styles_caches() - before
        assert kept >= 20, f"Textual {TEXTUAL}: closed screens' StylesCache are freed now ({kept} kept)"
        forget_styles_cache()
        assert live_styles_caches() - before <= 2


async def test_the_window_forgets_the_prefix_keys_hint_screens() -> None:
    async with hosted([bash_spec()]) as host, window(host, size=(100, 30)) as (app, pilot):
        await wait_for_prompt(app.session_screen.grid.panes[0].terminal)
        before = live_styles_caches()
        for _ in range(20):
            await pilot.press("ctrl+b")
            await wait_until(lambda: isinstance(app.screen, PrefixScreen))
            await pilot.press("escape")
            await wait_until(lambda: app.screen is app.session_screen)
            await pilot.pause()
        assert live_styles_caches() - before <= 4
