"""What the parts of :class:`~polter.session.host.SessionHost` kept in modules of their own (the
protocol's calls, the worktrees, attention) use of the host: declared here for the type checker,
defined by the host. Each part subclasses :class:`HostMembers`, so a change of one of these on the
host that a part does not expect is a type error (the host overrides these declarations)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import asyncio
    from collections.abc import Awaitable
    from pathlib import Path

    from pydantic import BaseModel

    from polter.session import protocol as wire
    from polter.session.agents import PanePlan
    from polter.session.attention import Transitions
    from polter.session.call_table import CallTable
    from polter.session.desktop import DesktopNotifications
    from polter.session.launch import Launch
    from polter.session.methods import RestartParams
    from polter.session.panes import SessionPane
    from polter.session.questions import Questions
    from polter.session.windows import Window
    from polter.session.workspace import Workspace
    from polter.terminal.frames import StyleTable

__all__ = ["HostMembers"]


class HostMembers:
    """Declarations only (nothing at run time): the host's attributes and methods its parts call."""

    if TYPE_CHECKING:
        launch: Launch
        workspace: Workspace
        panes: list[SessionPane]
        windows: set[Window]
        layout: wire.LayoutMode
        active: str | None
        zoomed: str | None
        questions: Questions
        calls: CallTable
        transitions: Transitions
        desktop: DesktopNotifications
        _styles: StyleTable
        _claimed: set[str]
        _worktree_lock: asyncio.Lock

        @property
        def name(self) -> str: ...
        def info(self) -> wire.SessionInfo: ...
        async def end(self, reason: str, *, failed: bool = False) -> None: ...
        def pane(self, pane_id: str) -> SessionPane: ...
        def _find(self, pane_id: str) -> SessionPane | None: ...
        def _new_id(self) -> str: ...
        def _pane_options(self) -> dict[str, Any]: ...
        def _add_pane(self, pane: SessionPane, index: int | None = None) -> SessionPane: ...
        async def _open_plan(self, plan: PanePlan, index: int | None = None) -> SessionPane: ...
        def _pane_changed(self, pane: SessionPane) -> None: ...
        def _spawn(self, coroutine: Awaitable[Any], what: str) -> asyncio.Task[Any]: ...
        def _save(self) -> None: ...
        def _broadcast(self, message: BaseModel) -> None: ...
        def _notify(self, notice: wire.Notice) -> None: ...
        # one part's methods another part calls
        async def _restart(self, window: Window, params: RestartParams) -> None: ...
        def _worktree_source(self, like: SessionPane | None, cwd: Path | None) -> Path | None: ...
