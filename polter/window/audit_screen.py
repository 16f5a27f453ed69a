"""The audit screen: every decision the gateway logs, live, filterable by pane, decision and server."""

from __future__ import annotations

from typing import ClassVar, Final

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Checkbox, DataTable, Footer, Label, Select, Static

from polter.gateway.models import AuditRow
from polter.protocol import FLOOR_SERVER
from polter.window.plain_app import plain, plain_cell
from polter.window.remote import RemoteSession
from polter.wire.messages import AuditEvent

__all__ = ["DECISIONS", "OWN_TOOLS", "AuditScreen"]

DECISIONS: Final = ("allow", "allow_once", "allow_pane", "deny", "error")
_DECISION_STYLES: Final = {
    "allow": "green",
    "allow_once": "bold green",
    "allow_pane": "bold green",
    "deny": "bold red",
    "error": "yellow",
}
COLUMNS: Final = ("time", "pane", "role", "layer", "call", "decision", "why")
WHY_WIDTH: Final = 60
"""The table shows the start of each reason; the highlighted row's whole reason is shown below it."""
CALL_WIDTH: Final = 48
"""Likewise the start of a call: a built-in tool's command or paths can be long."""
OWN_TOOLS: Final = "@own-tools"
"""The server filter's value for the CLI's own tools (shell, files, web...), which have no server."""


class AuditScreen(Screen[None]):
    """The gateway's audit log as a table that grows as decisions happen (newest at the bottom).

    | Key | Does |
    | :- | :- |
    | escape, q | back to the panes |
    | tab / shift+tab | move between the filters and the table |
    | l | show or hide listings (tools/list) |
    | end | follow the newest rows |
    """

    DEFAULT_CSS = """
    AuditScreen {
        & > #audit-filters {
            height: auto;
            padding: 0 1;
            background: $panel;
            & > Label { padding: 1 1 0 0; }
            & > Select { width: 24; margin-right: 1; }
            & > #audit-count { width: 1fr; min-width: 12; text-align: right; color: $text-muted; }
        }
        &.-narrow > #audit-filters {  /* the title and the checkbox go (the footer's `l` says listings) */
            & > #audit-title, & > Checkbox { display: none; }
            & > Select { width: 2fr; max-width: 24; }  /* the count, 1fr, keeps its 12 */
            & > Select SelectCurrent { padding: 0 1; }
            & > Select SelectCurrent Static#label { text-wrap: nowrap; text-overflow: ellipsis; }
        }
        & > DataTable { height: 1fr; overflow-x: hidden; }
        & > #audit-detail { height: auto; max-height: 4; padding: 0 1; background: $panel; color: $text-muted; }
    }
    """

    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (112, "-wide")]
    """Under 112 columns the filters' row holds only the three selects (each up to 24 cells) and the count."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "app.pop_screen", "Back"),
        Binding("l", "toggle_listings", "Listings"),
        Binding("end", "follow", "Newest", show=False),
    ]

    def __init__(self, session: RemoteSession, *, server: str | None = None) -> None:
        super().__init__()
        self.session = session
        self.pane: str | None = None
        self.decision: str | None = None
        self.server: str | None = server
        """Shown from the start: ``polter`` is the team view (who sent what to whom, docs/team.md)."""
        self.listings = False
        self.shown = 0

    def compose(self) -> ComposeResult:
        space = self.session
        panes = [(plain(f"{pane.id} · {pane.agent.title}"), pane.id) for pane in space.panes if pane.agent is not None]
        servers = [(plain(name), name) for name in dict.fromkeys([FLOOR_SERVER, *space.server_names])]
        servers.append((plain("the CLI's own tools"), OWN_TOOLS))
        with Horizontal(id="audit-filters"):
            yield Label("Audit", id="audit-title")
            yield Select(panes, prompt="every pane", id="filter-pane")
            yield Select(
                [(decision, decision) for decision in DECISIONS], prompt="every decision", id="filter-decision"
            )
            server = Select(servers, prompt="every server", id="filter-server")
            if self.server is not None:
                server = Select(servers, prompt="every server", id="filter-server", value=self.server)
            yield server
            yield Checkbox("listings", self.listings, id="filter-listings")
            yield Label("", id="audit-count")
        table: DataTable[str | Text] = DataTable(cursor_type="row", zebra_stripes=True)
        table.add_columns(*COLUMNS)
        yield table
        yield Static("", id="audit-detail")
        yield Footer()

    def on_mount(self) -> None:
        self.session.messages.subscribe(self)
        self._rebuild()
        self.query_one(DataTable).focus()

    def on_unmount(self) -> None:
        self.session.messages.unsubscribe(self)

    # -- filters ---------------------------------------------------------------------------------

    def matches(self, row: AuditRow) -> bool:
        return (
            (self.listings or row.layer != "listing")
            and (self.pane is None or row.pane == self.pane)
            and (self.decision is None or row.decision == self.decision)
            and (
                self.server is None
                or row.server == self.server
                or (self.server == OWN_TOOLS and row.builtin is not None)
            )
        )

    @on(Select.Changed)
    def _filter(self, event: Select.Changed) -> None:
        value = None if event.select.is_blank() else str(event.value)  # "every pane" etc.: no filter
        match event.select.id:
            case "filter-pane":
                self.pane = value
            case "filter-decision":
                self.decision = value
            case "filter-server":
                self.server = value
        self._rebuild()

    @on(Checkbox.Changed, "#filter-listings")
    def _listings(self, event: Checkbox.Changed) -> None:
        self.listings = event.value
        self._rebuild()

    def action_toggle_listings(self) -> None:
        self.query_one("#filter-listings", Checkbox).toggle()

    def action_follow(self) -> None:
        table = self.query_one(DataTable)
        if table.row_count:
            table.move_cursor(row=table.row_count - 1)

    # -- rows ------------------------------------------------------------------------------------

    def _rebuild(self) -> None:
        table = self.query_one(DataTable)
        table.clear()
        self.shown = 0
        for row in self.session.audit_rows:
            if self.matches(row):
                self._add(table, row)
        self.action_follow()
        self._count()

    @on(RemoteSession.Event)
    def _appended(self, message: RemoteSession.Event) -> None:
        if not isinstance(message.event, AuditEvent) or not self.matches(message.event.row):
            return
        table = self.query_one(DataTable)
        following = table.cursor_row >= table.row_count - 1
        self._add(table, message.event.row)
        if following:
            self.action_follow()
        self._count()

    def _add(self, table: DataTable[str | Text], row: AuditRow) -> None:
        style = _DECISION_STYLES.get(row.decision, "")
        table.add_row(
            row.time.astimezone().strftime("%H:%M:%S"),
            plain_cell(row.pane or "-"),
            plain_cell(row.role or "-"),
            plain_cell(row.layer),
            plain_cell(_shortened(row.what, CALL_WIDTH)),
            Text(row.decision, style=style),
            plain_cell(_shortened(row.reason, WHY_WIDTH)),
            key=str(row.id) if row.id is not None else None,
        )
        self.shown += 1

    def _count(self) -> None:
        total = len(self.session.audit_rows)
        self.query_one("#audit-count", Label).update(f"{self.shown} of {total}")

    @on(DataTable.RowHighlighted)
    def _detail(self, event: DataTable.RowHighlighted) -> None:
        key = event.row_key.value
        row = next((row for row in reversed(self.session.audit_rows) if str(row.id) == key), None)
        detail = self.query_one("#audit-detail", Static)
        if row is None:
            detail.update("")
            return
        parts = [
            row.what if row.builtin is not None else "",
            row.reason,
            f"rule: {row.rule}" if row.rule else "",
            f"{row.latency_ms:g} ms",
            f"arguments {row.args_digest}" if row.args_digest else "",
        ]
        detail.update(plain(" · ".join(part for part in parts if part)))


def _shortened(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"
