"""What the palette does about the agents under their roles: switch a pane's role or phase, reload and edit
role files, show what a role gives a pane and the gateway's audit, mute a pane's notifications. Each is a
call to the session host (the gateway is the host's); editing a role file happens here, in ``$EDITOR``."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from textual.app import SuspendNotSupported

from polter.errors import PolterError
from polter.paths import bundled_dir, config_dir
from polter.protocol import FLOOR_SERVER, Phase
from polter.window.audit_screen import AuditScreen
from polter.window.capabilities_screen import CapabilitiesScreen
from polter.window.notices import roles_report
from polter.window.pane import PaneWidget
from polter.window.text_prompt import TextEchoScreen
from polter.wire.messages import Handoffs

if TYPE_CHECKING:
    from polter.window.session_screen import SessionScreen

__all__ = ["AgentActions"]

GATEWAY_COMMAND = "gateway-command"
"""The worker group of these calls."""


class AgentActions:
    """The palette's commands about ``screen``'s agents."""

    def __init__(self, screen: SessionScreen) -> None:
        self.screen = screen

    def switch_role(self, pane: PaneWidget, role: str) -> None:
        self._run(self._switch_role(pane, role))

    async def _switch_role(self, pane: PaneWidget, role: str) -> None:
        screen = self.screen
        agent = pane.agent
        if agent is None:
            return
        try:
            state = await screen.session.set_role(pane.remote, role)
        except PolterError as exc:
            screen.notify(f"Pane {pane.number} keeps its role {agent.role}: {exc}", severity="error")
            return
        pane.show_state()
        restart = state.agent.restart_needed if state.agent is not None else None
        if restart:
            screen.notify(
                f"Pane {pane.number} is now under {role}. {restart} Restart pane "
                f"{pane.number} from the command palette ({screen.palette_hint}).",
                severity="warning",
                timeout=10,
            )
        else:
            screen.notify(f"Pane {pane.number} is now under {role}; its CLI was told (list_changed).")

    def set_phase(self, pane: PaneWidget, phase: Phase) -> None:
        self._run(self._set_phase(pane, phase))

    async def _set_phase(self, pane: PaneWidget, phase: Phase) -> None:
        if pane.agent is None:
            return
        try:
            await self.screen.session.set_phase(pane.remote, phase)
        except PolterError as exc:
            self.screen.notify(str(exc), severity="error")

    def reload_roles(self) -> None:
        self._run(self._reload_roles())

    async def _reload_roles(self) -> None:
        try:
            status = await self.screen.session.reload_roles()
        except PolterError as exc:
            self.screen.notify(str(exc), severity="error")
            return
        problems = roles_report(status)
        self.screen.notify(
            f"{len(status.names)} roles loaded." + (f"\n{problems}" if problems else ""),
            severity="warning" if problems else "information",
            timeout=15 if problems else 5,
        )

    def edit_role(self, name: str) -> None:
        """Open the role's file in ``$EDITOR`` (the app steps aside). A bundled role is copied into the
        user's roles first, so the copy overrides it and Polter's own file stays as shipped."""
        screen = self.screen
        summary = next((role for role in screen.session.roles.roles if role.name == name), None)
        if summary is None or summary.file is None:
            screen.notify(f"No file is known for the role {name}.", severity="error")
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
            with screen.app.suspend():
                subprocess.run([*shlex.split(editor), str(path)], check=False)
        except SuspendNotSupported:
            screen.notify(
                f"This terminal cannot be handed to an editor; edit {path} yourself (roles reload by themselves).",
                severity="warning",
                timeout=15,
            )
            return
        except OSError as exc:
            screen.notify(f"Could not start the editor {editor!r}: {exc}", severity="error")
            return
        self.reload_roles()

    def show_capabilities(self, pane: PaneWidget) -> None:
        if pane.agent is not None:
            self.screen.app.push_screen(CapabilitiesScreen(self.screen.session, pane.remote, f"Pane {pane.number}"))

    def show_audit(self) -> None:
        self.screen.app.push_screen(AuditScreen(self.screen.session))

    def show_team(self) -> None:
        """The team view: the audit of the floor server's calls, live (who sent what to whom, docs/team.md)."""
        self.screen.app.push_screen(AuditScreen(self.screen.session, server=FLOOR_SERVER))

    def send_to_panes(self) -> None:
        """The human types one message into several panes at once (their words, in each)."""
        self.screen.run_worker(self._send_to_panes(), group=GATEWAY_COMMAND)

    async def _send_to_panes(self) -> None:
        app = self.screen.app
        count = len(self.screen.grid.panes)
        which = await app.push_screen_wait(
            TextEchoScreen(
                "Send to which panes?", f"Pane numbers separated by commas (1-{count}), or all.", placeholder="1,3"
            )  # fmt: skip
        )
        if which is None:
            return
        everyone = [str(number) for number in range(1, count + 1)]
        numbers = everyone if which.lower() == "all" else [part.strip() for part in which.split(",") if part.strip()]
        text = await app.push_screen_wait(
            TextEchoScreen(
                f"What to type into pane(s) {', '.join(numbers)}?",
                "Typed and submitted in each, as your words (they count for keyword gates and phases).",
                placeholder="message",
            )  # fmt: skip
        )
        if not text:
            return
        try:
            typed = await self.screen.session.send_to_panes(numbers, text)
        except PolterError as exc:
            self.screen.notify(str(exc), severity="error")
            return
        self.screen.notify(f"Typed into {len(typed)} pane(s).")

    def set_handoffs(self, pane: PaneWidget, mode: Handoffs) -> None:
        """Let agents hand work to and from ``pane``, hold what they send it (muted), or forbid both."""
        self._run(self._set_handoffs(pane, mode))

    async def _set_handoffs(self, pane: PaneWidget, mode: Handoffs) -> None:
        try:
            await self.screen.session.set_handoffs(pane.remote, mode)
        except PolterError as exc:
            self.screen.notify(str(exc), severity="error")
            return
        pane.show_state()
        said = {"on": "takes hand-offs again", "muted": "holds what agents send it", "forbidden": "takes no hand-offs"}
        self.screen.notify(f"Pane {pane.number} {said[mode]}.")

    def set_muted(self, pane: PaneWidget, muted: bool) -> None:
        """Mute or unmute ``pane``'s notifications (the session keeps it, also for ``--restore``)."""
        self._run(self._set_muted(pane, muted))

    async def _set_muted(self, pane: PaneWidget, muted: bool) -> None:
        try:
            await self.screen.session.set_muted(pane.remote, muted)
        except PolterError as exc:
            self.screen.notify(str(exc), severity="error")
            return
        pane.show_state()
        self.screen.notify(f"Pane {pane.number} {'is muted' if muted else 'notifies again'}.")

    def _run(self, work: Coroutine[Any, Any, None]) -> None:
        self.screen.run_worker(work, group=GATEWAY_COMMAND)
