"""The session as a window sees it: its panes, asks, roles and audit, kept current from the host's events.

:class:`RemoteSession` is the app's one link to its session host. It takes in the host's events (the models of
:mod:`polter.wire.messages`), keeps what the screens read (the panes in order, the pending asks, the
roles), posts each event on to the screens that subscribed as a :class:`RemoteSession.Event` carrying the
event as it came, and offers the actions as coroutines that call the host. Each pane's screen is a
:class:`~polter.window.mirror.MirrorScreen` fed by frames; :class:`RemoteTerminal` is what the pane's widget
draws and types into.

An ask arrives as :class:`RemoteSession.AskRequested` carrying a future; whoever shows it resolves the
future with the human's answer and the session sends it to the host (which is where it is decided).
A question of the host's own (may a project's setup command run?) arrives as a ``Question`` event, is answered
with :meth:`RemoteSession.answer_question`, and is over (``QuestionClosed``) when any window answered it or
it timed out.

A session on another host is reached through ``ssh HOST polter relay NAME`` (:mod:`polter.wire.ssh`). When
that connection drops, the view says so (:class:`RemoteSession.Reconnecting`), tries again with backoff
(:mod:`polter.window.reconnection`) and, once attached again, takes in the session as it is now (panes opened or closed
meanwhile, asks that came or went; every screen whole again) and says :class:`RemoteSession.Reconnected`. The
session on the host never notices more than a window that left and came back.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import deque
from typing import Final

from pydantic import BaseModel
from textual.message import Message

from polter.errors import PolterError
from polter.gateway.models import AskAnswer, AskInfo, AuditRow, Capabilities, ElicitationReply, Phase, RolesStatus
from polter.tasks import BackgroundTasks
from polter.terminal.keys import encode_key
from polter.window.mirror import MirrorScreen
from polter.window.reconnection import Reconnection
from polter.window.remote_asks import PendingAsks
from polter.window.session_messages import SessionMessages
from polter.window.terminal_source import FrameSink
from polter.wire import messages as wire
from polter.wire import methods
from polter.wire.client import SessionClient
from polter.wire.frames import ScreenFrame
from polter.wire.registry import SessionFiles
from polter.wire.ssh import RelayLink, SshTarget
from polter.wire.ssh import connect as connect_over_ssh

__all__ = ["AUDIT_KEPT", "RemotePane", "RemoteSession", "RemoteTerminal", "SessionTarget"]

logger = logging.getLogger(__name__)

AUDIT_KEPT: Final = 5000
"""Audit rows a window keeps for its audit screen (the gateway's SQLite log keeps everything)."""

SessionTarget = SessionFiles | SshTarget
"""A session on this machine (its files), or on another host (reached over ssh)."""


class RemoteTerminal:
    """A pane's screen and keyboard as its widget sees them (a :class:`TerminalSource`): frames from the
    host go into a mirror of the screen, the widget's input goes to the host."""

    def __init__(self, pane: RemotePane) -> None:
        self._pane = pane
        self.screen: MirrorScreen | None = None
        self._sink: FrameSink | None = None
        self._size: tuple[int, int] | None = None

    @property
    def running(self) -> bool:
        """Not ended: input typed while the program is starting goes to the host, which passes it on as
        soon as the program runs (a pane that just opened must not lose the first keys)."""
        return self._pane.state.status_kind in ("starting", "running")

    def attach(self, sink: FrameSink | None) -> None:
        self._sink = sink
        if sink is None:
            self._size = None  # a new view sends its size again

    def frame(self, frame: ScreenFrame) -> None:
        if self.screen is None:
            self.screen = MirrorScreen(frame.columns, frame.lines, fetch=self._fetch)
        dirty = self.screen.apply(frame)
        if self._sink is not None:
            self._sink.frame(dirty)

    def _fetch(self, first: int, count: int) -> None:
        self._pane.session.tasks.run(self._history(first, count), "fetching scrollback")

    async def _history(self, first: int, count: int) -> None:
        rows = await self._pane.session.client.call(methods.HistoryParams(pane=self._pane.id, first=first, count=count))
        if rows is None or self.screen is None:
            return
        if self.screen.apply_history(rows) and self._sink is not None:
            self._sink.frame(None)

    def resize(self, columns: int, lines: int) -> None:
        if (columns, lines) != self._size:
            self._size = (columns, lines)
            self._send(wire.ResizeInput(pane=self._pane.id, columns=columns, lines=lines))

    def resend_size(self) -> None:
        """Tell the host this window's size again (it becomes the size the panes take)."""
        if self._size is not None:
            self._send(wire.ResizeInput(pane=self._pane.id, columns=self._size[0], lines=self._size[1]))

    def key(self, key: str, character: str | None) -> bool:
        """Send a key; whether it is one the program can get (the host encodes it)."""
        application = self.screen is not None and self.screen.application_cursor_keys
        if encode_key(key, application_cursor=application) is None and not (character and character.isprintable()):
            return False
        self._send(wire.KeyInput(pane=self._pane.id, key=key, character=character))
        return True

    def paste(self, text: str) -> bool:
        self._send(wire.PasteInput(pane=self._pane.id, text=text))
        return True

    def send(self, data: bytes) -> bool:
        if not self.running:
            return False
        self._send(wire.BytesInput(pane=self._pane.id, data=data.decode("latin-1")))
        return True

    def focus(self, focused: bool) -> None:
        self._send(wire.FocusInput(pane=self._pane.id, focused=focused))

    def _send(self, message: BaseModel) -> None:
        self._pane.session.client.send(message)


class RemotePane:
    """One pane of the session: its header's state (:class:`~polter.wire.messages.PaneState`) and its screen."""

    def __init__(self, session: RemoteSession, state: wire.PaneState) -> None:
        self.session = session
        self.state = state
        self.terminal = RemoteTerminal(self)

    @property
    def id(self) -> str:
        return self.state.id

    @property
    def agent(self) -> wire.AgentView | None:
        return self.state.agent

    @property
    def worktree(self) -> wire.WorktreeView | None:
        """The git worktree of its own the pane runs in, if any."""
        return self.state.worktree


class RemoteSession:
    """The app's view of its session. Create with :meth:`connect` inside the app's event loop. Its parts: who
    hears its messages (:attr:`messages`), the asks waiting for the human (:attr:`asks`), and for a session on
    another host, the reconnection when the link drops (:attr:`reconnection`)."""

    class Event(Message):
        """What the host told every window about the session (a :data:`~polter.wire.messages.SessionEvent`,
        as it came), once this view of the session took it in: its panes, asks and roles are current. Asks
        come as :class:`AskRequested` instead; an audit row, a question's end and an ask's end only once,
        and the gateway only when it died or came back."""

        def __init__(self, event: wire.SessionEvent) -> None:
            super().__init__()
            self.event = event

    class AskRequested(Message):
        """A call waits for the human. Resolve ``future`` with the answer; leave it to answer later."""

        def __init__(self, ask: AskInfo, future: asyncio.Future[AskAnswer]) -> None:
            super().__init__()
            self.ask, self.future = ask, future

    class Lost(Message):
        """This window lost the session: the connection broke (the session may run on)."""

        def __init__(self, reason: str) -> None:
            super().__init__()
            self.reason = reason

    class Reconnecting(Message):
        """The connection to a session on another host broke (``reason``); try ``attempt`` comes in ``delay`` s."""

        def __init__(self, reason: str, attempt: int, delay: float) -> None:
            super().__init__()
            self.reason, self.attempt, self.delay = reason, attempt, delay

    class Reconnected(Message):
        """Attached again after :class:`Reconnecting`: the session's panes and asks are current again.
        ``questions_gone``: the host's questions shown here that were decided meanwhile (in another window, or
        nobody answered in time)."""

        def __init__(self, questions_gone: list[wire.Question]) -> None:
            super().__init__()
            self.questions_gone = questions_gone

    def __init__(self, target: SessionTarget) -> None:
        self.target = target
        self.messages = SessionMessages()
        self.client: SessionClient  # set by connect()
        self.panes: list[RemotePane] = []
        self.asks = PendingAsks(self)
        self.questions: dict[str, wire.Question] = {}
        """The host's questions that wait for an answer, by id."""
        self.roles = RolesStatus(names=[], problems=[])
        self.server_names: list[str] = []
        self.adapters: list[wire.AdapterChoice] = []
        self.audit_rows: deque[AuditRow] = deque(maxlen=AUDIT_KEPT)
        self.info: wire.SessionInfo | None = None
        self.ready = False
        self.agents = False
        self.notify_terminal: wire.TerminalNotification = "auto"
        """How this window tells its terminal that a pane needs the human (``notify_terminal``)."""
        self.ended = False
        """The session ended, or this window lost it."""
        self.tasks = BackgroundTasks(logger)
        self.reconnection = Reconnection(self)
        self.leaving = False
        """This window detaches or ends the session: a closed connection is no loss."""

    @classmethod
    async def connect(
        cls, target: SessionTarget, client: SessionClient | None = None, *, link: RelayLink | None = None
    ) -> RemoteSession:
        """Attach to the session ``target`` names (``client``: a connection to it made already, which this view
        takes over; ``link``: the ssh to it, started already); its messages wait for the first subscriber of
        :attr:`messages`."""
        session = cls(target)
        if client is not None:
            client.on_event, client.on_lost = session.take_event, session._lost
            session.client = client
        else:
            session.client = await session.open_client(link)
        if isinstance(target, SshTarget) and target.name is None:  # reconnections go to this one
            session.target = SshTarget(target.host, session.client.welcome.info.name)
        session._take(session.client.state)
        return session

    async def open_client(self, link: RelayLink | None = None) -> SessionClient:
        """A new connection to the session, attached (``link``: its ssh, started already)."""
        if isinstance(self.target, SshTarget):
            return await connect_over_ssh(self.target, on_event=self.take_event, on_lost=self._lost, link=link)
        return await SessionClient.connect(self.target, on_event=self.take_event, on_lost=self._lost)

    @property
    def ssh_host(self) -> str | None:
        """The machine the session runs on, as ssh knows it, when it is another one."""
        return self.target.host if isinstance(self.target, SshTarget) else None

    def _take(self, state: wire.SessionState) -> None:
        self.info = state.info
        self.panes = [RemotePane(self, pane) for pane in state.panes]
        self.roles = state.roles
        self.server_names = state.servers
        self.adapters = state.adapters
        self.ready = state.ready
        self.agents = state.agents
        self.notify_terminal = state.notify_terminal
        for ask in state.asks:
            self.asks.arrived(ask)
        for question in state.questions:
            self.take_event(question)
        for elicitation in state.elicitations:  # shown as if it arrived now
            self.messages.post(self.Event(wire.ElicitationEvent(elicitation=elicitation)))
        self.tasks.run(self._catch_up_audit(), "reading the audit log")

    @property
    def name(self) -> str:
        """The session's name, ``HOST:NAME`` for one on another host (what ``polter attach`` takes)."""
        name = self.info.name if self.info is not None else ""
        return f"{self.ssh_host}:{name}" if self.ssh_host else name

    def pane(self, pane_id: str) -> RemotePane | None:
        return next((pane for pane in self.panes if pane.id == pane_id), None)

    # -- events ----------------------------------------------------------------------------------

    def take_event(self, message: BaseModel) -> None:
        """Take in what the host sent; tell the screens what they need to hear."""
        match message:
            case wire.FrameEvent(pane=pane_id, frame=frame):
                pane = self.pane(pane_id)
                if pane is not None:
                    pane.terminal.frame(frame)
                return
            case wire.AskEvent(ask=ask):
                self.asks.arrived(ask)
                return
            case wire.AskClosedEvent(ask=ask):
                if not self.asks.over(ask):
                    return
            case wire.PaneUpdated(pane=state):
                pane = self.pane(state.id)
                if pane is None:
                    return
                pane.state = state
            case wire.PaneAdded(pane=state, index=index):
                self.panes.insert(index, RemotePane(self, state))
            case wire.PaneRemoved(pane=pane_id):
                pane = self.pane(pane_id)
                if pane is None:
                    return
                self.panes.remove(pane)
            case wire.Ready():
                self.ready = True
            case wire.AuditEvent(row=row):
                if self.audit_rows and (row.id or 0) <= (self.audit_rows[-1].id or 0):
                    return
                self.audit_rows.append(row)
            case wire.RolesEvent(status=status):
                self.roles = status
            case wire.ServersEvent(report=report):
                if report.applied:
                    self.server_names = [*report.unchanged, *report.reconfigured, *report.added]
            case wire.GatewayChanged(up=up, restarted=restarted, roles=roles, servers=servers):
                if up:
                    self.roles = roles or self.roles
                    self.server_names = servers
                if up and not restarted:
                    return
            case wire.Question():
                if message.id in self.questions:
                    return
                self.questions[message.id] = message
                self.messages.post(self.Event(message), first_only=True)  # one dialog
                return
            case wire.QuestionClosed(id=question_id):
                if self.questions.pop(question_id, None) is None:
                    return
            case wire.Ended():
                self.ended = True
            case (
                wire.LayoutEvent()
                | wire.Notice()
                | wire.AttentionNotice()
                | wire.ElicitationEvent()
                | wire.ElicitationClosedEvent()
            ):
                pass
            case _:
                return
        self.messages.post(self.Event(message))

    def _lost(self, reason: str) -> None:
        if self.ended or self.leaving:  # (the host closes the connection after it said the session ended)
            return
        if self.ssh_host is not None:
            self.reconnection.start(reason)
            return
        self.ended = True
        self.messages.post(self.Lost(reason))

    def attached_again(self, client: SessionClient) -> None:
        """Attached again after the link dropped: take in the session as it is now, through the events that would
        have said so, then say :class:`Reconnected`."""
        self.client = client
        state = client.state
        self.info = state.info
        known = {pane.id for pane in self.panes}
        now = {pane.id for pane in state.panes}
        for pane_id in known - now:
            self.take_event(wire.PaneRemoved(pane=pane_id))
        for index, pane_state in enumerate(state.panes):
            if pane_state.id in known:
                self.take_event(wire.PaneUpdated(pane=pane_state))
            else:
                self.take_event(wire.PaneAdded(pane=pane_state, index=index))
        for pane in self.panes:
            pane.terminal.resend_size()
        self.asks.attached_again(state.asks)
        waiting = {question.id for question in state.questions}
        gone = [question for question in self.questions.values() if question.id not in waiting]
        for question in gone:
            del self.questions[question.id]
        if state.roles != self.roles:
            self.take_event(wire.RolesEvent(status=state.roles))
        self.server_names = state.servers
        self.adapters = state.adapters
        if state.ready and not self.ready:
            self.take_event(wire.Ready())
        self.tasks.run(self._catch_up_audit(), "reading the audit log")  # the rows logged meanwhile
        self.messages.post(self.Reconnected(gone))
        for question in state.questions:  # after: the dialogs of those gone go first
            self.take_event(question)

    async def _catch_up_audit(self) -> None:
        for row in await self.client.call(methods.AuditParams(after=0)):
            if not self.audit_rows or (row.id or 0) > (self.audit_rows[-1].id or 0):
                self.audit_rows.append(row)

    # -- actions ---------------------------------------------------------------------------------

    async def open(self, how: methods.OpenParams) -> str:
        """Open a pane (see :class:`~polter.wire.methods.OpenParams`); its id (it arrives as PaneAdded)."""
        return await self.client.call(how)

    def answer_elicitation(self, elicitation_id: str, reply: ElicitationReply) -> None:
        """Answer a server's form (the first answer from any window counts)."""
        call = methods.AnswerElicitationParams(id=elicitation_id, reply=reply)
        self.tasks.run(self.client.call(call), "answering a server's form")

    def answer_question(self, question_id: str, answer: bool) -> None:
        """Answer a question of the host's (the first answer from any window decides it)."""
        if self.questions.pop(question_id, None) is not None:
            call = methods.AnswerQuestionParams(id=question_id, answer=answer)
            self.tasks.run(self.client.call(call), "answering a question")

    async def refresh_worktree(self, pane: RemotePane) -> None:
        """Have the host read the pane's worktree figures again (after a merge or a commit from here)."""
        await self.client.call(methods.RefreshWorktreeParams(pane=pane.id))

    async def recreate_worktree(self, pane: RemotePane, *, restart: bool = True) -> None:
        """Have the host make the pane's deleted worktree folder again, then restart the pane in it."""
        pane.state = await self.client.call(methods.RecreateWorktreeParams(pane=pane.id, restart=restart))

    async def close(self, pane: RemotePane) -> None:
        await self.client.call(methods.CloseParams(pane=pane.id))

    async def restart(self, pane: RemotePane) -> None:
        await self.client.call(methods.RestartParams(pane=pane.id))

    async def set_role(self, pane: RemotePane, role: str) -> wire.PaneState:
        state = await self.client.call(methods.SetRoleParams(pane=pane.id, role=role))
        pane.state = state
        return state

    async def set_phase(self, pane: RemotePane, phase: Phase) -> None:
        await self.client.call(methods.SetPhaseParams(pane=pane.id, phase=phase))

    async def reload_roles(self) -> RolesStatus:
        self.roles = await self.client.call(methods.ReloadRolesParams())
        return self.roles

    async def capabilities(self, pane: RemotePane) -> Capabilities:
        return await self.client.call(methods.CapabilitiesParams(pane=pane.id))

    def set_layout(self, layout: wire.LayoutMode) -> None:
        self.tasks.run(self.client.call(methods.LayoutParams(layout=layout)), "changing the layout")

    def set_view(self, active: str | None, zoomed: str | None) -> None:
        self.tasks.run(self.client.call(methods.ViewParams(active=active, zoomed=zoomed)), "remembering the focus")

    def set_looking(self, pane: str | None, focused: bool, *, notifies: bool = False) -> None:
        """Tell the host which pane this window shows focused, and whether its terminal has the focus: that pane
        needs no notification while the human looks at it. ``notifies``: the terminal raises desktop notifications
        itself (else the host sends one while the terminal is in the background)."""
        self.tasks.run(
            self.client.call(methods.LookingParams(pane=pane, focused=focused, notifies=notifies)),
            "telling the host where the human looks",
        )

    async def send_to_panes(self, panes: list[str], text: str) -> list[str]:
        """The human's words typed into ``panes`` (ids or numbers) and submitted; the panes typed into."""
        return await self.client.call(methods.SendParams(panes=panes, text=text))

    async def set_handoffs(self, pane: RemotePane, mode: wire.Handoffs) -> wire.PaneState:
        state = await self.client.call(methods.HandoffsParams(pane=pane.id, mode=mode))
        pane.state = state
        return state

    async def set_muted(self, pane: RemotePane, muted: bool) -> wire.PaneState:
        state = await self.client.call(methods.MuteParams(pane=pane.id, muted=muted))
        pane.state = state
        return state

    async def end(self, reason: str = "quit from a window") -> None:
        """End the session: every program in it, and the gateway."""
        self.leaving = True
        with contextlib.suppress(PolterError):
            await self.client.call(methods.KillParams(reason=reason))
        await self.client.closed.wait()

    async def detach(self) -> None:
        """Leave the session running; this window stops showing it."""
        self.leaving = True
        self.tasks.cancel()
        await self.client.aclose()
