"""The panes of a session, in the order windows show them: their ids, their places, and what windows hear of
them coming, changing and going. The ``history`` call (a pane's scrollback rows) is served here."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from polter.errors import SessionError
from polter.host.agents import Agent
from polter.host.hosted_terminal import TypingClock
from polter.host.pane import HostPane
from polter.host.windows import Window, Windows
from polter.terminal.launch import LaunchSpec
from polter.wire import messages as wire
from polter.wire import methods
from polter.wire.frames import HistoryRows, encode_history
from polter.wire.options import MAX_PANES

if TYPE_CHECKING:
    from polter.host.call_table import CallTable

__all__ = ["Panes"]


class Panes:
    """The session ``session``'s panes; their frames and changes go to ``windows``."""

    def __init__(self, session: str, windows: Windows, *, scrollback: int) -> None:
        self._session = session
        self._windows = windows
        self._panes: list[HostPane] = []
        self._numbers = 0
        self._scrollback = scrollback
        self._typing = TypingClock()
        """Shared by every pane: busy panes yield to the one the human types into."""

    def register_calls(self, calls: CallTable) -> None:
        calls.register(methods.HistoryParams, self._history)

    # -- which pane ---------------------------------------------------------------------------------------

    def __iter__(self) -> Iterator[HostPane]:
        return iter(list(self._panes))

    def __len__(self) -> int:
        return len(self._panes)

    def __getitem__(self, index: int) -> HostPane:
        return self._panes[index]

    def __contains__(self, pane: object) -> bool:
        return pane in self._panes

    def get(self, pane_id: str) -> HostPane:
        """The pane ``pane_id`` (raises :class:`SessionError` if the session has none)."""
        pane = self.find(pane_id)
        if pane is None:
            raise SessionError(f"no pane {pane_id} in session {self._session}")
        return pane

    def find(self, pane_id: str) -> HostPane | None:
        return next((pane for pane in self._panes if pane.id == pane_id), None)

    def number(self, pane: HostPane) -> int:
        """The pane's place, from 1 (as windows number the panes)."""
        return self._panes.index(pane) + 1

    # -- coming, changing, going --------------------------------------------------------------------------

    def new_id(self) -> str:
        self._numbers += 1
        return f"p{self._numbers}"

    def new(self, pane_id: str, spec: LaunchSpec, agent: Agent | None = None) -> HostPane:
        """A pane running ``spec`` (not in the session yet: :meth:`add` it)."""
        return HostPane(
            pane_id,
            spec,
            agent=agent,
            scrollback=self._scrollback,
            typing=self._typing,
            on_frame=self._windows.frame,
            on_change=self.changed,
        )

    def add(self, pane: HostPane, index: int | None = None) -> HostPane:
        """Put ``pane`` in the session (last, or at ``index``): every window shows it, at the latest window's size."""
        if len(self._panes) >= MAX_PANES:
            raise SessionError(f"a session has at most {MAX_PANES} panes")
        index = len(self._panes) if index is None else index
        self._panes.insert(index, pane)
        self._windows.broadcast(wire.PaneAdded(pane=pane.state(), index=index))
        size = self._windows.size_of(pane)
        if size is not None:
            pane.resize(*size)
        return pane

    def remove(self, pane: HostPane) -> None:
        if pane in self._panes:
            self._panes.remove(pane)
        self._windows.broadcast(wire.PaneRemoved(pane=pane.id))

    def changed(self, pane: HostPane) -> None:
        """What windows show of ``pane`` changed (its status, title, agent, worktree): they get its state."""
        if pane in self._panes:
            self._windows.broadcast(wire.PaneUpdated(pane=pane.state()))

    def of_agent(self, agent: Agent) -> HostPane | None:
        return next((pane for pane in self._panes if pane.agent is agent), None)

    # -- the calls ----------------------------------------------------------------------------------------

    async def _history(self, window: Window, params: methods.HistoryParams) -> HistoryRows | None:
        screen = self.get(params.pane).terminal.screen
        if screen is None:
            return None
        return encode_history(screen, params.first, params.count, self._windows.styles, window.styles)
