"""What the engine is asked (a tool call, a server, a skill, a CLI's own tool, a server's request of the
pane) and what it answers: a :class:`Verdict`. Plain frozen data, shared by the engine and its callers."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from polter.protocol import Decision, Phase
from polter.roles.builtin_verdicts import BuiltinRequest

__all__ = ["Request", "ServerRequest", "SkillRequest", "ToolCallRequest", "UpstreamRequest", "Verdict", "short_path"]


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """A call (or a listing) of one MCP tool.

    ``read_only``/``destructive`` are the tool's ``readOnlyHint``/``destructiveHint`` annotations, None
    when the upstream does not give them. ``recent_input`` is what the human typed into the pane
    recently (the gateway chooses the window); ``phase`` is the pane's phase, None meaning the role's
    first phase (research, for a role with phases).
    """

    server: str
    tool: str
    read_only: bool | None = None
    destructive: bool | None = None
    recent_input: Sequence[str] = ()
    phase: Phase | None = None
    arguments: Mapping[str, Any] | None = None
    """The call's arguments, for the rules that name some; None for a listing (what a tool is, not a call)."""


@dataclass(frozen=True, slots=True)
class ServerRequest:
    """Whether the pane may reach (see, connect to) one MCP server."""

    server: str


@dataclass(frozen=True, slots=True)
class UpstreamRequest:
    """Whether one MCP server may ask something of the pane: its model (``sampling``) or its human
    (``elicitation``)."""

    server: str
    kind: Literal["sampling", "elicitation"]


@dataclass(frozen=True, slots=True)
class SkillRequest:
    """Whether the pane's CLI may show and use one skill."""

    skill: str


Request = ToolCallRequest | ServerRequest | SkillRequest | BuiltinRequest | UpstreamRequest


@dataclass(frozen=True, slots=True)
class Verdict:
    """A decision, the rule that produced it, and a reason written for the agent and the human."""

    decision: Decision
    rule: str
    reason: str
    by_arguments: bool = False
    """Decided by a rule on the call's arguments: a human's approval covers these arguments only."""

    def as_dict(self) -> dict[str, str]:
        return {"decision": self.decision, "rule": self.rule, "reason": self.reason}


def short_path(path: Path) -> str:
    """A path as people read it: relative to the working directory when inside it, else with ``~``."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        pass
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except (ValueError, RuntimeError):
        return str(path)
