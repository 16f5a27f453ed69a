"""The control API's wire models: what the app (or ``polter panes``/``asks``) sends and receives.

One module for both sides: the gateway's routes validate requests with these models and the typed
client in :mod:`polter.gateway.client` parses responses with them, so the two cannot drift. The same
:class:`Capabilities` model is what a pane's ``whoami`` returns, so the app's capabilities screen and
the agent see identical facts.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from polter.protocol import BuiltinsPolicy, Decision, Phase, StateReport

__all__ = [
    "POLICY_DENIED",
    "AskAnswer",
    "AskInfo",
    "AskKind",
    "AskReply",
    "AuditRow",
    "Capabilities",
    "ElicitationInfo",
    "ElicitationReply",
    "GatewayEvent",
    "GatewayEventType",
    "GatewayState",
    "GatewayStatus",
    "InputLine",
    "Layer",
    "PaneCreated",
    "PaneInfo",
    "PaneStateReport",
    "PaneRegistration",
    "Phase",
    "PhaseChange",
    "RoleChange",
    "RoleSummary",
    "RolesStatus",
    "ServerCapability",
    "SkillCapability",
    "ServersReload",
    "SkillInventory",
    "TeamAction",
    "TeamMember",
    "TeamReply",
    "TeamRequest",
    "ToolCapability",
    "UpstreamInfo",
]

POLICY_DENIED = -32010
"""JSON-RPC error code for a request the role refuses (tools get an ``isError`` result instead)."""


AskKind = Literal["tool", "prompt", "resource", "skill", "escalate", "sampling", "elicitation"]
"""What an ask is about; ``sampling``/``elicitation``: a server's request of the pane (its model, its human)."""

AskAnswer = Literal["allow_once", "allow_pane", "deny"]
"""How the human answered an ask: this call only, this tool for the rest of the pane's role, or no."""

Layer = Literal[
    "listing", "call", "hook", "network", "ask", "phase", "prompt", "resource", "completion", "sampling", "elicitation"
]
"""Where a decision was made; ``network``: a connection through a pane's egress proxy."""
"""Which layer an audit row records."""

TOKEN_PATTERN = r"^[A-Za-z0-9_\-]{32,128}$"
PANE_ID_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,63}$"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class PaneRegistration(_Model):
    """Register a pane. The app passes ``id`` and ``token`` when it re-registers its panes with a
    restarted gateway, so the CLIs already running with that token keep working."""

    role: str = Field(description="The role the pane starts under.")
    title: str | None = Field(default=None, description="A human name for the pane, shown in asks and audit.")
    id: Annotated[str, Field(pattern=PANE_ID_PATTERN)] | None = Field(
        default=None, description="The pane id to use; the gateway picks one when absent."
    )
    token: Annotated[str, Field(pattern=TOKEN_PATTERN)] | None = Field(
        default=None,
        description="A caller-chosen bearer token (at least 32 URL-safe characters, e.g. from an earlier "
        "registration); the gateway generates a 256-bit one when absent.",
    )
    skills: list[str] = Field(default_factory=list, description="Skill names the pane's CLI can see.")


class RoleChange(_Model):
    role: str = Field(description="The new role's name.")


class InputLine(_Model):
    text: str = Field(description="A line the human typed into the pane (drives keyword gates and phases).")


class PhaseChange(_Model):
    phase: Phase = Field(description="``action`` escalates, ``research`` resets.")
    reason: str = Field(default="", description="Why, for the audit log.")


class SkillInventory(_Model):
    skills: list[str] = Field(description="Every skill name the pane's adapter found.")


class AskReply(_Model):
    answer: AskAnswer


class McpClient(_Model):
    """An MCP client a pane's CLI opened a session with, as its ``initialize`` said (2025-era sessions)."""

    endpoint: str
    name: str
    version: str
    protocol: str = Field(description="The protocol version it spoke (2026-07-28 carries no server requests).")
    capabilities: list[str] = Field(
        description="What it declared, by name (roots, sampling, elicitation; elicitation.form, elicitation.url)."
    )


class PaneInfo(_Model):
    """What the controller knows about a pane (never its token)."""

    id: str
    title: str | None
    role: str
    role_found: bool = Field(description="False when no loaded role has this name: the pane can call nothing.")
    phase: Phase | None = Field(description="None for roles without phases.")
    created_at: datetime
    sessions: int = Field(description="Open MCP sessions (2025-era clients) and listen streams of this pane.")
    pending_asks: int
    skills: list[str]
    grants: list[str] = Field(description="``server/tool`` names allowed for this pane by an earlier ask.")
    last_input_at: datetime | None
    clients: list[McpClient] = Field(
        default_factory=list, description="The MCP clients the pane's CLI has opened sessions with, first seen first."
    )


class PaneCreated(_Model):
    pane: PaneInfo
    token: str = Field(description="The pane's bearer token; the gateway keeps only its SHA-256 hash.")


class ToolCapability(_Model):
    name: str
    decision: Decision = Field(description="What a call would get right now (after gates and phases).")
    visible: bool = Field(description="Whether tools/list shows it.")
    rule: str | None
    reason: str
    read_only: bool = Field(description="The upstream's readOnlyHint (a hint, not a guarantee).")
    destructive: bool = Field(description="The upstream's destructiveHint (spec default true).")


class ServerCapability(_Model):
    name: str
    decision: Decision
    rule: str | None
    reason: str
    state: str = Field(description="The upstream's state: starting, running, restarting or stopped.")
    tools: list[ToolCapability]


class SkillCapability(_Model):
    name: str
    decision: Decision
    rule: str | None
    reason: str


class Capabilities(_Model):
    """A pane's own surface: what ``whoami`` answers and what the app's capabilities screen shows."""

    pane: str
    title: str | None
    role: str
    role_found: bool
    description: str = ""
    phase: Phase | None
    servers: list[ServerCapability]
    skills: list[SkillCapability]
    builtins: BuiltinsPolicy | None = Field(
        default=None,
        description="The role's rules for the CLI's own tools (shell, read, write, web, agent, meta) and the targets "
        "no role can open; None when the role is not loaded (every call is refused).",
    )
    notes: list[str] = Field(default_factory=list, description="Anything the agent should know (a vanished role...).")


class AskInfo(_Model):
    """A call waiting for the human. Carries the raw arguments: only the admin token can see it."""

    id: str
    pane: str
    pane_title: str | None
    role: str
    kind: AskKind
    server: str | None
    name: str = Field(description="Tool, prompt, resource URI or skill name.")
    arguments: dict[str, Any]
    rule: str | None
    reason: str
    created_at: datetime
    expires_at: datetime
    state: Literal["pending", "allowed", "denied"] = "pending"
    answer: AskAnswer | None = None
    answered_by: str | None = Field(default=None, description="controller, timeout, no-controller, pane-removed...")


class ElicitationInfo(_Model):
    """A server's question for the human, shown in Polter's window as a form over the pane whose call caused it
    (the pane's CLI could not show it). ``requested_schema`` is a form of the spec (checked before it is shown);
    ``url`` is set for a URL-mode elicitation (the human opens it, then says whether they did)."""

    id: str
    pane: str
    pane_title: str | None
    role: str
    server: str
    message: str
    requested_schema: dict[str, Any] = Field(default_factory=dict)
    url: str | None = None
    created_at: datetime
    expires_at: datetime
    action: Literal["accept", "decline", "cancel"] | None = None
    answered_by: str | None = None


class ElicitationReply(_Model):
    """The human's answer to an elicitation: accept with the form's content, decline, or cancel (dismiss)."""

    action: Literal["accept", "decline", "cancel"]
    content: dict[str, str | int | float | bool | list[str]] | None = None


class AuditRow(_Model):
    id: int | None = None
    time: datetime
    pane: str | None
    role: str | None
    layer: Layer
    server: str | None
    name: str | None = Field(description="Tool, prompt, resource or skill name (a built-in tool: the CLI's name).")
    builtin: str | None = Field(
        default=None, description="For one of the CLI's own tools: its kind (shell, read, write, web, agent, meta)."
    )
    target: str | None = Field(
        default=None, description="For one of the CLI's own tools: its argument, normalised (command, paths, URL)."
    )
    decision: str = Field(description="allow, ask, deny, error, or an ask answer.")
    rule: str | None
    reason: str
    latency_ms: float
    args_digest: str | None
    args: str | None = Field(default=None, description="Raw JSON arguments, only when the user opted in.")

    @property
    def what(self) -> str:
        """What was called: ``server/tool``, or one of the CLI's own tools as ``Bash (shell) git push origin``."""
        if self.builtin is not None:
            return " ".join(part for part in (self.name, f"({self.builtin})", self.target) if part)
        return "/".join(part for part in (self.server, self.name) if part) or "-"


class UpstreamInfo(_Model):
    name: str
    transport: Literal["stdio", "http"]
    state: str
    tools: int
    error: str | None
    restarts: int


class RoleSummary(_Model):
    """One loaded role, for a controller's role picker."""

    name: str
    description: str = ""
    phases: bool = Field(default=False, description="Whether the role starts requests in a research phase.")
    file: str | None = Field(default=None, description="The file in force (the last layer that defines the role).")
    layer: str | None = Field(default=None, description="bundled, user, project, or a folder given to the gateway.")


class RolesStatus(_Model):
    names: list[str]
    problems: list[str] = Field(description="Every problem of every role file, as file:line: field: message.")
    kept: list[str] = Field(
        default_factory=list, description="Roles whose file is invalid now: their last good version stays in force."
    )
    roles: list[RoleSummary] = Field(default_factory=list, description="The roles of ``names``, described.")


class ServersReload(_Model):
    """What re-reading the servers file did. A file with problems changes nothing (``applied`` false)."""

    file: str
    applied: bool
    added: list[str] = Field(default_factory=list)
    removed: list[str] = Field(default_factory=list)
    reconfigured: list[str] = Field(default_factory=list, description="Restarted with their new entry.")
    unchanged: list[str] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list, description="As file:line: field: message.")

    def changes(self) -> list[str]:
        """What changed, a line per kind: ``added time, github`` (empty when nothing did)."""
        return [
            f"{verb} {', '.join(names)}"
            for verb, names in (("added", self.added), ("removed", self.removed), ("restarted", self.reconfigured))
            if names
        ]


class GatewayStatus(_Model):
    version: str
    pid: int
    url: str
    servers: list[UpstreamInfo]
    roles: RolesStatus
    panes: int
    controllers: int
    pending_asks: int


GatewayEventType = Literal[
    "hello",
    "ask",
    "ask_resolved",
    "elicitation",
    "elicitation_resolved",
    "audit",
    "pane",
    "pane_removed",
    "upstream",
    "roles",
    "servers",
    "state",
    "team",
]


class GatewayEvent(_Model):
    """One event on ``/control/events``. ``data`` is the JSON of the model named by ``type``."""

    type: GatewayEventType
    data: dict[str, Any] = Field(default_factory=dict)


class PaneStateReport(_Model):
    """The ``state`` event: what a pane's CLI said about its agent through its own hooks (``/hook/<cli>/state``).
    The gateway only passes it on: a report decides nothing."""

    pane: str
    adapter: str
    report: StateReport


class GatewayState(_Model):
    """``gateway.json`` in the state dir (mode 0600): how admin tools find and authenticate to the gateway."""

    url: str
    pid: int
    admin_token: str
    started_at: datetime
    version: str


# -- agents that work together: the team calls the gateway hands to the session host -----------------------

TeamAction = Literal["roster", "read", "send", "wait", "open", "close"]
TeamUntil = Literal["idle", "done", "waiting"]


class TeamRequest(_Model):
    """The ``team`` event: a team tool call the role allowed, for the session host (which owns the panes) to carry
    out and answer on ``POST /control/team/{id}``. ``caller`` is the pane whose token made the call."""

    id: str
    action: TeamAction
    caller: str
    target: str | None = None
    message: str | None = None
    sender_label: str | None = None
    """How the message is marked in the target (``pane 1 · coder``)."""
    lines: int = 40
    until: TeamUntil = "done"
    timeout: float = 300.0
    adapter: str | None = None
    role: str | None = None
    task: str | None = None
    worktree: bool = False
    title: str | None = None


class TeamMember(_Model):
    """One pane as the team tools show it."""

    pane: str
    number: int
    title: str
    cli: str
    role: str
    state: str | None = Field(default=None, description="working, waiting or idle; None before its CLI started.")
    branch: str | None = None
    sender: str | None = Field(default=None, description="The pane that gave it its current task.")
    opened_by: str | None = Field(default=None, description="The pane that opened it (None: the human).")
    depth: int = 0
    queued: int = Field(default=0, description="Messages waiting to be typed into it.")
    handoffs: str = Field(default="on", description="on, muted (messages wait) or forbidden, as the human set it.")


class TeamReply(_Model):
    """The host's answer to a :class:`TeamRequest`: ``error`` says why it could not be done."""

    error: str | None = None
    members: list[TeamMember] = Field(default_factory=list)
    text: str | None = None
    pane: str | None = None
    number: int | None = None
    state: str | None = None
