"""An echo drawn at once: after the human typed into a pane, :class:`EchoScreen` composes the pane's next
update on the idle that follows it instead of waiting for Textual's update timer (polter/window/echo_screen.py).

The timer is slowed to a tick every 30 s here (``support.privates.slow_screen_updates``), so what is drawn
within the test's deadline was drawn by the prompt path; a plain ``Screen`` in the same setting shows the
echo in its model but draws nothing, which proves the slow timer took effect."""

from __future__ import annotations

from importlib.metadata import version

import pytest
from support.privates import slow_screen_updates
from support.waiting import wait_until
from textual import events
from textual.app import App, ComposeResult
from textual.screen import Screen
from textual.strip import Strip

from polter.host.hosted_terminal import HostedTerminal
from polter.terminal.launch import LaunchSpec
from support.local_terminal import LocalTerminal
from polter.window.terminal_view import TerminalView
from polter.window.echo_screen import EchoScreen

TEXTUAL = version("textual")


class RecordingView(TerminalView):
    """Remembers every row text the compositor asked it for: what reached the terminal."""

    def __init__(self) -> None:
        super().__init__(LocalTerminal(HostedTerminal(LaunchSpec(argv=("cat",), title="cat"))))
        self.drawn: list[str] = []

    def render_line(self, y: int) -> Strip:
        strip = super().render_line(y)
        self.drawn.append(strip.text.rstrip())
        return strip


class Pane(Screen[None]):
    def compose(self) -> ComposeResult:
        yield RecordingView()


class PromptPane(EchoScreen[None]):
    def compose(self) -> ComposeResult:
        yield RecordingView()


class OneScreen(App[None]):
    def __init__(self, screen: Screen[None]) -> None:
        super().__init__()
        self.first = screen

    def on_mount(self) -> None:
        self.push_screen(self.first)


def test_the_textual_internal_prompt_drawing_calls() -> None:
    """``Screen._on_timer_update`` is what Textual's update timer calls to compose; if this fails, adapt
    polter/window/echo_screen.py to the Textual version named."""
    assert callable(getattr(Screen, "_on_timer_update", None)), f"Textual {TEXTUAL}: Screen._on_timer_update is gone"


async def typed_and_drawn(screen: Screen[None], text: str, *, within: float) -> tuple[bool, bool]:
    """Type ``text`` into the screen's pane: whether the pane's screen shows it, and whether it was drawn,
    ``within`` seconds."""
    app = OneScreen(screen)
    async with app.run_test(size=(40, 6)):
        view = screen.query_one(RecordingView)
        await wait_until(lambda: view.running and app.screen is screen)
        view.focus()
        for character in text:
            app.post_message(events.Key(character, character))
        await wait_until(lambda: view.screen_model is not None and text in view.screen_model.text(0))
        try:
            await wait_until(lambda: any(text in row for row in view.drawn), timeout=within)
        except AssertionError:
            return True, False
        return True, True


async def test_an_echo_is_drawn_without_waiting_for_the_update_timer(monkeypatch: pytest.MonkeyPatch) -> None:
    slow_screen_updates(monkeypatch, 30.0)
    assert await typed_and_drawn(PromptPane(), "hello", within=10) == (True, True)
    assert await typed_and_drawn(Pane(), "hello", within=1) == (True, False), "the slow timer drew the echo"
