"""Helpers for the UI's tests: a fixed ask, a clock the test moves, a small app showing one ask, a screen over a
plain background, an audit row, a reviewer's pane."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from textual.app import App, ComposeResult
from textual.widgets import Static

from polter.gateway.models import AskInfo, AuditRow, ElicitationInfo
from polter.wire.messages import AgentView, PaneState
from polter.window.ask_screen import AskScreen
from polter.window.remote import RemotePane, RemoteSession

NOW = datetime(2026, 11, 30, 9, 0, tzinfo=UTC)


def make_ask(**overrides: Any) -> AskInfo:
    values: dict[str, Any] = {
        "id": "a1b2c3d4",
        "pane": "p2",
        "pane_title": "reviewer",
        "role": "reviewer",
        "kind": "tool",
        "server": "github",
        "name": "create_comment",
        "rule": 'tools.default = "ask"',
        "arguments": {"repo": "polter/polter", "pull": 42, "body": "Looks good, but the retry loop never backs off."},
        "reason": "github/create_comment is not allowed by name: the role's default for tools is ask.",
        "created_at": NOW,
        "expires_at": NOW + timedelta(seconds=118),
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


FORM: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string", "title": "Your name", "default": "Ann", "minLength": 2},
        "email": {"type": "string", "format": "email", "description": "for the receipt"},
        "age": {"type": "integer", "minimum": 0, "maximum": 150},
        "score": {"type": "number", "default": 9.5},
        "agree": {"type": "boolean", "title": "I agree", "default": True},
        "colour": {"type": "string", "enum": ["red", "green"], "enumNames": ["Red", "Green"], "default": "green"},
        "size": {"type": "string", "oneOf": [{"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
        "toppings": {"type": "array", "items": {"type": "string", "enum": ["ham", "egg", "kale"]}, "default": ["egg"]},
    },
    "required": ["name", "age"],
}


def make_elicitation(**changes: Any) -> ElicitationInfo:
    """A server's form with every field type of the spec (for the elicitation modal's tests)."""
    info = ElicitationInfo(
        id="e1",
        pane="p2",
        pane_title="right",
        role="coder",
        server="shop",
        message="Where shall we send your order?",
        requested_schema=FORM,
        created_at=NOW,
        expires_at=NOW + timedelta(seconds=300),
    )
    return info.model_copy(update=changes)


class Over(App[None]):
    """A plain background with one screen pushed on top."""

    def __init__(self, screen: Any) -> None:
        super().__init__()
        self.top = screen

    def compose(self) -> ComposeResult:
        yield Static("the panes would be here")

    def on_mount(self) -> None:
        self.push_screen(self.top)


def row(number: int, **values: Any) -> AuditRow:
    base: dict[str, Any] = {
        "id": number,
        "time": datetime(2026, 11, 30, 9, 0, tzinfo=UTC) + timedelta(seconds=7 * number),
        "pane": "p1",
        "role": "coder",
        "layer": "call",
        "server": "time",
        "name": "get_current_time",
        "decision": "allow",
        "rule": 'tools.default = "allow"',
        "reason": "the role's default for tools is allow",
        "latency_ms": 3.2,
        "args_digest": None,
    }
    return AuditRow(**(base | values))


def reviewer_pane(session: RemoteSession) -> RemotePane:
    agent = AgentView(adapter="shell", display_name="Shell", title="Shell", role="reviewer", phase="research")
    return RemotePane(session, PaneState(id="p2", title="bash", status="running", status_kind="running", agent=agent))
