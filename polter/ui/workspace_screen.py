"""The main screen with the gateway behind it: agent panes under roles, asks, and the palette's commands.

It is the multiplexer (:class:`~polter.ui.multiplexer.MultiplexerScreen`) whose panes are opened
through the :class:`~polter.session.workspace.Workspace`: each pane is registered with the
gateway before its CLI starts, and closing it releases its token and runtime dir. The screen turns
the workspace's messages into headers, notifications and ask modals, and offers the palette
providers of :mod:`polter.ui.commands` the actions they run.
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Final

from textual import on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.widgets import Static

from polter.adapters import AdapterRegistry
from polter.errors import PolterError
from polter.gateway.models import AskInfo, Phase, RolesStatus, ServersReload
from polter.paths import bundled_dir, config_dir
from polter.session.agents import PanePlan
from polter.session.config import PaneSetup, SavedSession, save_session
from polter.session.workspace import Workspace
from polter.ui.ask_queue import AskQueue, PendingAsk
from polter.ui.ask_screen import AskScreen
from polter.ui.commands import GatewayCommands, PaneCommands, RoleCommands
from polter.ui.layout import LayoutMode
from polter.ui.multiplexer import MultiplexerScreen, working_directory
from polter.ui.pane import Pane

__all__ = ["STATE_INTERVAL", "WorkspaceScreen", "servers_report"]

STATE_INTERVAL: Final = 0.5
"""Seconds between readings of each agent's state from its screen."""


class WorkspaceScreen(MultiplexerScreen):
    """Agent panes under roles. Everything of :class:`MultiplexerScreen`, plus the gateway's side."""

    DEFAULT_CSS = """
    WorkspaceScreen {
        & > #starting {
            dock: top;
            width: 1fr;
            height: 1fr;
            content-align: center middle;
            color: $text-muted;
        }
    }
    """

    COMMANDS = MultiplexerScreen.COMMANDS | {PaneCommands, RoleCommands, GatewayCommands}

    def __init__(
        self,
        workspace: Workspace,
        plans: list[PanePlan],
        *,
        registry: AdapterRegistry | None = None,
        layout_mode: LayoutMode = "grid",
        prefix: str = "ctrl+b",
        scrollback: int = 10_000,
        hint: str | None = None,
    ) -> None:
        super().__init__([], layout_mode=layout_mode, prefix=prefix, scrollback=scrollback)
        self.workspace = workspace
        self.plans = plans
        self.registry = registry
        self.hint = hint
        self.asks = AskQueue()
        self.ask_screen: AskScreen | None = None
        self._later: set[str] = set()
        """Asks the human put off (escape): not shown again by themselves."""
        self.ready = False
        self.saved = False

    def compose(self) -> ComposeResult:
        yield from super().compose()
        yield Static("Starting Polter's gateway…", id="starting")

    def on_mount(self) -> None:
        super().on_mount()
        self.workspace.subscribe(self)
        self.set_interval(STATE_INTERVAL, self._read_states)
        self._start()

    @work(exclusive=True, group="workspace-start")
    async def _start(self) -> None:
        try:
            await self.workspace.start()
        except PolterError as exc:
            self.app.exit(return_code=1, message=f"polter: {exc}")
            return
        for plan in self.plans:
            await self.open_plan(plan, focus=False)
        self.query_one("#starting").remove()
        panes = self.grid.panes
        if panes:
            panes[0].terminal.focus()
        if self.hint:
            self.notify(self.hint, title="Polter", timeout=30)
        self.ready = True

    # -- panes -----------------------------------------------------------------------------------

    def pane_of(self, agent_id: str) -> Pane | None:
        return next((pane for pane in self.grid.panes if pane.agent is not None and pane.agent.id == agent_id), None)

    async def open_plan(self, plan: PanePlan, *, focus: bool = True) -> Pane | None:
        """Register a pane with the gateway, prepare its CLI, and start it in a new pane."""
        try:
            agent, spec = await self.workspace.open(plan)
        except PolterError as exc:
            self.notify(f"Could not open a {plan.adapter.display_name} pane: {exc}", severity="error", timeout=15)
            return None
        pane = await self.grid.add_pane(spec, agent)
        if agent.warnings:
            self.notify("\n".join(agent.warnings), title=f"Pane {pane.number}", severity="warning", timeout=15)
        if focus:
            pane.terminal.focus()
        return pane

    async def open_pane(self, cwd: Path | None) -> Pane | None:
        """New pane: the focused pane's CLI and role, in the directory its program is in."""
        current = self.active_pane
        agent = current.agent if current is not None else None
        if agent is None:
            return await super().open_pane(cwd)
        setup = agent.setup.model_copy(
            update={"role": agent.role, "cwd": cwd or agent.setup.cwd, "title": None, "resume": False}
        )
        return await self.open_plan(PanePlan(setup, agent.adapter, agent.plan.reason, agent.plan.why))

    async def open_new(self, adapter_name: str, role: str) -> None:
        """New pane with ``adapter`` × ``role`` (the palette's "new pane")."""
        if self.registry is None:
            return
        from polter.session.launch import plan_panes

        current = self.active_pane
        cwd = working_directory(current) if current is not None else None
        [plan] = plan_panes(
            [PaneSetup(adapter=adapter_name, role=role, cwd=cwd)],
            self.registry,
            source="opened from the command palette",
            where=lambda index: {},
        )
        await self.open_plan(plan)

    async def discard_pane(self, pane: Pane) -> None:
        await super().discard_pane(pane)
        if pane.agent is not None:
            await self.workspace.close(pane.agent)

    async def relaunch_pane(self, pane: Pane) -> None:
        if pane.agent is None:
            await super().relaunch_pane(pane)
            return
        # A restart that applies a role (or reconnects) keeps the conversation where the CLI can resume
        # one: switching a cold CLI's role must not cost the human their session. A plain restart is fresh.
        try:
            spec = await self.workspace.relaunch(pane.agent, resume=pane.agent.restart_needed is not None)
        except PolterError as exc:
            self.notify(f"Could not restart pane {pane.number}: {exc}", severity="error")
            return
        pane.terminal.launch(spec)

    # -- what the palette runs ---------------------------------------------------------------------

    @work(group="gateway-command")
    async def switch_role(self, pane: Pane, role: str) -> None:
        agent = pane.agent
        if agent is None:
            return
        try:
            await self.workspace.set_role(agent, role)
        except PolterError as exc:
            self.notify(f"Pane {pane.number} keeps its role {agent.role}: {exc}", severity="error")
            return
        if agent.restart_needed:
            self.notify(
                f"Pane {pane.number} is now under {role}. {agent.restart_needed} Restart pane "
                f"{pane.number} from the command palette ({self.palette_hint}).",
                severity="warning",
                timeout=10,
            )
        else:
            self.notify(f"Pane {pane.number} is now under {role}; its CLI was told (list_changed).")

    @work(group="gateway-command")
    async def set_phase(self, pane: Pane, phase: Phase) -> None:
        if pane.agent is None:
            return
        try:
            await self.workspace.set_phase(pane.agent, phase)
        except PolterError as exc:
            self.notify(str(exc), severity="error")

    @work(group="gateway-command")
    async def reload_roles(self) -> None:
        try:
            status = await self.workspace.reload_roles()
        except PolterError as exc:
            self.notify(str(exc), severity="error")
            return
        problems = _roles_report(status)
        self.notify(
            f"{len(status.names)} roles loaded." + (f"\n{problems}" if problems else ""),
            severity="warning" if problems else "information",
            timeout=15 if problems else 5,
        )

    def edit_role(self, name: str) -> None:
        """Open the role's file in ``$EDITOR`` (the app steps aside). A bundled role is copied into the
        user's roles first, so the copy overrides it and Polter's own file stays as shipped."""
        summary = next((role for role in self.workspace.roles.roles if role.name == name), None)
        if summary is None or summary.file is None:
            self.notify(f"No file is known for the role {name}.", severity="error")
            return
        path = Path(summary.file)
        if path.resolve().parent == bundled_dir("roles").resolve():
            user = config_dir() / "roles" / path.name
            if not user.exists():
                user.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(path, user)
            path = user
        editor = os.environ.get("VISUAL") or os.environ.get("EDITOR") or "vi"
        try:
            with self.app.suspend():
                subprocess.run([*shlex.split(editor), str(path)], check=False)
        except SuspendNotSupported:
            self.notify(
                f"This terminal cannot be handed to an editor; edit {path} yourself (roles reload by themselves).",
                severity="warning",
                timeout=15,
            )
            return
        except OSError as exc:
            self.notify(f"Could not start the editor {editor!r}: {exc}", severity="error")
            return
        self.reload_roles()

    def show_capabilities(self, pane: Pane) -> None:
        from polter.ui.capabilities_screen import CapabilitiesScreen

        if pane.agent is not None:
            self.app.push_screen(CapabilitiesScreen(self.workspace, pane.agent, f"Pane {pane.number}"))

    def show_audit(self) -> None:
        from polter.ui.audit_screen import AuditScreen

        self.app.push_screen(AuditScreen(self.workspace))

    def show_asks(self) -> None:
        """Show the pending asks again, oldest first (also the ones put off with escape)."""
        if not len(self.asks):
            self.notify("No asks are waiting.")
            return
        self._later.clear()
        self._show_next_ask()

    # -- messages from the panes and the workspace ---------------------------------------------------

    @on(Pane.LineSubmitted)
    def _line_submitted(self, event: Pane.LineSubmitted) -> None:
        if event.pane.agent is not None and not event.pane.agent.closed:
            self.workspace.submit_line(event.pane.agent, event.line)

    @on(Workspace.PaneChanged)
    def _pane_changed(self, event: Workspace.PaneChanged) -> None:
        pane = self.pane_of(event.agent.id)
        if pane is not None:
            pane.show_agent()

    @on(Workspace.GatewayDown)
    def _gateway_down(self, event: Workspace.GatewayDown) -> None:
        self.notify(
            f"{event.reason}. Restarting it; the panes keep their tokens.",
            title="Gateway",
            severity="error",
            timeout=10,
        )

    @on(Workspace.GatewayUp)
    def _gateway_up(self, event: Workspace.GatewayUp) -> None:
        if event.restarted:
            self.notify(f"The gateway is back at {event.url}; every pane is registered again.", title="Gateway")

    @on(Workspace.RolesChanged)
    def _roles_changed(self, event: Workspace.RolesChanged) -> None:
        if event.status.problems:
            self.notify(_roles_report(event.status), title="Roles", severity="warning", timeout=15)

    @on(Workspace.ServersChanged)
    def _servers_changed(self, event: Workspace.ServersChanged) -> None:
        broken = bool(event.report.problems)
        self.notify(
            servers_report(event.report),
            title="Servers file not applied" if broken else "Servers",
            severity="error" if broken else "information",
            timeout=15 if broken else 10,
        )

    @on(Workspace.AskRequested)
    def _ask_requested(self, event: Workspace.AskRequested) -> None:
        item = self.asks.add(event.ask, event.future)
        if item is None:
            return
        pane = self.pane_of(event.ask.pane)
        self._count_asks(event.ask.pane)
        if pane is not None and self.active_pane is not pane:
            self.notify(
                f"Pane {pane.number} ({event.ask.role}) asks to use {_call(event.ask)}.",
                title="Ask",
                severity="warning",
                timeout=10,
            )
        if self.ask_screen is not None:
            self.ask_screen.show_position(self.asks.position(self.ask_screen.ask.id))
        self._show_next_ask()

    @on(Workspace.AskClosed)
    def _ask_closed(self, event: Workspace.AskClosed) -> None:
        item = self.asks.remove(event.ask.id)
        self._later.discard(event.ask.id)
        self._count_asks(event.ask.pane)
        showing = self.ask_screen
        if showing is not None and showing.ask.id == event.ask.id:
            self.ask_screen = None
            showing.dismiss(None)
            why = event.ask.answered_by or "elsewhere"
            self.notify(f"The ask for {_call(event.ask)} is over ({event.ask.state}: {why}).", severity="warning")
        elif item is not None and event.ask.answered_by == "timeout":
            self.notify(f"Nobody answered {_call(event.ask)} in time: denied.", severity="warning")
        self._show_next_ask()

    def _count_asks(self, agent_id: str) -> None:
        pane = self.pane_of(agent_id)
        if pane is not None:
            pane.pending_asks = self.asks.count(agent_id)
            pane.show_agent()

    def _show_next_ask(self) -> None:
        if self.ask_screen is not None:
            return
        item = next((item for item in self.asks if item.ask.id not in self._later), None)
        if item is None:
            return
        pane = self.pane_of(item.ask.pane)
        label = f"Pane {pane.number} {pane.agent.title}" if pane is not None and pane.agent else None
        region = pane.region if pane is not None and pane.display else None
        self.ask_screen = AskScreen(item.ask, pane_label=label, region=region, position=self.asks.position(item.ask.id))
        self.app.push_screen(self.ask_screen, lambda answer: self._answered(item, answer))

    def _answered(self, item: PendingAsk, answer: str | None) -> None:
        self.ask_screen = None
        if answer is None:
            self._later.add(item.ask.id)
        elif item.open:
            item.future.set_result(answer)  # type: ignore[arg-type]
        self._show_next_ask()

    def _read_states(self) -> None:
        for pane in self.grid.panes:
            if pane.agent is not None:
                pane.update_agent_state()

    # -- quitting ------------------------------------------------------------------------------------

    def save_session(self) -> None:
        """What ``polter --restore`` reopens: the layout and each pane's CLI, role, cwd and title."""
        if self.saved or not self.ready:
            return
        panes = []
        for pane in self.grid.panes:
            agent = pane.agent
            if agent is None:
                continue
            cwd = working_directory(pane) or agent.setup.cwd
            panes.append(
                PaneSetup(
                    adapter=agent.adapter.name,
                    role=agent.role,
                    cwd=cwd,
                    title=agent.setup.title,
                    command=agent.setup.command,
                )
            )
        if panes:
            save_session(SavedSession(layout=self.grid.layout_mode, panes=panes))
            self.saved = True

    def about_to_quit(self) -> None:
        self.save_session()

    async def on_unmount(self) -> None:
        self.save_session()
        self.workspace.unsubscribe(self)


def _call(ask: AskInfo) -> str:
    return f"{ask.server}/{ask.name}" if ask.server else ask.name


def servers_report(report: ServersReload) -> str:
    """What a changed servers file did, or why it changed nothing, for a notification."""
    if report.problems:
        return "\n".join([*report.problems, "Nothing changed: the servers keep running as they were."])
    text = "; ".join(report.changes()) + "."
    if report.added:
        text += "\nRestart a pane to give its CLI the new servers (CLIs read their MCP config when they start)."
    return text


def _roles_report(status: RolesStatus) -> str:
    """The roles' problems, led by the roles still running on their last good version (roles area)."""
    kept = [f"role {name}: its file is invalid; the last good version stays in force" for name in status.kept]
    return "\n".join([*kept, *status.problems])
