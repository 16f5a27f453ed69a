"""What a window and its session host say to each other over the session's Unix socket.

One JSON object per line, each a pydantic model told apart by its ``type``. A connection opens with
:class:`Hello` (the client's Polter and protocol version); the host answers :class:`Welcome` — with
the whole session when the client attaches — or :class:`Refused`. Then:

- window → host: input for a pane (:class:`KeyInput`, :class:`PasteInput`, :class:`BytesInput`,
  :class:`FocusInput`, :class:`ResizeInput`), never answered, and :class:`Call` (a method by name,
  with parameters: :mod:`polter.wire.methods` has one model for each), answered by a :class:`Reply`
  with the same ``id``;
- host → window: :class:`FrameEvent` (rows of a pane's screen that changed) and the events that keep
  a window's picture of the session current (panes, asks, audit rows, roles, notices, the end), and
  :class:`Question`, a yes/no question for the human, answered with the call ``answer_question``, and
  :class:`AttentionNotice` when the window should tell its terminal that a pane needs the human.

Nothing here is about how either side draws or runs things: the models are the contract.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from polter import __version__
from polter.gateway.models import AskInfo, AuditRow, ElicitationInfo, Phase, RolesStatus, ServersReload
from polter.protocol import AgentState
from polter.wire.frames import ScreenFrame
from polter.wire.options import LayoutMode, TerminalNotification
from polter.wire.relay import LINE_LIMIT, PROTOCOL_VERSION
from polter.worktrees import Worktree, WorktreeStatus

__all__ = [
    "LINE_LIMIT",
    "PROTOCOL_VERSION",
    "AdapterChoice",
    "AgentView",
    "AttentionNotice",
    "Call",
    "ClientMessage",
    "HostMessage",
    "PaneState",
    "PaneWorktreeInfo",
    "Question",
    "QuestionClosed",
    "RelayGreeting",
    "Reply",
    "SessionInfo",
    "SessionList",
    "SessionEvent",
    "SessionState",
    "Started",
    "WorktreeView",
    "decode_client",
    "decode_host",
    "encode",
]


StatusKind = Literal["starting", "running", "exited", "failed"]


class _Message(BaseModel):
    model_config = ConfigDict(extra="forbid")


# -- the session and its panes, as a window shows them ----------------------------------------------


class SessionInfo(_Message):
    """What ``polter ls`` shows of a session."""

    name: str
    pid: int
    version: str
    protocol: int
    started: datetime
    cwd: str
    panes: int
    running: int = Field(description="panes whose program runs")
    clients: int = Field(description="windows attached now")
    executable: str = Field(description="the Python that runs the host (a window of another Polter can use it)")


Handoffs = Literal["on", "muted", "forbidden"]
"""What the human lets other agents do with a pane (docs/team.md): the palette's hand-off commands."""


class AgentView(_Message):
    """An agent pane's side of the gateway, for its header and the palette."""

    adapter: str
    display_name: str
    description: str = ""
    resumes: bool = Field(default=False, description="its CLI continues a conversation when restarted to apply a role")
    why: str = ""
    reason: str = ""
    title: str
    role: str
    role_found: bool = True
    phase: Phase | None = None
    pending_asks: int = 0
    restart_needed: str | None = None
    state: AgentState | None = None
    state_source: Literal["ask", "cli", "screen"] | None = Field(
        default=None, description="where the state came from: a pending ask, the CLI's own hooks, or its screen"
    )
    state_event: str = Field(default="", description="the CLI's hook event behind the state (Stop, Notification...)")
    state_why: str = Field(default="", description="one line: why it waits, or what it said last")
    waiting_since: datetime | None = Field(
        default=None, description="when its wait for the human settled (None: it does not wait)"
    )
    muted: bool = Field(default=False, description="no notifications for this pane (notify = false, or the palette)")
    warnings: list[str] = Field(default_factory=list)
    task_from: str | None = Field(
        default=None, description="the pane whose agent gave it its current task (docs/team.md)"
    )
    task_from_label: str | None = Field(default=None, description="that pane as its message was marked: pane 1 · coder")
    queued: int = Field(default=0, description="messages of other agents waiting to be typed into it")
    handoffs: Handoffs = Field(
        default="on", description="on; muted: messages to it wait until unmuted; forbidden: none to it or from it"
    )


class WorktreeView(_Message):
    """A pane's own git worktree (docs/worktrees.md): for its header, and for the palette's review, merge
    and remove, which the window runs itself with :mod:`polter.worktrees` (the repository is on its machine)."""

    worktree: Worktree = Field(description="Polter's record of it: path, branch, base, repository")
    status: WorktreeStatus | None = Field(
        default=None, description="the change against its base, read when the agent last went idle"
    )
    missing: bool = Field(default=False, description="its folder was deleted by hand (the branch keeps the commits)")
    problem: str | None = Field(default=None, description="why the change could not be read")

    def summary(self) -> str:
        """The header's text: ``polter/coder +120 -8 · 5 files`` (``· folder missing`` when so)."""
        if self.missing:
            return f"{self.worktree.branch} · folder missing"
        if self.status is None:
            return self.worktree.branch
        return self.status.summary()


class PaneState(_Message):
    """One pane as every window shows it (its header); the screen travels in frames."""

    id: str
    title: str = Field(description="the program's title, else the launch's, else the command name")
    status: str = Field(description="starting, running, exited 0, killed by SIGKILL, failed to start")
    status_kind: StatusKind
    spawn_error: str | None = None
    agent: AgentView | None = None
    worktree: WorktreeView | None = Field(default=None, description="the pane runs in a git worktree of its own")

    @property
    def running(self) -> bool:
        return self.status_kind == "running"


class PaneWorktreeInfo(_Message):
    """A pane of the session that runs in its own worktree (the ``worktrees`` call: ``polter worktree``)."""

    pane: str
    number: int = Field(description="its place among the session's panes, from 1 (as the window numbers them)")
    title: str
    running: bool
    worktree: WorktreeView


class AdapterChoice(_Message):
    """A CLI the palette may open a new pane with."""

    name: str
    display_name: str
    description: str = ""


class SessionState(_Message):
    """Everything a window needs to show the session when it attaches (screens follow as frames)."""

    info: SessionInfo
    layout: LayoutMode = "grid"
    prefix: str = "ctrl+b"
    palette_key: str | None = None
    panes: list[PaneState]
    active: str | None = Field(default=None, description="the pane the last window had the focus in")
    zoomed: str | None = None
    ready: bool = Field(description="the panes it starts with are open (else more arrive as PaneAdded)")
    asks: list[AskInfo] = Field(default_factory=list)
    elicitations: list[ElicitationInfo] = Field(
        default_factory=list, description="servers' forms waiting for the human (shown as ElicitationEvent)"
    )
    questions: list[Question] = Field(
        default_factory=list, description="the host's questions waiting for an answer (shown as Question events)"
    )
    roles: RolesStatus = RolesStatus(names=[], problems=[])
    servers: list[str] = Field(default_factory=list)
    adapters: list[AdapterChoice] = Field(default_factory=list)
    agents: bool = Field(default=False, description="the session manages agent panes (it has a gateway)")
    notify_terminal: TerminalNotification = Field(
        default="auto", description="how windows tell their terminal that a pane needs the human (notify_terminal)"
    )


# -- the handshake ------------------------------------------------------------------------------------


class Hello(_Message):
    type: Literal["hello"] = "hello"
    protocol: int = PROTOCOL_VERSION
    version: str = __version__
    attach: bool = Field(default=True, description="show the session (else only calls: ls, kill)")


class Welcome(_Message):
    type: Literal["welcome"] = "welcome"
    info: SessionInfo
    state: SessionState | None = None


class Refused(_Message):
    type: Literal["refused"] = "refused"
    reason: str
    missing: bool = Field(default=False, description="no session of that name runs (a reconnecting window stops)")


# -- the relay: a session on another host, through ``ssh HOST polter relay ...`` ----------------------


class RelayGreeting(BaseModel):
    """The relay's first line, before anything else: which Polter answers on the host (a window of another
    version is told what to install before anything happens there). Written by the relay without pydantic
    (:func:`polter.wire.relay.greeting_line`); read by windows of every version, so a field added later is
    ignored, not refused."""

    model_config = ConfigDict(extra="ignore")

    type: Literal["relay"] = "relay"
    version: str = __version__
    protocol: int = PROTOCOL_VERSION
    clone: str | None = Field(default=None, description="the clone of Polter's repository it runs from")
    commit: str | None = Field(default=None, description="that clone's commit")


class SessionList(_Message):
    """``polter relay --list``: the host's live sessions, and notes on what it found dead there."""

    type: Literal["sessions"] = "sessions"
    sessions: list[SessionInfo]
    notes: list[str] = Field(default_factory=list)


class Started(_Message):
    """``polter relay --start``: the session started on the host, by name (attach to it next)."""

    type: Literal["started"] = "started"
    name: str


# -- window → host --------------------------------------------------------------------------------------


class KeyInput(_Message):
    type: Literal["key"] = "key"
    pane: str
    key: str
    character: str | None = None


class PasteInput(_Message):
    type: Literal["paste"] = "paste"
    pane: str
    text: str


class BytesInput(_Message):
    """Bytes the window encoded itself (mouse reports)."""

    type: Literal["bytes"] = "bytes"
    pane: str
    data: str = Field(description="latin-1: one character per byte")


class FocusInput(_Message):
    type: Literal["focus"] = "focus"
    pane: str
    focused: bool


class ResizeInput(_Message):
    """The pane's size in this window; the latest window to resize or type sets a pane's size."""

    type: Literal["resize"] = "resize"
    pane: str
    columns: int = Field(ge=1)
    lines: int = Field(ge=1)


class Call(_Message):
    type: Literal["call"] = "call"
    id: int
    method: str
    params: dict[str, Any] = Field(default_factory=dict)


ClientMessage = Annotated[
    Hello | KeyInput | PasteInput | BytesInput | FocusInput | ResizeInput | Call, Field(discriminator="type")
]

# -- host → window --------------------------------------------------------------------------------------


class Reply(_Message):
    type: Literal["reply"] = "reply"
    id: int
    result: Any = None
    error: str | None = None


class FrameEvent(_Message):
    type: Literal["frame"] = "frame"
    pane: str
    frame: ScreenFrame


class PaneAdded(_Message):
    type: Literal["pane_added"] = "pane_added"
    pane: PaneState
    index: int = Field(description="its place among the panes (0 first)")


class PaneUpdated(_Message):
    type: Literal["pane"] = "pane"
    pane: PaneState


class PaneRemoved(_Message):
    type: Literal["pane_removed"] = "pane_removed"
    pane: str


class Ready(_Message):
    """The panes the session started with are all open."""

    type: Literal["ready"] = "ready"
    hint: str | None = None


class AskEvent(_Message):
    type: Literal["ask"] = "ask"
    ask: AskInfo


class AskClosedEvent(_Message):
    type: Literal["ask_closed"] = "ask_closed"
    ask: AskInfo


class ElicitationEvent(_Message):
    """A server asks the human to fill in a form (its pane's CLI could not show it): show it over the pane, and
    answer with the call ``answer_elicitation`` (``id``, ``action``, ``content``)."""

    type: Literal["elicitation"] = "elicitation"
    elicitation: ElicitationInfo


class ElicitationClosedEvent(_Message):
    """An elicitation is over (answered, in this window or another, or not in time): its form goes."""

    type: Literal["elicitation_closed"] = "elicitation_closed"
    elicitation: ElicitationInfo


class AuditEvent(_Message):
    type: Literal["audit"] = "audit"
    row: AuditRow


class RolesEvent(_Message):
    type: Literal["roles"] = "roles"
    status: RolesStatus


class ServersEvent(_Message):
    type: Literal["servers"] = "servers"
    report: ServersReload


class GatewayChanged(_Message):
    """The gateway died (``up`` false, ``text`` says why) or is up (``text``: its URL; ``restarted``
    after it died), with the roles and servers it has."""

    type: Literal["gateway"] = "gateway"
    up: bool
    text: str
    restarted: bool = False
    roles: RolesStatus | None = None
    servers: list[str] = Field(default_factory=list)


class LayoutEvent(_Message):
    type: Literal["layout"] = "layout"
    layout: LayoutMode


class Notice(_Message):
    """Something for the human to read (a pane's warnings, a problem the host met)."""

    type: Literal["notice"] = "notice"
    text: str
    title: str | None = None
    severity: Literal["information", "warning", "error"] = "information"


class Question(_Message):
    """A yes/no question for the human (may a project's setup command run?). Every attached window shows
    it, and one that attaches while it waits; the first ``answer_question`` call decides it."""

    type: Literal["question"] = "question"
    id: str
    title: str = Field(description="what it is about, in a few words")
    text: str = Field(description="the question")
    detail: str = ""
    yes: str = "Yes"
    no: str = "No"


class QuestionClosed(_Message):
    """A question is decided (answered in some window, or nobody answered in time: ``answer`` None)."""

    type: Literal["question_closed"] = "question_closed"
    id: str
    answer: bool | None = None


class AttentionNotice(_Message):
    """A pane needs the human and this window is not where they look at it: tell the outer terminal (OSC 9,
    777, 99 or the bell). ``number`` is the pane's place (1 first)."""

    type: Literal["attention"] = "attention"
    pane: str
    number: int
    title: str
    role: str = ""
    event: Literal["waiting", "done"]
    message: str = ""

    def headline(self) -> str:
        """``Polter: pane 2 (reviewer shell, reviewer) waits for you`` (a notification's title; ``message`` is
        its body)."""
        role = f", {self.role}" if self.role and self.role != self.title else ""
        what = "waits for you" if self.event == "waiting" else "is done"
        return f"Polter: pane {self.number} ({self.title}{role}) {what}"


class Ended(_Message):
    """The session is over (every window closes): quit, killed, its last pane closed, or failed to start."""

    type: Literal["ended"] = "ended"
    reason: str
    failed: bool = False


SessionEvent = (
    PaneAdded
    | PaneUpdated
    | PaneRemoved
    | Ready
    | AskEvent
    | AskClosedEvent
    | ElicitationEvent
    | ElicitationClosedEvent
    | AuditEvent
    | RolesEvent
    | ServersEvent
    | GatewayChanged
    | LayoutEvent
    | Notice
    | Question
    | QuestionClosed
    | AttentionNotice
    | Ended
)
"""What the host tells every attached window about the session (everything it sends but the handshake, replies
and frames); a window hands each on to its screens as it came, the one type of each event on both sides."""

HostMessage = Annotated[
    Welcome | Refused | Reply | FrameEvent | SessionEvent,
    Field(discriminator="type"),
]


_CLIENT: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)
_HOST: TypeAdapter[HostMessage] = TypeAdapter(HostMessage)


def encode(message: BaseModel) -> bytes:
    """A message as one line of JSON."""
    return message.model_dump_json().encode() + b"\n"


def decode_client(line: bytes) -> ClientMessage:
    """A window's message (raises pydantic's ``ValidationError`` for anything else)."""
    return _CLIENT.validate_json(line)


def decode_host(line: bytes) -> HostMessage:
    return _HOST.validate_json(line)
