"""The help screen lists every key: the prefix commands, scroll mode, and the keys of each screen and modal."""

from __future__ import annotations

from typing import Any

import pytest
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.widgets import Markdown, Static

from polter.window.terminal_view import TerminalView
from polter.window.ask_screen import AskScreen
from polter.window.audit_screen import AuditScreen
from polter.window.capabilities_screen import CapabilitiesScreen
from polter.window.help_screen import HelpScreen, _key, help_markdown
from polter.window.prefix import PREFIX_COMMANDS


def described_keys(bindings: list[Any]) -> list[str]:
    return [
        key.strip()
        for binding in bindings
        if isinstance(binding, Binding) and binding.description
        for key in binding.key.split(",")
    ]


@pytest.mark.parametrize(("prefix", "shown"), [("ctrl+b", "^b"), ("ctrl+a", "^a"), ("f12", "f12")])
def test_every_key_is_listed(prefix: str, shown: str) -> None:
    text = help_markdown(prefix)
    assert f"`{shown}`" in text
    keys = [
        *PREFIX_COMMANDS,
        *TerminalView.SCROLL_MODE_KEYS,
        *described_keys([*AskScreen.BINDINGS, *AuditScreen.BINDINGS, *CapabilitiesScreen.BINDINGS]),
    ]
    missing = [key for key in keys if f"`{_key(key)}`" not in text]
    assert not missing, f"keys the help does not list: {missing}"


class Background(App[None]):
    def compose(self) -> ComposeResult:
        yield Static("panes")


async def test_the_help_screen_shows_them_and_closes_with_escape() -> None:
    app = Background()
    async with app.run_test(size=(110, 50)) as pilot:
        await app.push_screen(HelpScreen("ctrl+b"))
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert app.screen.query_one(Markdown).source == help_markdown("ctrl+b")
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


def test_a_configured_palette_key_is_listed_and_ctrl_p_is_no_exception_by_default() -> None:
    assert "`:` `p` | command palette" in help_markdown("ctrl+b")
    assert "ctrl+p" not in help_markdown("ctrl+b")  # it goes to the program, like every other key
    text = help_markdown("ctrl+b", palette_key="f2")
    assert "except the **prefix key** (`^b`) and the palette key `f2`." in text
    assert "| `f2` | command palette" in text


def test_the_window_imports_the_help_screen_only_when_it_is_shown() -> None:
    """Textual's ``Markdown`` brings markdown-it and pygments (3 MB): the window loads them for the help alone."""
    import subprocess
    import sys

    script = "import sys; import polter.window; from polter.window.app import PolterApp; print(*sorted(sys.modules))"
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    modules = set(result.stdout.split())
    assert "polter.window.session_screen" in modules
    loaded = sorted(modules & {"polter.window.help_screen", "markdown_it", "pygments", "textual.widgets._markdown"})
    assert not loaded, f"the window imported {loaded} before its help screen is shown"
