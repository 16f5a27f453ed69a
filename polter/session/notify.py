"""Telling the human that an agent needs them: the session host's side, mixed into
:class:`~polter.session.host.SessionHost` as :class:`SessionAttention`.

The host reads every agent twice a second (and at once when its CLI reports through its hooks), lets the state
settle (:class:`~polter.session.attention.Transitions`), and on a change worth telling (``waiting``, ``done``)
decides who to tell, once:

- nobody, if an attached window shows that pane focused while its terminal has the focus (windows say which pane
  they focus and whether their terminal has the focus: the ``looking`` call), if the pane is muted, or if the
  event is not among ``notify_events``;
- every attached window: an :class:`~polter.session.protocol.AttentionNotice`, which the window writes to its
  own terminal (OSC 9/777/99 or the bell; see ``polter/ui/outer_terminal.py``);
- the desktop, when no attached window will show it: nobody is attached, or every attached window's terminal
  is in the background and only rings the bell (terminals that show OSC 9/777/99 raise desktop notifications
  themselves, and a focused window shows the notice);
- ``notify_command``, run by the host (it exists when nobody is attached), in the background: its output goes
  to the host's log, a failure is logged, never fatal.
"""

from __future__ import annotations

import asyncio
import logging
import os
import shlex
import time
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from polter.errors import SessionError
from polter.session import methods
from polter.session import protocol as wire
from polter.session.attention import Transition, Transitions
from polter.session.desktop import DesktopNotifications
from polter.session.host_members import HostMembers
from polter.session.panes import SessionPane
from polter.session.windows import Window

__all__ = ["NOTIFY_COMMAND_TIMEOUT", "SessionAttention", "notify_command_env", "run_notify_command"]

logger = logging.getLogger(__name__)

NOTIFY_COMMAND_TIMEOUT: Final = 60.0
"""Seconds a ``notify_command`` may run before it is killed (a hung webhook must not pile up processes)."""


class SessionAttention(HostMembers):
    """The attention methods of :class:`~polter.session.host.SessionHost` (``self`` is the host)."""

    def _init_attention(self) -> None:
        self.transitions = Transitions(quiet=self.launch.notify.quiet)
        self.desktop = DesktopNotifications()
        self.calls.register(methods.LookingParams, self._looking)
        self.calls.register(methods.MuteParams, self._mute)

    # -- reading the agents --------------------------------------------------------------------------

    def _attend(self, pane: SessionPane) -> None:
        """Read the pane's agent again: its header follows the reading, and a settled change notifies."""
        changed = pane.update_agent_state(self._asks_of(pane))
        typed = pane.terminal.last_input > 0
        transition = self.transitions.observe(pane.id, pane.reading, typed=typed)
        since = self.transitions.waiting_since(pane.id)
        if since is None:
            waiting_since = None
        else:
            waiting_since = pane.waiting_since or datetime.now(UTC) - timedelta(seconds=time.monotonic() - since)
        if waiting_since != pane.waiting_since:
            pane.waiting_since = waiting_since
            changed = True
        if changed:
            self._broadcast(wire.PaneUpdated(pane=pane.state()))
        if transition is not None:
            self._tell(pane, transition)

    def _attend_pane(self, pane_id: str) -> None:
        pane = self._find(pane_id)
        if pane is not None and pane.agent is not None:
            self._attend(pane)

    def _asks_of(self, pane: SessionPane) -> list[str]:
        """The pane's pending asks, oldest first, one line each."""
        return [
            f"asks to use {ask.server}/{ask.name}" if ask.server else f"asks to use {ask.kind} {ask.name}"
            for ask in self.workspace.asks.values()
            if ask.pane == pane.id
        ]

    def _reported(self, agent: Any, report: Any) -> None:
        """The pane's CLI said through its hooks what its agent does: believe it now."""
        for pane in self.panes:
            if pane.agent is agent:
                pane.take_report(report)
                self._attend(pane)

    # -- who looks where -------------------------------------------------------------------------------

    async def _looking(self, window: Window, params: methods.LookingParams) -> None:
        window.looking_at = params.pane or None
        window.app_focused = params.focused
        window.terminal_notifies = params.notifies

    async def _mute(self, window: Window, params: methods.MuteParams) -> wire.PaneState:
        pane = self.pane(params.pane)
        if pane.agent is None:
            raise SessionError(f"pane {pane.id} runs no agent: it has nothing to notify")
        pane.muted = params.muted
        state = pane.state()
        self._broadcast(wire.PaneUpdated(pane=state))
        self._save()
        return state

    def _looked_at(self, pane: SessionPane) -> bool:
        return any(window.attached and window.app_focused and window.looking_at == pane.id for window in self.windows)

    # -- telling ----------------------------------------------------------------------------------------

    def _tell(self, pane: SessionPane, transition: Transition) -> None:
        settings = self.launch.notify
        agent = pane.agent
        if agent is None or pane not in self.panes:
            return
        if transition.event not in settings.events or pane.muted or self._looked_at(pane):
            logger.debug("pane %s %s: nobody to tell", pane.id, transition.event)
            return
        notice = wire.AttentionNotice(
            pane=pane.id,
            number=self.panes.index(pane) + 1,
            title=agent.title,
            role=agent.role,
            event=transition.event.value,
            message=transition.why,
        )
        windows = [window for window in self.windows if window.attached]
        for window in windows:
            window.send(notice)
        if settings.desktop and not any(window.app_focused or window.terminal_notifies for window in windows):
            self._spawn(self.desktop.send(notice.headline(), notice.message), "a desktop notification")
        if settings.command:
            env = notify_command_env(notice, session=self.name, adapter=agent.adapter.name)
            self._spawn(run_notify_command(settings.command, notice, env), "notify_command")


def notify_command_env(notice: wire.AttentionNotice, *, session: str, adapter: str) -> dict[str, str]:
    """What ``notify_command`` finds in its environment besides its arguments."""
    return {
        "POLTER_SESSION": session,
        "POLTER_PANE": str(notice.number),
        "POLTER_PANE_ID": notice.pane,
        "POLTER_PANE_TITLE": notice.title,
        "POLTER_ROLE": notice.role,
        "POLTER_ADAPTER": adapter,
        "POLTER_EVENT": notice.event,
        "POLTER_EXCERPT": notice.message,
    }


async def run_notify_command(
    command: list[str], notice: wire.AttentionNotice, env: dict[str, str], *, timeout: float = NOTIFY_COMMAND_TIMEOUT
) -> int | None:
    """Run ``command`` with the pane's number, title, role, the event and the excerpt as arguments (and ``env``);
    its output goes to the log. Returns its exit code, None when it could not start or was killed for taking
    longer than ``timeout``."""
    argv = [*command, str(notice.number), notice.title, notice.role, notice.event, notice.message]
    shown = shlex.join(command)
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            env={**os.environ, **env},
            start_new_session=True,
        )
    except OSError as exc:
        logger.warning("notify_command %s could not start: %s", shown, exc)
        return None
    try:
        output, _ = await asyncio.wait_for(process.communicate(), timeout)
    except TimeoutError:
        process.kill()
        await process.wait()
        logger.warning("notify_command %s took longer than %.0f s and was killed", shown, timeout)
        return None
    except asyncio.CancelledError:  # the session ends: no command outlives it
        process.kill()
        raise
    for line in output.decode("utf-8", "replace").splitlines():
        logger.info("notify_command: %s", line)
    if process.returncode != 0:
        logger.warning("notify_command %s exited with %s (pane %s, %s)", shown, process.returncode, notice.number,
                       notice.event)  # fmt: skip
    else:
        logger.info("notify_command %s ran for pane %s (%s)", shown, notice.number, notice.event)
    return process.returncode
