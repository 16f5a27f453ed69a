"""The session host: the process that owns a session's panes, so they outlive every window.

It runs each pane's program on a PTY with its screen engine (:class:`SessionPane`), the workspace
(the gateway and the agent panes' registrations, asks, roles), and a Unix socket (0600, in a 0700
folder, the peer's uid checked) through which windows attach (:mod:`polter.session.protocol`). A
window gets the session's state and every pane's screen at once, then frames of what changes, and
sends the human's input back. Windows come and go; the programs keep running, the gateway keeps
deciding, and asks wait for someone to attach (their timeout still applies).

Several windows may attach at once: all show the session live, all can type. A pane's size is the
one asked by the window that most recently typed or attached (tmux's "latest").
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import ctypes.util
import inspect
import logging
import os
import sys
import time
from collections import deque
from collections.abc import Awaitable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from pydantic import BaseModel, ValidationError

from polter import __version__
from polter.errors import PolterError, SessionError, WorktreeError
from polter.protocol import AgentState
from polter.session import protocol as wire
from polter.session.agents import PanePlan
from polter.session.call_table import CallTable
from polter.session.calls import SessionCalls
from polter.session.config import PaneSetup, SavedSession, save_session
from polter.session.launch import MAX_PANES, Launch, is_installed
from polter.session.notify import SessionAttention
from polter.session.panes import SessionPane
from polter.session.questions import Questions
from polter.session.registry import SessionFiles, SessionLock, SessionRecord
from polter.session.windows import Window, same_user
from polter.session.workspace import (
    AskClosed,
    AskRequested,
    AuditAppended,
    GatewayDown,
    GatewayUp,
    NetworkChanged,
    PaneChanged,
    RolesChanged,
    ServersChanged,
    StateReported,
    Workspace,
    WorkspaceEvent,
)
from polter.session.worktree_host import WorktreeCalls, worktree_title
from polter.terminal.frames import StyleTable, encode_frame
from polter.terminal.hosted import TypingClock
from polter.terminal.launch import LaunchSpec

__all__ = ["SessionHost"]

logger = logging.getLogger(__name__)

STATE_INTERVAL: Final = 0.5
"""Seconds between readings of each agent's state from its screen."""
SAVE_EVERY: Final = 10
"""State readings between two looks at the panes' directories for ``--restore`` (and their worktrees' folders)."""
UNSEEN_NOTICES: Final = 20
"""Notices kept for the next window while none is attached (the newest)."""


class SessionHost(SessionCalls, WorktreeCalls, SessionAttention):
    """A session named ``name`` with the panes of ``launch`` (agent panes under roles) and ``specs``
    (plain programs). ``await start()`` takes the name and opens the socket; :meth:`run` opens the
    panes and serves until the session ends (:meth:`end`)."""

    def __init__(
        self,
        files: SessionFiles,
        launch: Launch | None = None,
        specs: list[LaunchSpec] | None = None,
        *,
        scrollback: int = 10_000,
        state_dir: Path | None = None,
    ) -> None:
        self.files = files
        self.launch = launch or Launch(plans=[])
        self.specs = list(specs or [])
        self.scrollback = scrollback
        self.workspace = Workspace(
            servers=self.launch.servers,
            servers_file=self.launch.servers_file,
            ask_timeout=self.launch.ask_timeout,
            backends=self.launch.backends,
            state_dir=state_dir,
            test_mode=self.launch.test_mode,
            egress_test_hosts=self.launch.egress_test_hosts,
        )
        self.panes: list[SessionPane] = []
        self.windows: set[Window] = set()
        self.layout: wire.LayoutMode = self.launch.layout
        self.active: str | None = None
        self.zoomed: str | None = None
        self.ready = False
        self.started_at = datetime.now(UTC)
        self.ended = asyncio.Event()
        self.end_reason = ""
        self._typing = TypingClock()
        self._styles = StyleTable()
        self._lock = SessionLock(files)
        self._server: asyncio.Server | None = None
        self._latest: Window | None = None
        self._numbers = 0
        self._tasks: set[asyncio.Task[Any]] = set()
        self._workspace_started = False
        self._ending = False
        self._saved: SavedSession | None = None
        self._unseen: deque[wire.Notice] = deque(maxlen=UNSEEN_NOTICES)
        """Notices given while no window was attached: the next window to attach gets them."""
        self.questions = Questions(self._broadcast, lambda: any(window.attached for window in self.windows))
        self._worktree_lock = asyncio.Lock()
        self._claimed: set[str] = set()
        """Branches of worktrees opened for panes that are not in the session yet."""
        self.calls = CallTable()
        self._register_calls()
        self._register_worktree_calls()
        self._init_attention()

    @property
    def name(self) -> str:
        return self.files.name

    @property
    def has_agents(self) -> bool:
        return bool(self.launch.plans) or self._workspace_started

    # -- lifecycle -------------------------------------------------------------------------------

    async def start(self) -> None:
        """Take the session's name and open its socket (raises :class:`SessionError` if the name is taken)."""
        self._lock.acquire()
        socket_path = self.files.socket
        socket_path.unlink(missing_ok=True)  # a socket left by a killed host (the lock said it is gone)
        old_umask = os.umask(0o177)
        try:
            self._server = await asyncio.start_unix_server(self._serve, path=str(socket_path), limit=wire.LINE_LIMIT)
        finally:
            os.umask(old_umask)
        os.chmod(socket_path, 0o600)
        self.files.write_record(
            SessionRecord(
                name=self.name,
                pid=os.getpid(),
                version=__version__,
                started=self.started_at,
                cwd=os.getcwd(),
                executable=sys.executable,
            )
        )
        self.workspace.subscribe(self._workspace_event)
        self._spawn(self._read_states(), "reading the agents' states")

    async def run(self) -> None:
        """Open the panes the session starts with, then serve until it ends."""
        try:
            await self.open_initial()
        except PolterError as exc:
            await self.end(f"the session could not start: {exc}", failed=True)
        await self.ended.wait()

    async def open_initial(self) -> None:
        if self.launch.plans:
            await self._start_workspace()
        for spec in self.specs:
            self._add_pane(SessionPane(self._new_id(), spec, **self._pane_options()))
        failed = []
        for plan in self.launch.plans:
            try:
                await self._open_plan(plan)
            except WorktreeError as exc:  # one pane's worktree: the others open all the same
                name = worktree_title(plan)
                failed.append(f"{name}: {exc}")
                self._notify(wire.Notice(text=str(exc), title=f"Pane {name} not opened", severity="error"))
        if failed and not self.panes:
            raise SessionError("no pane could open: " + "; ".join(failed))
        self.ready = True
        self._broadcast(wire.Ready(hint=self.launch.hint))
        self._save()

    async def _start_workspace(self) -> None:
        if not self._workspace_started:
            self._workspace_started = True
            await self.workspace.start()

    async def end(self, reason: str, *, failed: bool = False) -> None:
        """End the session: every program (SIGHUP, then SIGKILL after the grace period), the gateway,
        the socket; every window is told why."""
        if self._ending:
            await self.ended.wait()
            return
        self._ending = True
        self.end_reason = reason
        self.questions.close_all()
        self._save()
        await asyncio.gather(*(pane.terminal.close() for pane in self.panes), return_exceptions=True)
        for pane in self.panes:
            pane.terminal.dispose()
        for task in list(self._tasks):
            task.cancel()
        if self._workspace_started:
            await self.workspace.aclose()
        self._broadcast(wire.Ended(reason=reason, failed=failed))
        for window in list(self.windows):
            with contextlib.suppress(ConnectionError, RuntimeError):
                await asyncio.wait_for(window.writer.drain(), 2)
            window.writer.close()
        if self._server is not None:
            self._server.close()
        self.files.remove()
        self._lock.release()
        self.ended.set()

    def _spawn(self, coroutine: Awaitable[Any], what: str) -> asyncio.Task[Any]:
        async def run() -> Any:
            try:
                return await coroutine
            except asyncio.CancelledError:
                raise
            except Exception:
                logger.exception("%s failed", what)

        task = asyncio.ensure_future(run())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(lambda _task: close(coroutine))  # (cancelled before it ran: never awaited)
        return task

    # -- panes -------------------------------------------------------------------------------------

    def _new_id(self) -> str:
        self._numbers += 1
        return f"p{self._numbers}"

    def _pane_options(self) -> dict[str, Any]:
        return {
            "scrollback": self.scrollback,
            "typing": self._typing,
            "on_frame": self._frame,
            "on_change": self._pane_changed,
        }

    def pane(self, pane_id: str) -> SessionPane:
        for pane in self.panes:
            if pane.id == pane_id:
                return pane
        raise SessionError(f"no pane {pane_id} in session {self.name}")

    def _add_pane(self, pane: SessionPane, index: int | None = None) -> SessionPane:
        if len(self.panes) >= MAX_PANES:
            raise SessionError(f"a session has at most {MAX_PANES} panes")
        index = len(self.panes) if index is None else index
        self.panes.insert(index, pane)
        self._broadcast(wire.PaneAdded(pane=pane.state(), index=index))
        for window in self.windows:
            size = self._size_for(pane.id, window)
            if size is not None and window is self._latest:
                pane.resize(*size)
        return pane

    async def _open_plan(self, plan: PanePlan, index: int | None = None) -> SessionPane:
        await self._start_workspace()
        pane_id = self._new_id()
        opened = None
        if plan.setup.worktree:
            plan, opened = await self._open_worktree(plan)
            if self._ending:  # (while a window was asked about its setup command)
                self._release_worktree(opened)
                raise SessionError(f"session {self.name} is ending")
        try:
            agent, spec = await self.workspace.open(plan, pane_id=pane_id)
            pane = SessionPane(pane_id, spec, agent=agent, **self._pane_options())
            if opened is not None:
                self._track_worktree(pane, opened)
            self._add_pane(pane, index)
        finally:
            if opened is not None:
                self._release_worktree(opened)
        if pane.worktree is not None:
            pane.worktree.refresh()
        if agent.warnings:
            self._notify(wire.Notice(text="\n".join(agent.warnings), title=agent.title, severity="warning"))
        return pane

    def _frame(self, pane: SessionPane, dirty: set[int] | None) -> None:
        screen = pane.terminal.screen
        if screen is None:
            return
        for window in self.windows:
            if not window.attached:
                continue
            if window.stalled or window.behind:
                self._fall_behind(window, pane.id)
                continue
            window.send(wire.FrameEvent(pane=pane.id, frame=encode_frame(screen, dirty, self._styles, window.styles)))

    def _full_frame(self, window: Window, pane: SessionPane) -> None:
        screen = pane.terminal.screen
        if screen is not None:
            frame = encode_frame(screen, None, self._styles, window.styles)
            window.send(wire.FrameEvent(pane=pane.id, frame=frame))

    def _fall_behind(self, window: Window, pane_id: str) -> None:
        """Skip a stalled window's frames; once its socket drained, it gets each skipped pane whole."""
        window.behind.add(pane_id)
        if window._catching_up is None or window._catching_up.done():

            async def catch_up() -> None:
                with contextlib.suppress(ConnectionError):
                    await window.writer.drain()  # until the socket took all but a quarter of the limit
                behind, window.behind = window.behind, set()
                for pane in self.panes:
                    if pane.id in behind:
                        self._full_frame(window, pane)

            window._catching_up = self._spawn(catch_up(), "catching a window up")

    def _pane_changed(self, pane: SessionPane) -> None:
        if pane in self.panes:
            self._broadcast(wire.PaneUpdated(pane=pane.state()))

    async def _read_states(self) -> None:
        """Every half second: what each agent is doing, and the scrollback of quiet panes stored compactly
        (the memory that frees goes back to the system once every pane is done); every few seconds,
        the session as ``--restore`` would reopen it."""
        compacted = False
        ticks = 0
        while True:
            await asyncio.sleep(STATE_INTERVAL)
            ticks += 1
            if ticks % SAVE_EVERY == 0:
                self._save()  # a program's directory changes without telling anyone
                self._look_at_worktrees()
            left = 0
            for pane in self.panes:
                if pane.agent is not None:
                    self._attend(pane)
                if pane.worktree is not None and pane.agent_state is AgentState.IDLE:
                    pane.worktree.settled(pane.terminal.last_output)  # its figures, read in the background
                screen = pane.terminal.screen
                if screen is not None and time.monotonic() - pane.terminal.last_output > STATE_INTERVAL:
                    before = screen.compact_history(0)
                    left += screen.compact_history()
                    compacted = compacted or before > 0
            if compacted and not left:
                compacted = False
                release_memory()

    def _size_for(self, pane_id: str, window: Window) -> tuple[int, int] | None:
        return window.sizes.get(pane_id)

    def _make_latest(self, window: Window) -> None:
        """``window`` typed or attached: the panes take the sizes it gives them."""
        if self._latest is window:
            return
        self._latest = window
        for pane in self.panes:
            size = window.sizes.get(pane.id)
            if size is not None and size != pane.size:
                pane.resize(*size)

    def _save(self) -> None:
        """What ``polter --restore`` reopens: the layout and each agent pane's CLI, role, cwd and title.
        Written whenever that changes (directories are looked at every few seconds), so a killed host
        leaves it too."""
        if not self.ready:
            return
        setups = []
        for pane in self.panes:
            agent = pane.agent
            if agent is None:
                continue
            cwd = pane.terminal.working_directory() or agent.setup.cwd
            setups.append(
                PaneSetup(
                    adapter=agent.adapter.name,
                    role=agent.role,
                    title=agent.setup.title,
                    command=agent.setup.command,
                    **self._saved_worktree(pane, cwd),
                    notify=not pane.muted,
                )
            )
        session = SavedSession(layout=self.layout, panes=setups)
        if setups and session != self._saved:
            try:
                save_session(session)
            except OSError as exc:
                logger.warning("could not save the session for --restore: %s", exc)
                return
            self._saved = session

    # -- the workspace's events ----------------------------------------------------------------------

    def _workspace_event(self, event: WorkspaceEvent) -> None:
        match event:
            case AskRequested(ask=ask):
                self._broadcast(wire.AskEvent(ask=ask))
                self._attend_pane(ask.pane)
            case AskClosed(ask=ask):
                self._broadcast(wire.AskClosedEvent(ask=ask))
                self._attend_pane(ask.pane)
            case StateReported(agent=agent, report=report):
                self._reported(agent, report)
            case PaneChanged(agent=agent):
                for pane in self.panes:
                    if pane.agent is agent:
                        self._broadcast(wire.PaneUpdated(pane=pane.state()))
                self._save()
            case AuditAppended(row=row):
                self._broadcast(wire.AuditEvent(row=row))
            case RolesChanged(status=status):
                self._broadcast(wire.RolesEvent(status=status))
            case ServersChanged(report=report):
                self._broadcast(wire.ServersEvent(report=report))
            case GatewayDown(reason=reason):
                self._broadcast(wire.GatewayEvent(up=False, text=reason))
            case NetworkChanged(up=False, reason=reason):
                text = f"The panes have no network until Polter's egress proxy is back (restarting): {reason}"
                self._notify(wire.Notice(text=text, title="Network", severity="warning"))
            case NetworkChanged(up=True):
                self._notify(
                    wire.Notice(text="The panes' network is back (Polter's egress proxy restarted).", title="Network")
                )
            case GatewayUp(url=url, restarted=restarted):
                workspace = self.workspace
                self._broadcast(
                    wire.GatewayEvent(
                        up=True, text=url, restarted=restarted, roles=workspace.roles, servers=workspace.server_names
                    )
                )

    # -- windows -------------------------------------------------------------------------------------

    def _broadcast(self, message: BaseModel) -> None:
        for window in self.windows:
            if window.attached:
                window.send(message)

    def _notify(self, notice: wire.Notice) -> None:
        """Tell the windows; with none attached (a session that is starting, or detached), the next one."""
        if any(window.attached for window in self.windows):
            self._broadcast(notice)
        else:
            self._unseen.append(notice)

    def info(self) -> wire.SessionInfo:
        return wire.SessionInfo(
            name=self.name,
            pid=os.getpid(),
            version=__version__,
            protocol=wire.PROTOCOL_VERSION,
            started=self.started_at,
            cwd=os.getcwd(),
            panes=len(self.panes),
            running=sum(pane.terminal.running for pane in self.panes),
            clients=sum(window.attached for window in self.windows),
            executable=sys.executable,
        )

    def state(self) -> wire.SessionState:
        workspace = self.workspace
        registry = self.launch.registry
        adapters = [
            wire.AdapterChoice(name=adapter.name, display_name=adapter.display_name,
                               description=adapter.info.description)
            for adapter in (loaded.adapter for loaded in registry or ())
            if is_installed(adapter)
        ]  # fmt: skip
        return wire.SessionState(
            info=self.info(),
            layout=self.layout,
            prefix=self.launch.prefix,
            palette_key=self.launch.palette_key,
            panes=[pane.state() for pane in self.panes],
            active=self.active,
            zoomed=self.zoomed,
            ready=self.ready,
            asks=list(workspace.asks.values()),
            roles=workspace.roles,
            servers=list(workspace.server_names),
            adapters=adapters,
            agents=self.has_agents,
            notify_terminal=self.launch.notify.terminal,
        )

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        window = Window(reader, writer)
        try:
            if not same_user(writer):
                window.send(wire.Refused(reason="this session belongs to another user"))
                return
            self.windows.add(window)
            if not await self._handshake(window):
                return
            while line := await reader.readline():
                try:
                    message = wire.decode_client(line)
                except ValidationError as exc:
                    logger.warning("a window sent a message that is not Polter's protocol: %s", exc)
                    continue
                self._received(window, message)
        except (ConnectionError, asyncio.IncompleteReadError, ValueError):
            pass
        finally:
            self.windows.discard(window)
            if self._latest is window:
                self._latest = next((other for other in self.windows if other.attached), None)
                if self._latest is not None:
                    latest, self._latest = self._latest, None
                    self._make_latest(latest)
            writer.close()

    async def _handshake(self, window: Window) -> bool:
        try:
            line = await asyncio.wait_for(window.reader.readline(), 10)
            hello = wire.decode_client(line)
        except (TimeoutError, ValidationError, ValueError):
            window.send(wire.Refused(reason="not a Polter window (it did not say hello)"))
            return False
        if not isinstance(hello, wire.Hello):
            window.send(wire.Refused(reason="a window must say hello first"))
            return False
        if hello.protocol != wire.PROTOCOL_VERSION or hello.version != __version__:
            window.send(
                wire.Refused(
                    reason=f"session {self.name} runs Polter {__version__} (protocol {wire.PROTOCOL_VERSION}) and "
                    f"this is Polter {hello.version} (protocol {hello.protocol}): attach with the Polter that "
                    f"started it ({sys.executable} -m polter attach {self.name}), or end the session with "
                    f"`polter kill {self.name}`"
                )
            )
            return False
        if self._ending:
            window.send(wire.Refused(reason=f"session {self.name} is ending"))
            return False
        if not hello.attach:
            window.send(wire.Welcome(info=self.info()))
            return True
        window.attached = True
        window.send(wire.Welcome(info=self.info(), state=self.state()))
        for pane in self.panes:
            self._full_frame(window, pane)
        while self._unseen:
            window.send(self._unseen.popleft())
        for question in self.questions.window_attached():
            window.send(question)
        self._latest = window  # its sizes arrive next, and apply
        return True

    def _received(self, window: Window, message: wire.ClientMessage) -> None:
        match message:
            case wire.Call():
                self._spawn(self._call(window, message), f"the call {message.method}")
            case wire.ResizeInput(pane=pane_id, columns=columns, lines=lines):
                window.sizes[pane_id] = (columns, lines)
                pane = self._find(pane_id)
                if pane is not None and (window is self._latest or not pane.terminal.started):
                    pane.resize(columns, lines)
            case wire.KeyInput(pane=pane_id, key=key, character=character):
                if (pane := self._input_pane(window, pane_id)) is not None:
                    self._submit(pane, pane.key(key, character))
            case wire.PasteInput(pane=pane_id, text=text):
                if (pane := self._input_pane(window, pane_id)) is not None:
                    self._submit(pane, pane.paste(text))
            case wire.BytesInput(pane=pane_id, data=data):
                if (pane := self._input_pane(window, pane_id)) is not None:
                    pane.terminal.send(data.encode("latin-1"))
            case wire.FocusInput(pane=pane_id, focused=focused):
                if (pane := self._find(pane_id)) is not None:
                    pane.terminal.focus(focused)

    def _find(self, pane_id: str) -> SessionPane | None:
        return next((pane for pane in self.panes if pane.id == pane_id), None)

    def _input_pane(self, window: Window, pane_id: str) -> SessionPane | None:
        self._make_latest(window)
        return self._find(pane_id)

    def _submit(self, pane: SessionPane, lines: list[str]) -> None:
        if pane.agent is not None and not pane.agent.closed:
            for line in lines:
                self.workspace.submit_line(pane.agent, line)

    async def _call(self, window: Window, call: wire.Call) -> None:
        window.send(await self.calls.answer(window, call))


def close(coroutine: Awaitable[Any]) -> None:
    if inspect.iscoroutine(coroutine):
        coroutine.close()


def release_memory() -> None:
    """Give the system back the heap pages freed since (glibc's ``malloc_trim``; elsewhere nothing):
    a flood's scrollback, once compacted, would otherwise stay resident, scattered among live objects."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        trim = libc.malloc_trim
    except (OSError, AttributeError):
        return
    trim(0)
