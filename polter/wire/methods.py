"""The calls a window (or ``polter ls``, ``kill``, ``worktree``) makes to its session host: one params model
and one result type per method.

A call travels as :class:`~polter.wire.messages.Call` (``method`` and ``params`` as JSON) and is answered
by a :class:`~polter.wire.messages.Reply` with the same id. Each class below is one method: its
``method`` is the name on the wire, its fields are the parameters, and the type it is parametrised with
(``CallParams[PaneState]``) is what the reply's ``result`` holds. :data:`METHODS` lists them all; the
host registers one handler for each (:class:`~polter.host.call_table.CallTable`) and
docs/architecture.md names the same list (a test compares the three). A new call is a class here, added to
:data:`METHODS`, and its handler where the part of the host that owns what it acts on registers its others.
"""

from __future__ import annotations

from typing import Any, ClassVar, Final, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter

from polter.gateway.models import AskAnswer, AuditRow, Capabilities, ElicitationReply, RolesStatus
from polter.protocol import ADAPTER_NAME, ROLE_NAME_PATTERN, Phase
from polter.wire.frames import HistoryRows
from polter.wire.messages import Handoffs, PaneState, PaneWorktreeInfo, SessionInfo
from polter.wire.options import LayoutMode

__all__ = [
    "METHODS",
    "AnswerElicitationParams",
    "AnswerParams",
    "AnswerQuestionParams",
    "AuditParams",
    "CallParams",
    "CapabilitiesParams",
    "CloseParams",
    "HistoryParams",
    "InfoParams",
    "KillParams",
    "LayoutParams",
    "LookingParams",
    "MuteParams",
    "OpenParams",
    "RecreateWorktreeParams",
    "RefreshWorktreeParams",
    "ReloadRolesParams",
    "RestartParams",
    "SetPhaseParams",
    "HandoffsParams",
    "SendParams",
    "SetRoleParams",
    "ViewParams",
    "WorktreesParams",
]

ResultT = TypeVar("ResultT")


class CallParams(BaseModel, Generic[ResultT]):
    """The parameters of one method; ``ResultT`` is what its reply carries. Subclasses set ``method``."""

    model_config = ConfigDict(extra="forbid")

    method: ClassVar[str]
    """The method's name on the wire."""
    result: ClassVar[TypeAdapter[Any]]
    """Validates and serialises the result (made from ``ResultT`` when the subclass is defined)."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        for base in cls.__mro__:
            metadata = getattr(base, "__pydantic_generic_metadata__", None)
            if metadata and metadata["origin"] is CallParams and metadata["args"]:
                cls.result = TypeAdapter(metadata["args"][0])
                return


class _PaneParams(BaseModel):
    pane: str = Field(description="the pane's id (``p1``...)")


# -- panes ----------------------------------------------------------------------------------------------


class OpenParams(CallParams[str]):
    """A new pane (its id is the result; it arrives as ``pane_added``): like pane ``like`` (its CLI and role, a
    shell beside a plain program; a worktree of its own beside a worktree pane), or ``adapter`` × ``role`` (in a
    worktree of its own with ``worktree``); in ``cwd``, else where ``like``'s program is."""

    method = "open"
    like: str | None = None
    adapter: str | None = Field(default=None, pattern=ADAPTER_NAME)
    role: str | None = Field(default=None, pattern=ROLE_NAME_PATTERN)
    cwd: str | None = None
    worktree: bool = False


class CloseParams(_PaneParams, CallParams[None]):
    """End the pane's program and forget the pane; the session ends with its last pane."""

    method = "close"


class RestartParams(_PaneParams, CallParams[None]):
    """Start the pane's program again (an agent pane's launch prepared afresh, under its current role)."""

    method = "restart"


class HistoryParams(_PaneParams, CallParams[HistoryRows | None]):
    """Scrollback rows ``first`` … ``first + count - 1`` of a pane (None: it has no screen yet)."""

    method = "history"
    first: int
    count: int


class LayoutParams(CallParams[None]):
    """The session's layout (the other windows follow; ``--restore`` keeps it)."""

    method = "layout"
    layout: LayoutMode


class ViewParams(CallParams[None]):
    """Which pane this window focuses and zooms: the next window to attach starts there."""

    method = "view"
    active: str | None = None
    zoomed: str | None = None


# -- agents under roles ---------------------------------------------------------------------------------


class SetRoleParams(_PaneParams, CallParams[PaneState]):
    """Switch an agent pane's role; the pane as it is now."""

    method = "set_role"
    role: str


class SetPhaseParams(_PaneParams, CallParams[None]):
    method = "set_phase"
    phase: Phase


class ReloadRolesParams(CallParams[RolesStatus]):
    """Read the role files again."""

    method = "reload_roles"


class CapabilitiesParams(_PaneParams, CallParams[Capabilities]):
    """What an agent pane's role gives it, and why (as ``whoami`` tells the agent)."""

    method = "capabilities"


class AuditParams(CallParams[list[AuditRow]]):
    """The audit rows the host keeps, after row ``after``, oldest first."""

    method = "audit"
    after: int = 0


class AnswerParams(CallParams[None]):
    """The human's answer to an ask."""

    method = "answer"
    ask: str
    answer: AskAnswer


class AnswerElicitationParams(CallParams[None]):
    """The human's answer to a server's form (the first answer counts; a later one finds it over)."""

    method = "answer_elicitation"
    id: str
    reply: ElicitationReply


class AnswerQuestionParams(CallParams[bool]):
    """Decide one of the host's yes/no questions; False when it was over already."""

    method = "answer_question"
    id: str
    answer: bool


class HandoffsParams(_PaneParams, CallParams[PaneState]):
    """Let agents hand work to and from a pane (``on``), hold what they send it until unmuted (``muted``), or refuse
    every hand-off to or from it (``forbidden``)."""

    method = "handoffs"
    mode: Handoffs = "on"


class SendParams(CallParams[list[str]]):
    """The human's words typed into several panes at once, each submitted with Enter (``polter send``, the palette's
    "Send to panes…"): they count as the human's, for keyword gates and phases, as if typed in each. The panes typed
    into come back (a pane whose program does not run is skipped)."""

    method = "send"
    panes: list[str] = Field(min_length=1, description="the panes: ids, or numbers from 1 as windows show them")
    text: str = Field(min_length=1, max_length=64 * 1024)


# -- attention ------------------------------------------------------------------------------------------


class LookingParams(CallParams[None]):
    """The pane this window focuses (``pane``), whether its terminal has the focus (``focused``), and whether that
    terminal raises desktop notifications itself (``notifies``)."""

    method = "looking"
    pane: str | None = None
    focused: bool = True
    notifies: bool = False


class MuteParams(_PaneParams, CallParams[PaneState]):
    """Mute or unmute a pane's notifications (saved for ``--restore``)."""

    method = "mute"
    muted: bool = True


# -- the panes' worktrees -------------------------------------------------------------------------------


class WorktreesParams(CallParams[list[PaneWorktreeInfo]]):
    """The panes that run in worktrees of their own, by their place in the session."""

    method = "worktrees"


class RefreshWorktreeParams(_PaneParams, CallParams[None]):
    """Read a pane's worktree figures again now (after a merge or a commit made outside the pane)."""

    method = "refresh_worktree"


class RecreateWorktreeParams(_PaneParams, CallParams[PaneState]):
    """Make a pane's worktree whose folder was deleted by hand again, then (``restart``) restart its program."""

    method = "recreate_worktree"
    restart: bool = True


# -- the session ----------------------------------------------------------------------------------------


class InfoParams(CallParams[SessionInfo]):
    """What ``polter ls`` shows of the session."""

    method = "info"


class KillParams(CallParams[None]):
    """End the session: every program in it, and the gateway."""

    method = "kill"
    reason: str | None = Field(default=None, description="what the windows are told (else: `polter kill`)")


METHODS: Final[dict[str, type[CallParams[Any]]]] = {
    params.method: params
    for params in (
        OpenParams, CloseParams, RestartParams, HistoryParams, LayoutParams, ViewParams,
        SetRoleParams, SetPhaseParams, ReloadRolesParams, CapabilitiesParams, AuditParams, AnswerParams,
        AnswerElicitationParams, AnswerQuestionParams, LookingParams, MuteParams, WorktreesParams,
        RefreshWorktreeParams, RecreateWorktreeParams, InfoParams, KillParams, SendParams, HandoffsParams,
    )
}  # fmt: skip
"""Every method of the protocol by its name on the wire."""
