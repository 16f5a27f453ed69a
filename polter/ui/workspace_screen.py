"""The main screen of a session with agent panes: asks, roles, and the palette's commands.

It is the multiplexer (:class:`~polter.ui.multiplexer.MultiplexerScreen`) plus the gateway's side of
the session as its host reports it: the screen turns the session's messages into headers,
notifications, ask modals and the host's yes/no questions, and offers the palette providers of
:mod:`polter.ui.commands` the actions they run (each a call to the session host, where the gateway is;
a pane's worktree is reviewed, merged and removed here, :mod:`polter.ui.worktree_panes`).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

from textual import on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.widgets import Static

from polter.errors import PolterError
from polter.gateway.models import AskAnswer, AskInfo, Phase, RolesStatus, ServersReload
from polter.paths import bundled_dir, config_dir
from polter.session.methods import OpenParams
from polter.ui.ask_queue import AskQueue, PendingAsk
from polter.ui.ask_screen import AskScreen
from polter.ui.commands import AttentionCommands, GatewayCommands, PaneCommands, RoleCommands, WorktreeCommands
from polter.ui.confirm import ConfirmScreen
from polter.ui.multiplexer import MultiplexerScreen
from polter.ui.outer_terminal import TerminalNotifier, choose_delivery
from polter.ui.pane import PaneWidget
from polter.ui.remote import RemoteSession
from polter.ui.worktree_panes import WorktreePaneActions

__all__ = ["WorkspaceScreen", "servers_report"]


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

    COMMANDS = MultiplexerScreen.COMMANDS | {
        AttentionCommands,
        PaneCommands,
        RoleCommands,
        GatewayCommands,
        WorktreeCommands,
    }

    def __init__(self, session: RemoteSession, **options: Any) -> None:
        """``options``: :class:`MultiplexerScreen`'s (the layout, the prefix key, the focused and zoomed panes)."""
        super().__init__(session, **options)
        self.asks = AskQueue()
        self.ask_screen: AskScreen | None = None
        self._later: set[str] = set()
        """Asks the human put off (escape): not shown again by themselves."""
        self._questions: dict[str, ConfirmScreen] = {}
        """The host's questions shown here, by id, until answered or over."""
        self.worktrees = WorktreePaneActions(self)
        self.terminal_notifier: TerminalNotifier | None = None
        """How this window tells its terminal that a pane needs the human (decided at the first notice)."""

    @property
    def ready(self) -> bool:
        return self.session.ready

    def compose(self) -> ComposeResult:
        yield from super().compose()
        if not self.session.ready:
            yield Static("Starting Polter's gateway…", id="starting")

    @on(RemoteSession.Ready)
    def _ready(self, event: RemoteSession.Ready) -> None:
        for starting in self.query("#starting"):
            starting.remove()
        if event.hint:
            self.notify(event.hint, title="Polter", timeout=30)

    # -- panes -----------------------------------------------------------------------------------

    def pane_of(self, pane_id: str) -> PaneWidget | None:
        return self.grid.pane_of(pane_id)

    async def open_new(self, adapter_name: str, role: str) -> None:
        """New pane with ``adapter`` × ``role`` (the palette's "new pane"), where the focused pane's program is."""
        current = self.active_pane
        like = current.remote.id if current is not None else None
        await self.open_pane(OpenParams(like=like, adapter=adapter_name, role=role))

    # -- what the palette runs ---------------------------------------------------------------------

    @work(group="gateway-command")
    async def switch_role(self, pane: PaneWidget, role: str) -> None:
        agent = pane.agent
        if agent is None:
            return
        try:
            state = await self.session.set_role(pane.remote, role)
        except PolterError as exc:
            self.notify(f"Pane {pane.number} keeps its role {agent.role}: {exc}", severity="error")
            return
        pane.show_state()
        restart = state.agent.restart_needed if state.agent is not None else None
        if restart:
            self.notify(
                f"Pane {pane.number} is now under {role}. {restart} Restart pane "
                f"{pane.number} from the command palette ({self.palette_hint}).",
                severity="warning",
                timeout=10,
            )
        else:
            self.notify(f"Pane {pane.number} is now under {role}; its CLI was told (list_changed).")

    @work(group="gateway-command")
    async def set_phase(self, pane: PaneWidget, phase: Phase) -> None:
        if pane.agent is None:
            return
        try:
            await self.session.set_phase(pane.remote, phase)
        except PolterError as exc:
            self.notify(str(exc), severity="error")

    @work(group="gateway-command")
    async def reload_roles(self) -> None:
        try:
            status = await self.session.reload_roles()
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
        summary = next((role for role in self.session.roles.roles if role.name == name), None)
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

    def show_capabilities(self, pane: PaneWidget) -> None:
        from polter.ui.capabilities_screen import CapabilitiesScreen

        if pane.agent is not None:
            self.app.push_screen(CapabilitiesScreen(self.session, pane.remote, f"Pane {pane.number}"))

    def show_audit(self) -> None:
        from polter.ui.audit_screen import AuditScreen

        self.app.push_screen(AuditScreen(self.session))

    def arrived_at_waiting(self, pane: PaneWidget) -> bool:
        """Prefix then n went to ``pane``: its asks that were put off (escape) show again."""
        put_off = {item.ask.id for item in self.asks if item.ask.pane == pane.remote.id} & self._later
        if not put_off:
            return False
        self._later -= put_off
        self._show_next_ask()
        return True

    def show_asks(self) -> None:
        """Show the pending asks again, oldest first (also the ones put off with escape)."""
        if not len(self.asks):
            self.notify("No asks are waiting.")
            return
        self._later.clear()
        self._show_next_ask()

    # -- messages from the session ---------------------------------------------------------------------

    @on(RemoteSession.GatewayChanged)
    def _gateway_changed(self, event: RemoteSession.GatewayChanged) -> None:
        if event.up:
            self.notify(f"The gateway is back at {event.text}; every pane is registered again.", title="Gateway")
        else:
            self.notify(
                f"{event.text}. Restarting it; the panes keep their tokens.",
                title="Gateway",
                severity="error",
                timeout=10,
            )

    @on(RemoteSession.RolesChanged)
    def _roles_changed(self, event: RemoteSession.RolesChanged) -> None:
        if event.status.problems:
            self.notify(_roles_report(event.status), title="Roles", severity="warning", timeout=15)

    @on(RemoteSession.ServersChanged)
    def _servers_changed(self, event: RemoteSession.ServersChanged) -> None:
        report = event.report
        if not (report.changes() or report.problems):
            return
        broken = bool(report.problems)
        self.notify(
            servers_report(report),
            title="Servers file not applied" if broken else "Servers",
            severity="error" if broken else "information",
            timeout=15 if broken else 10,
        )

    @on(RemoteSession.Notice)
    def _notice(self, event: RemoteSession.Notice) -> None:
        notice = event.notice
        self.notify(notice.text, title=notice.title or "", severity=notice.severity, timeout=15)

    @on(RemoteSession.QuestionAsked)
    def _question_asked(self, event: RemoteSession.QuestionAsked) -> None:
        question = event.question
        dialog = ConfirmScreen(question.text, question.detail, yes=question.yes, no=question.no)
        self._questions[question.id] = dialog

        def answered(answer: bool | None) -> None:
            if self._questions.pop(question.id, None) is not None:
                self.session.answer_question(question.id, bool(answer))

        self.app.push_screen(dialog, answered)

    @on(RemoteSession.QuestionClosed)
    def _question_closed(self, event: RemoteSession.QuestionClosed) -> None:
        """Decided elsewhere, or nobody answered in time: the dialog goes (its answer would count for nothing)."""
        dialog = self._questions.pop(event.closed.id, None)
        if dialog is None:
            return
        if self.app.screen is dialog:
            dialog.dismiss(False)
        if event.closed.answer is None:
            self.notify(f"Nobody answered in time: {dialog.question}", severity="warning", timeout=10)
        else:
            self.notify(f"Answered in another window: {dialog.question}", timeout=10)

    @property
    def notifier(self) -> TerminalNotifier:
        """How this window tells its terminal (decided once, from ``notify_terminal`` and the environment)."""
        if self.terminal_notifier is None:
            self.terminal_notifier = TerminalNotifier(choose_delivery(self.session.notify_terminal))
        return self.terminal_notifier

    @property
    def terminal_notifies(self) -> bool:
        return self.notifier.delivery.method not in ("bell", "off")

    @on(RemoteSession.AttentionRequested)
    def _attention(self, event: RemoteSession.AttentionRequested) -> None:
        """A pane needs the human where they are not looking: tell the terminal (a notification or the bell) and
        show it here too."""
        notice = event.notice
        self.notifier.notify(self.app, notice.headline(), notice.message)
        self.notify(notice.message or "prefix then n goes there", title=notice.headline(), severity="warning")

    @work(group="gateway-command")
    async def set_muted(self, pane: PaneWidget, muted: bool) -> None:
        """Mute or unmute ``pane``'s notifications (the session keeps it, also for ``--restore``)."""
        try:
            await self.session.set_muted(pane.remote, muted)
        except PolterError as exc:
            self.notify(str(exc), severity="error")
            return
        pane.show_state()
        self.notify(f"Pane {pane.number} {'is muted' if muted else 'notifies again'}.")

    @on(RemoteSession.AskRequested)
    def _ask_requested(self, event: RemoteSession.AskRequested) -> None:
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

    @on(RemoteSession.AskClosed)
    def _ask_closed(self, event: RemoteSession.AskClosed) -> None:
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

    def _count_asks(self, pane_id: str) -> None:
        pane = self.pane_of(pane_id)
        if pane is not None:
            pane.pending_asks = self.asks.count(pane_id)
            pane.show_state()

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

    def _answered(self, item: PendingAsk, answer: AskAnswer | None) -> None:
        self.ask_screen = None
        if answer is None:
            self._later.add(item.ask.id)
        elif item.open:
            item.future.set_result(answer)
        self._show_next_ask()


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
