"""What the window tells the human of the session as the host reports it: the gateway going and coming back,
role files with problems, a changed servers file, the host's notices, the demo's first word, and a pane that
needs them where they are not looking (in this window, and to the outer terminal: a notification or the bell)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from polter.gateway.models import RolesStatus, ServersReload
from polter.window.outer_terminal import TerminalNotifier, choose_delivery
from polter.wire import messages as wire

if TYPE_CHECKING:
    from polter.window.session_screen import SessionScreen

__all__ = ["SessionNotices", "roles_report", "servers_report"]


class SessionNotices:
    """``screen``'s notifications of the session's events."""

    def __init__(self, screen: SessionScreen) -> None:
        self.screen = screen
        self.terminal_notifier: TerminalNotifier | None = None
        """How this window tells its terminal that a pane needs the human (decided at the first notice)."""

    @property
    def notifier(self) -> TerminalNotifier:
        """How this window tells its terminal (decided once, from ``notify_terminal`` and the environment)."""
        if self.terminal_notifier is None:
            self.terminal_notifier = TerminalNotifier(choose_delivery(self.screen.session.notify_terminal))
        return self.terminal_notifier

    @property
    def terminal_notifies(self) -> bool:
        """Whether this window's terminal raises desktop notifications itself."""
        return self.notifier.delivery.method not in ("bell", "off")

    def heard(self, event: wire.SessionEvent) -> None:
        """Tell the human what ``event`` means for them, if anything."""
        notify = self.screen.notify
        match event:
            case wire.Ready(hint=hint) if hint:
                notify(hint, title="Polter", timeout=30)
            case wire.GatewayChanged(up=True, text=url):
                notify(f"The gateway is back at {url}; every pane is registered again.", title="Gateway")
            case wire.GatewayChanged(up=False, text=why):
                notify(f"{why}. Restarting it; the panes keep their tokens.", title="Gateway", severity="error",
                       timeout=10)  # fmt: skip
            case wire.RolesEvent(status=status) if status.problems:
                notify(roles_report(status), title="Roles", severity="warning", timeout=15)
            case wire.ServersEvent(report=report) if report.changes() or report.problems:
                broken = bool(report.problems)
                notify(
                    servers_report(report),
                    title="Servers file not applied" if broken else "Servers",
                    severity="error" if broken else "information",
                    timeout=15 if broken else 10,
                )
            case wire.Notice(text=text, title=title, severity=severity):
                notify(text, title=title or "", severity=severity, timeout=15)
            case wire.AttentionNotice():
                session = self.screen.session
                headline = event.headline() + (f" on {session.name}" if session.ssh_host else "")
                self.notifier.notify(self.screen.app, headline, event.message)
                notify(event.message or "prefix then n goes there", title=headline, severity="warning")
                hook = getattr(self.screen.app, "on_remote_attention", None)
                if session.ssh_host and hook is not None:
                    hook(session.name, event, self.terminal_notifies)


def servers_report(report: ServersReload) -> str:
    """What a changed servers file did, or why it changed nothing, for a notification."""
    if report.problems:
        return "\n".join([*report.problems, "Nothing changed: the servers keep running as they were."])
    text = "; ".join(report.changes()) + "."
    if report.added:
        text += "\nRestart a pane to give its CLI the new servers (CLIs read their MCP config when they start)."
    return text


def roles_report(status: RolesStatus) -> str:
    """The roles' problems, led by the roles still running on their last good version (roles area)."""
    kept = [f"role {name}: its file is invalid; the last good version stays in force" for name in status.kept]
    return "\n".join([*kept, *status.problems])
