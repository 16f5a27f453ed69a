"""Telling the human that an agent needs them: the session host's part that owns it.

The host reads every agent twice a second (and at once when its CLI reports through its hooks), lets the state
settle (:class:`~polter.host.transitions.Transitions`), and on a change worth telling (``waiting``, ``done``)
decides who to tell, once:

- nobody, if an attached window shows that pane focused while its terminal has the focus (windows say which pane
  they focus and whether their terminal has the focus: the ``looking`` call), if the pane is muted (the ``mute``
  call), or if the event is not among ``notify_events``;
- every attached window: an :class:`~polter.wire.messages.AttentionNotice`, which the window writes to its
  own terminal (OSC 9/777/99 or the bell; see ``polter/window/outer_terminal.py``);
- the desktop, when no attached window will show it: nobody is attached, or every attached window's terminal
  is in the background and only rings the bell (terminals that show OSC 9/777/99 raise desktop notifications
  themselves, and a focused window shows the notice);
- ``notify_command`` (:mod:`polter.host.notify_command`), run by the host (it exists when nobody is
  attached), in the background.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from polter.errors import SessionError
from polter.host.agents import Agent
from polter.host.desktop import DesktopNotifications
from polter.host.notify_command import notify_command_env, run_notify_command
from polter.host.pane import HostPane
from polter.host.panes import Panes
from polter.host.transitions import Transition, Transitions
from polter.host.windows import Window, Windows
from polter.launch.config import NotifySettings
from polter.protocol import StateReport
from polter.tasks import BackgroundTasks
from polter.wire import messages as wire
from polter.wire import methods

if TYPE_CHECKING:
    from polter.host.call_table import CallTable

__all__ = ["Attention"]

logger = logging.getLogger(__name__)


class Attention:
    """Who needs the human, and telling them. ``asks_of(pane_id)`` gives a pane's pending asks, one line each;
    ``on_muted`` runs when a pane was muted or unmuted (the session saves it)."""

    def __init__(
        self,
        session: str,
        settings: NotifySettings,
        *,
        panes: Panes,
        windows: Windows,
        asks_of: Callable[[str], list[str]],
        tasks: BackgroundTasks,
        on_muted: Callable[[], None],
    ) -> None:
        self._session = session
        self._settings = settings
        self._panes = panes
        self._windows = windows
        self._asks_of = asks_of
        self._tasks = tasks
        self._on_muted = on_muted
        self.transitions = Transitions(quiet=settings.quiet)
        self.desktop = DesktopNotifications()

    def register_calls(self, calls: CallTable) -> None:
        calls.register(methods.LookingParams, self._looking)
        calls.register(methods.MuteParams, self._mute)

    # -- reading the agents --------------------------------------------------------------------------

    def attend(self, pane: HostPane) -> None:
        """Read the pane's agent again: its header follows the reading, and a settled change notifies."""
        changed = pane.update_agent_state(self._asks_of(pane.id))
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
            self._windows.broadcast(wire.PaneUpdated(pane=pane.state()))
        if transition is not None:
            self._tell(pane, transition)

    def attend_pane(self, pane_id: str) -> None:
        """Read pane ``pane_id``'s agent again now (an ask of it came or went)."""
        pane = self._panes.find(pane_id)
        if pane is not None and pane.agent is not None:
            self.attend(pane)

    def reported(self, agent: Agent, report: StateReport) -> None:
        """The pane's CLI said through its hooks what its agent does: believe it now."""
        pane = self._panes.of_agent(agent)
        if pane is not None:
            pane.take_report(report)
            self.attend(pane)

    def forget(self, pane: HostPane) -> None:
        """The pane is closed."""
        self.transitions.forget(pane.id)

    # -- the calls ----------------------------------------------------------------------------------------

    async def _looking(self, window: Window, params: methods.LookingParams) -> None:
        window.looking_at = params.pane or None
        window.app_focused = params.focused
        window.terminal_notifies = params.notifies

    async def _mute(self, window: Window, params: methods.MuteParams) -> wire.PaneState:
        pane = self._panes.get(params.pane)
        if pane.agent is None:
            raise SessionError(f"pane {pane.id} runs no agent: it has nothing to notify")
        pane.muted = params.muted
        state = pane.state()
        self._windows.broadcast(wire.PaneUpdated(pane=state))
        self._on_muted()
        return state

    # -- telling ----------------------------------------------------------------------------------------

    def _looked_at(self, pane: HostPane) -> bool:
        return any(window.app_focused and window.looking_at == pane.id for window in self._windows.attached)

    def _tell(self, pane: HostPane, transition: Transition) -> None:
        settings = self._settings
        agent = pane.agent
        if agent is None or pane not in self._panes:
            return
        if transition.event not in settings.events or pane.muted or self._looked_at(pane):
            logger.debug("pane %s %s: nobody to tell", pane.id, transition.event)
            return
        notice = wire.AttentionNotice(
            pane=pane.id,
            number=self._panes.number(pane),
            title=agent.title,
            role=agent.role,
            event=transition.event.value,
            message=transition.why,
        )
        windows = self._windows.attached
        for window in windows:
            window.send(notice)
        if settings.desktop and not any(window.app_focused or window.terminal_notifies for window in windows):
            self._tasks.run(self.desktop.send(notice.headline(), notice.message), "a desktop notification")
        if settings.command:
            env = notify_command_env(notice, session=self._session, adapter=agent.adapter.name)
            self._tasks.run(run_notify_command(settings.command, notice, env), "notify_command")
