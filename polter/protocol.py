"""Wire models shared by the gateway, its clients and the adapters.

Kept free of transport code so a CLI hook helper (``polter hook``) can import it cheaply.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Final, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "ADAPTER_NAME",
    "DEFAULT_ROLE",
    "ROLE_NAME_PATTERN",
    "FLOOR_SERVER",
    "AgentState",
    "BuiltinsPolicy",
    "Decision",
    "HookAnswer",
    "HookReply",
    "HookRequest",
    "Phase",
    "ProtectedTarget",
    "StateReport",
]

Decision = Literal["allow", "ask", "deny"]

ROLE_NAME_PATTERN: Final = r"^[A-Za-z0-9][A-Za-z0-9_.-]*$"
"""What a role may be called: its file's stem (``coder`` for ``coder.toml``)."""
DEFAULT_ROLE: Final = "coder"
"""The role a pane gets when nobody chose one (a plain shell pane included)."""

ADAPTER_NAME: Final = r"^[a-z][a-z0-9-]*$"
"""What an adapter may be called: it names the CLI in ``polter hook <name>``, ``/hook/<name>`` and ``polter.toml``."""

FLOOR_SERVER: Final = "polter"
"""Polter's own MCP server (``whoami``, ``escalate``), which every pane gets besides the managed servers. Its
tools are always allowed, whatever the role says, except that a role's ``phases.escalate = "ask"`` makes the
agent's own escalation ask the human; no managed server may take its name."""

Phase = Literal["research", "action"]
"""A role with phases starts every human request in ``research`` and escalates to ``action``."""


class HookRequest(BaseModel):
    """A CLI's pre-tool hook payload, translated by its adapter into Polter's neutral form.

    Sent as JSON to ``POST /hook/<adapter>`` with the pane's bearer token.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["mcp_tool", "skill", "builtin", "other", "network"] = Field(
        description="An MCP tool of a gateway server, a skill, one of the CLI's own tools (decided by the role's "
        "[builtins]), a call Polter has no say over (allowed), or a connection the pane's egress proxy decided by "
        "itself (recorded as it says: a declared model API allowed, a loopback or private address refused)."
    )
    cli_tool: str = Field(description="The tool's name as the CLI knows it, e.g. mcp__terraria__world_rain.")
    server: str | None = Field(default=None, description="For mcp_tool: the gateway server (endpoint) name.")
    tool: str | None = Field(default=None, description="For mcp_tool: the upstream tool name.")
    skill: str | None = Field(default=None, description="For skill: the skill's name.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="The tool input, for the audit digest.")
    builtin: str | None = Field(
        default=None,
        description="For builtin: the tool's kind (shell, read, write, web, agent, meta), or the CLI's tool name "
        "when the adapter cannot classify it.",
    )
    command: str | None = Field(default=None, description="For a shell tool: the command line.")
    paths: list[str] = Field(default_factory=list, description="For read/write tools: the paths, as the CLI gave them.")
    urls: list[str] = Field(default_factory=list, description="For a web fetch: the URL(s).")
    query: str | None = Field(default=None, description="For a web search: the query.")
    agent: str | None = Field(default=None, description="For a sub-agent: its type.")
    cwd: str | None = Field(default=None, description="Where the tool runs (relative paths start there).")
    project: str | None = Field(
        default=None, description="The pane's directory, as Polter set it in the hook's configuration."
    )
    runtime_dir: str | None = Field(
        default=None, description="The pane's runtime dir (the files Polter writes for its CLI), from the same place."
    )
    verdict: Literal["allow", "deny"] | None = Field(
        default=None, description="For network: what the egress proxy decided (recorded; it grants nothing)."
    )
    rule: str | None = Field(default=None, description="For network: the proxy's rule (polter:egress-loopback).")
    reason: str | None = Field(default=None, description="For network: the proxy's reason, in words.")


class HookAnswer(BaseModel):
    """The gateway's verdict on a hook request. An ask is resolved before answering: allow or deny."""

    model_config = ConfigDict(extra="forbid")

    decision: Literal["allow", "deny"]
    reason: str = ""
    rule: str | None = None


class AgentState(StrEnum):
    """What the agent in a pane is doing, as read from its screen."""

    WORKING = "working"
    WAITING = "waiting-for-input"
    """The CLI asks the human something (an approval, a choice) and waits."""
    IDLE = "idle"
    """The prompt is empty and nothing runs."""


class StateReport(BaseModel):
    """What a CLI's own hook said about its agent (a turn began, a permission dialog opened, the turn ended),
    translated by its adapter. It only describes: nothing in it can allow or refuse anything."""

    model_config = ConfigDict(extra="forbid")

    state: AgentState = Field(description="What the agent does from now on, as the CLI says.")
    event: str = Field(description="The CLI's event, e.g. Stop, PermissionRequest, Notification:permission_prompt.")
    message: str = Field(
        default="",
        max_length=500,
        description="One line for the human: why it waits (the CLI's words) or what it said last (a turn ended).",
    )
    turn_ended: bool = Field(
        default=False, description="The CLI says its turn is over (Stop): idle after work, the 'done' event."
    )


class ProtectedTarget(BaseModel):
    """A path no role can open (or, with ``writes_only``, write)."""

    model_config = ConfigDict(extra="forbid")

    path: str = Field(description="An absolute path, or a tail such as .git/hooks protected wherever it appears.")
    what: str = Field(description="What it is, in words.")
    writes_only: bool = Field(default=False, description="Only writing it is refused (reading is harmless).")


class BuiltinsPolicy(BaseModel):
    """A role's effective ``[builtins]`` as data: what ``whoami`` shows, and what adapters turn into the CLI's
    own permission rules and sandbox (a first layer under the veto hook)."""

    model_config = ConfigDict(extra="forbid")

    default: Decision = "allow"
    allow: list[str] = Field(default_factory=list)
    ask: list[str] = Field(default_factory=list)
    deny: list[str] = Field(default_factory=list)
    research: list[str] | None = Field(
        default=None, description="What the research phase permits, for a role with phases."
    )
    protected: list[ProtectedTarget] = Field(default_factory=list, description="Targets no role can open.")
    unconfined_shell: bool = Field(
        default=False,
        description="A shell pane (not an agent's) under this role runs outside the kernel sandbox: the human's own.",
    )

    def writes_nothing(self) -> bool:
        """Whether the role refuses every file write (so a read-only sandbox costs it nothing)."""
        if "write" in self.deny or "write(@project)" in self.deny and "write(@outside)" in self.deny:
            return True
        granted = [p for p in (*self.allow, *self.ask) if p == "write" or p.startswith("write(")]
        return self.default == "deny" and not granted


class HookReply(BaseModel):
    """What a CLI's hook prints and how it exits, in the CLI's own hook format (an adapter translates a
    :class:`HookAnswer` into it; the gateway sends it back to the hook)."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    stdout: str = ""
    stderr: str = ""
    exit_code: int = 0
