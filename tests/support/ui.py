"""Helpers for the UI's tests: a fixed ask, a clock the test moves, a small app showing one ask."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Static

from polter.gateway.models import AskInfo
from polter.ui.ask_screen import AskScreen

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def make_ask(**overrides: Any) -> AskInfo:
    values: dict[str, Any] = {
        "id": "a1b2c3d4", "pane": "p2", "pane_title": "reviewer", "role": "reviewer", "kind": "tool",
        "server": "github", "name": "create_comment", "rule": 'tools.default = "ask"',
        "arguments": {"repo": "polter/polter", "pull": 42, "body": "Looks good, but the retry loop never backs off."},
        "reason": "github/create_comment is not allowed by name: the role's default for tools is ask.",
        "created_at": NOW, "expires_at": NOW + timedelta(seconds=118),
    }
    return AskInfo(**(values | overrides))


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


class AskApp(App[None]):
    """A background and an ask on top; ``answers`` collects what the modal dismissed with."""

    def __init__(self, ask: AskInfo, **options: Any) -> None:
        super().__init__()
        self.ask, self.options = ask, options
        self.answers: list[str | None] = []

    def compose(self) -> ComposeResult:
        yield Static("the panes would be here", id="background")

    def on_mount(self) -> None:
        self.modal = AskScreen(self.ask, now=lambda: NOW, **self.options)
        self.push_screen(self.modal, self.answers.append)
