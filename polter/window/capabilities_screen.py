"""A pane's capabilities: what its agent may use and why, the same facts its ``whoami`` gives the agent."""

from __future__ import annotations

from typing import ClassVar, Final

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from polter.errors import PolterError
from polter.gateway.models import Capabilities
from polter.window.plain_app import plain, plain_cell
from polter.window.remote import RemotePane, RemoteSession

__all__ = ["CapabilitiesScreen"]

_DECISION_STYLES: Final = {"allow": "green", "ask": "bold yellow", "deny": "red"}


class CapabilitiesScreen(Screen[None]):
    """Every server, tool and skill of one pane with its decision, whether it is listed, and why.

    | Key | Does |
    | :- | :- |
    | escape, q | back to the panes |
    | r | read them again |

    The highlighted row's reason shows whole under the table (the column is cut in a narrow window).
    """

    DEFAULT_CSS = """
    CapabilitiesScreen {
        & > #capabilities-summary { height: auto; padding: 0 1; background: $panel; }
        & > DataTable { height: 1fr; overflow-x: hidden; }
        & > #capabilities-detail { height: auto; max-height: 4; padding: 0 1; background: $panel; color: $text-muted; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "app.pop_screen", "Back"),
        Binding("r", "refresh", "Refresh"),
    ]

    def __init__(
        self, session: RemoteSession, pane: RemotePane, label: str, capabilities: Capabilities | None = None
    ) -> None:
        """``capabilities`` shows these instead of asking the gateway first (``r`` asks it)."""
        super().__init__()
        self.session = session
        self.pane = pane
        self.label = label
        self.capabilities = capabilities
        self._reasons: dict[str, str] = {}
        """Each row's name and reason, by row key, for the line under the table."""

    def compose(self) -> ComposeResult:
        yield Static(plain(f"{self.label}: reading its capabilities…"), id="capabilities-summary")
        table: DataTable[str | Text] = DataTable(cursor_type="row", zebra_stripes=True)
        table.add_columns("server / tool / skill", "decision", "listed", "why")
        yield table
        yield Static("", id="capabilities-detail")
        yield Footer()

    def on_mount(self) -> None:
        if self.capabilities is not None:
            self.show(self.capabilities)
        else:
            self.action_refresh()

    @work(exclusive=True)
    async def action_refresh(self) -> None:
        try:
            capabilities = await self.session.capabilities(self.pane)
        except PolterError as exc:
            self.query_one("#capabilities-summary", Static).update(plain(f"{self.label}: {exc}"))
            return
        self.show(capabilities)

    def show(self, capabilities: Capabilities) -> None:
        self.capabilities = capabilities
        phase = f", phase {capabilities.phase}" if capabilities.phase else ""
        adapter = self.pane.agent.display_name if self.pane.agent is not None else ""
        lines = [f"{self.label} · {adapter} · role {capabilities.role}{phase}"]
        if capabilities.description:
            lines.append(capabilities.description)
        lines.extend(f"note: {note}" for note in capabilities.notes)
        self.query_one("#capabilities-summary", Static).update(plain("\n".join(lines)))
        table = self.query_one(DataTable)
        table.clear()
        self._reasons.clear()

        def add(name: str | Text, decision: str, listed: str, reason: str) -> None:
            key = str(len(self._reasons))
            self._reasons[key] = f"{str(name).strip()}: {reason}" if reason else ""
            cell = name if isinstance(name, Text) else plain_cell(name)
            table.add_row(cell, _decision(decision), listed, plain_cell(reason), key=key)

        for server in capabilities.servers:
            state = "" if server.state == "running" else f" ({server.state})"
            add(Text(f"{server.name}{state}", style="bold"), server.decision, "", server.reason)
            for tool in server.tools:
                add(f"  {server.name}/{tool.name}", tool.decision, "yes" if tool.visible else "no", tool.reason)
        if capabilities.skills:
            add(Text("skills", style="bold"), "", "", "")
            for skill in capabilities.skills:
                add(f"  {skill.name}", skill.decision, "", skill.reason)
        table.focus()

    @on(DataTable.RowHighlighted)
    def _detail(self, event: DataTable.RowHighlighted) -> None:
        self.query_one("#capabilities-detail", Static).update(plain(self._reasons.get(str(event.row_key.value), "")))


def _decision(decision: str) -> Text:
    return Text(decision, style=_DECISION_STYLES.get(decision, ""))
