"""Text an agent chooses reaches the window as text, never as Textual markup.

A program in a pane names itself (its terminal title becomes the pane's title), a CLI's hook words its own
message, an agent writes the arguments of the call a human is asked to approve. Read as markup, ``[/]`` raised
in the window (an agent's ``printf '\\e]0;[/]\\a'`` ended it) and ``[on black]`` could hide part of an ask from
the human who approves it. Every place that shows such text is shown the worst of it here.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from support.ui import NOW, Over, make_ask, make_elicitation, reviewer_pane, row
from textual.app import App, ComposeResult
from textual.content import Content
from textual.widgets import Checkbox, DataTable, Label, Select, SelectionList, Static

from polter.printable import printable
from polter.gateway.models import Capabilities, ServerCapability, ToolCapability
from polter.window.ask_screen import AskScreen
from polter.window.audit_screen import AuditScreen
from polter.window.capabilities_screen import CapabilitiesScreen
from polter.window.commands._base import Command, CommandProvider
from polter.window.confirm import ConfirmScreen
from polter.window.elicitation_screen import ElicitationScreen
from polter.window.pane_header import PaneHeader
from polter.window.plain_app import PlainApp
from polter.window.remote import RemoteSession
from polter.wire.registry import SessionFiles

HOSTILE = "[/] [on black]hidden[/on black] [b]loud[/b] [link=https://example.invalid]x[/link] \x1b]52;c;ZXZpbA==\x07"
"""A closing tag with nothing to close (raises if parsed), a style that hides, one that shouts, a link, and an
escape sequence that would set the clipboard of the human's terminal (Textual passes ESC through to it)."""
SHOWN = printable(HOSTILE)
"""How it shows: as written, its control characters spelled out."""


def screen_text(app: App[Any]) -> str:
    """Every line the screen shows, as text."""
    return "\n".join("".join(segment.text for segment in strip) for strip in app.screen._compositor.render_strips())


def flat(text: str) -> str:
    """The text with no whitespace and no box drawing: what wraps across lines and borders reads whole."""
    return re.sub(r"[\s\u2580-\u259f\u2500-\u257f]", "", text)


class PlainOver(PlainApp):
    """Polter's app base with a screen on top (its notifications are Polter's)."""

    def __init__(self, screen: Any = None) -> None:
        super().__init__()
        self.top = screen

    def compose(self) -> ComposeResult:
        yield PaneHeader()

    def on_mount(self) -> None:
        if self.top is not None:
            self.push_screen(self.top)


async def test_a_pane_title_and_badges_an_agent_sets_show_as_written() -> None:
    app = PlainOver()
    async with app.run_test(size=(400, 3)) as pilot:
        header = app.query_one(PaneHeader)
        header.title = HOSTILE  # what a program's OSC 0 title becomes
        header.set_badge("state", HOSTILE)
        header.status = HOSTILE
        header.status_kind = "exited"
        await pilot.pause()
        shown = [str(label.render()) for label in header.query(Label) if label.display]
        assert shown.count(SHOWN) == 3, shown


async def test_a_notification_with_an_agents_words_shows_them_as_written() -> None:
    app = PlainOver()
    async with app.run_test(size=(120, 20), notifications=True) as pilot:
        app.notify(f"pane 2 waits: {HOSTILE}", title="Pane 2")
        app.screen.notify(HOSTILE)  # a widget's notify goes through the app's
        await pilot.pause()
        shown = flat(screen_text(app))
        assert shown.count(flat(SHOWN)) == 2, shown


async def test_an_ask_shows_the_agents_arguments_and_the_reason_as_written() -> None:
    ask = make_ask(arguments={"command": f"rm -rf / {HOSTILE}"}, reason=HOSTILE, name="run[/]", pane_title="[/]")
    app = Over(AskScreen(ask, now=lambda: NOW))
    async with app.run_test(size=(160, 30)) as pilot:
        await pilot.pause()
        shown = flat(screen_text(app))
        assert flat('command: "rm -rf / [/] [on black]hidden[/on black] [b]loud[/b] [link=') in shown, shown  # cut there
        assert "github/run[/]" in shown and "[/]·reviewerasks" in shown, shown
        assert flat(f"{SHOWN} (rule:") in shown, shown


async def test_the_audit_shows_a_hostile_row_as_written() -> None:
    session = RemoteSession(SessionFiles("hostile", Path("/nonexistent")))
    session.panes = [reviewer_pane(session)]
    session.panes[0].agent.title = HOSTILE  # type: ignore[union-attr]
    session.audit_rows.append(row(1, pane="p2", role="r[/]", name="x[/]", reason=HOSTILE))
    app = Over(AuditScreen(session))
    async with app.run_test(size=(200, 20)) as pilot:
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        cells = [str(cell) for cell in table.get_row_at(0)]
        assert cells[1:5] == ["p2", "r[/]", "call", "time/x[/]"] and SHOWN.startswith(cells[-1].rstrip("…")), cells
        assert SHOWN in str(app.screen.query_one("#audit-detail", Static).render())


async def test_capabilities_with_a_hostile_reason_show_it_as_written() -> None:
    tool = ToolCapability(
        name="t[/]", decision="deny", visible=False, rule=None, reason=HOSTILE, read_only=False, destructive=True
    )
    server = ServerCapability(name="time", decision="allow", rule=None, reason="", state="running", tools=[tool])
    capabilities = Capabilities(
        pane="p2", title="Shell", role="reviewer", role_found=True, phase=None, description=HOSTILE, servers=[server],
        skills=[],
    )
    session = RemoteSession(SessionFiles("hostile", Path("/nonexistent")))
    app = Over(CapabilitiesScreen(session, reviewer_pane(session), "Pane 2", capabilities=capabilities))
    async with app.run_test(size=(200, 20)) as pilot:
        await pilot.pause()
        table = app.screen.query_one(DataTable)
        assert [str(cell) for cell in table.get_row_at(1)] == ["  time/t[/]", "deny", "no", SHOWN]
        assert SHOWN in str(app.screen.query_one("#capabilities-summary", Static).render())
        table.move_cursor(row=1)
        await pilot.pause()
        assert str(app.screen.query_one("#capabilities-detail", Static).render()) == f"time/t[/]: {SHOWN}"


async def test_a_question_naming_what_an_agent_named_shows_it_as_written() -> None:
    app = Over(ConfirmScreen("Close pane 2 ([/])?", HOSTILE))
    async with app.run_test(size=(200, 20)) as pilot:
        await pilot.pause()
        shown = flat(screen_text(app))
        assert "Closepane2([/])?" in shown and flat(SHOWN) in shown, shown


async def test_the_palette_shows_a_commands_title_and_help_as_written() -> None:
    """Textual's palette reads a hit's prompt and help as markup: what Polter gives it is plain."""

    class Hostile(CommandProvider):
        def commands(self) -> Any:
            yield Command(f"Role ops for pane 1 ({HOSTILE})", lambda: None, help=HOSTILE, discover=True)

    provider = Hostile.__new__(Hostile)  # its commands need no screen
    hits = [hit async for hit in provider.discover()]
    assert len(hits) == 1
    [hit] = hits
    assert Content.from_markup(hit.prompt).plain == f"Role ops for pane 1 ({SHOWN})"  # as the palette does
    assert hit.help is not None and Content.from_markup(hit.help).plain == SHOWN


async def test_a_servers_form_shows_its_titles_and_choices_as_written() -> None:
    """An MCP server words its own form (a server can be as hostile as an agent): its checkbox's title, its
    choices' names and a multiple choice's names are plain text."""
    schema = {
        "type": "object",
        "properties": {
            "agree": {"type": "boolean", "title": f"agree {HOSTILE}"},
            "colour": {"type": "string", "enum": ["red"], "enumNames": [f"red {HOSTILE}"]},
            "toppings": {"type": "array", "items": {"anyOf": [{"const": "egg", "title": f"egg {HOSTILE}"}]}},
        },
    }
    info = make_elicitation(message=HOSTILE, requested_schema=schema)
    app = Over(ElicitationScreen(info, pane_label="Pane 2 [/]"))
    async with app.run_test(size=(200, 40)) as pilot:
        await pilot.pause()
        modal = app.screen
        assert modal.query_one("#field-agree", Checkbox).label.plain == f"agree {SHOWN}"
        modal.query_one("#field-colour", Select).value = "red"
        await pilot.pause()
        assert flat("red [/] [on black]hidden[/on black]") in flat(screen_text(app))  # (the select cuts the rest)
        assert str(modal.query_one("#field-toppings", SelectionList).get_option_at_index(0).prompt) == f"egg {SHOWN}"


async def test_a_badges_tooltip_shows_the_clis_words_as_written() -> None:
    """A state badge's tooltip carries the CLI's own message (why it waits), shown when the mouse rests on it."""
    app = PlainOver()
    async with app.run_test(size=(120, 10), tooltips=True) as pilot:
        header = app.query_one(PaneHeader)
        header.set_badge("state", "waiting", "warning", tooltip=HOSTILE)
        await pilot.pause()
        await pilot.hover("#badge-state")
        deadline = time.monotonic() + 10
        while flat(SHOWN) not in flat(screen_text(app)) and time.monotonic() < deadline:
            await pilot.pause(0.05)
        assert flat(SHOWN) in flat(screen_text(app))
