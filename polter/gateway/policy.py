"""The gateway's one door to the roles engine, with the two layers' opposite failure modes.

- Execution (``decide_*``) fails **closed**: a role that vanished, or an engine error, is a deny
  whose rule says why (``polter:role-missing``, ``polter:policy-error``).
- Listing (``visible_*``) fails **open**: when the policy cannot be evaluated, everything is listed;
  visible is not callable, since every call is decided again.

No policy logic lives here: every decision is the engine's (:meth:`CompiledRole.decide` and
:meth:`CompiledRole.visible`). This module only builds the requests from what the gateway knows (the
upstream's tool annotations, the pane's phase and recent input) and applies the pane's ask grants.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Literal

import mcp_types as types

from polter.gateway.audit import digest_arguments
from polter.gateway.panes import RegisteredPane
from polter.gateway.tool_specs import ToolSpec
from polter.roles.engine import (
    BuiltinRequest,
    CompiledRole,
    ServerRequest,
    SkillRequest,
    ToolCallRequest,
    UpstreamRequest,
    Verdict,
)
from polter.roles.library import RoleLibrary

__all__ = ["DEFAULT_INPUT_WINDOW", "Policy", "annotations_of"]

logger = logging.getLogger(__name__)

DEFAULT_INPUT_WINDOW = 600.0
"""Seconds a line the human typed counts as "recent" for keyword gates."""

RULE_ROLE_MISSING = "polter:role-missing"
RULE_POLICY_ERROR = "polter:policy-error"
RULE_GRANT = "polter:ask-grant"


def annotations_of(tool: types.Tool | ToolSpec | None) -> tuple[bool | None, bool | None]:
    """``(read_only, destructive)`` hints; None where the upstream gives none (or the tool is unknown)."""
    if isinstance(tool, ToolSpec):
        return tool.read_only, False  # none of Polter's own tools destroys anything
    if tool is None or tool.annotations is None:
        return None, None
    return tool.annotations.read_only_hint, tool.annotations.destructive_hint


class Policy:
    def __init__(self, roles: RoleLibrary, *, input_window: float = DEFAULT_INPUT_WINDOW) -> None:
        self.roles = roles
        self.input_window = input_window
        self._listings: dict[tuple[str, str], tuple[tuple[Any, ...], list[types.Tool]]] = {}

    def role(self, pane: RegisteredPane) -> CompiledRole | None:
        try:
            return self.roles.get(pane.role)
        except Exception:  # a broken role source is "no role": calls deny, listings show everything
            logger.exception("looking up role %r failed", pane.role)
            return None

    def tool_request(
        self,
        pane: RegisteredPane,
        server: str,
        name: str,
        tool: types.Tool | ToolSpec | None,
        arguments: dict[str, Any] | None = None,
    ) -> ToolCallRequest:
        read_only, destructive = annotations_of(tool)
        return ToolCallRequest(
            server=server,
            tool=name,
            read_only=read_only,
            destructive=destructive,
            recent_input=pane.recent_input(self.input_window),
            phase=pane.phase,
            arguments=arguments,
        )

    # -- execution: fails closed -----------------------------------------------------------------

    def decide_tool(
        self,
        pane: RegisteredPane,
        server: str,
        name: str,
        tool: types.Tool | ToolSpec | None,
        arguments: dict[str, Any] | None = None,
    ) -> Verdict:
        """The decision on a call of the tool (``arguments`` given) or on the tool itself (a listing, whoami)."""
        verdict = self._decide(pane, self.tool_request(pane, server, name, tool, arguments), f"{server}/{name}")
        if verdict.decision != "ask":
            return verdict
        if verdict.by_arguments:
            if (server, name, digest_arguments(arguments)) in pane.argument_grants:
                return Verdict(
                    "allow",
                    RULE_GRANT,
                    f"The human allowed {server}/{name} with these arguments for this pane when asked "
                    f"(the role {pane.role} asks: {verdict.rule}).",
                )
            return verdict
        if (server, name) in pane.grants:
            return Verdict(
                "allow",
                RULE_GRANT,
                f"The human allowed {server}/{name} for this pane when asked "
                f"(the role {pane.role} asks: {verdict.rule}).",
            )
        return verdict

    def decide_server(self, pane: RegisteredPane, server: str) -> Verdict:
        return self._decide(pane, ServerRequest(server), f"the server {server}")

    def decide_upstream(self, pane: RegisteredPane, server: str, kind: Literal["sampling", "elicitation"]) -> Verdict:
        """Whether the server may use the pane's model (sampling) or ask its human (elicitation)."""
        verdict = self._decide(pane, UpstreamRequest(server, kind), f"{kind} by the server {server}")
        if verdict.decision == "ask" and (server, f"@{kind}") in pane.grants:
            return Verdict("allow", RULE_GRANT, f"The human allowed {kind} by {server} for this pane when asked.")
        return verdict

    def decide_skill(self, pane: RegisteredPane, skill: str) -> Verdict:
        return self._decide(pane, SkillRequest(skill), f"the skill {skill}")

    def decide_builtin(self, pane: RegisteredPane, request: BuiltinRequest) -> Verdict:
        """One of the CLI's own tools (a shell command, a file read or write, a fetch...)."""
        return self._decide(pane, request, f"{request.call.cli_tool} ({request.call.argument})")

    def _decide(
        self,
        pane: RegisteredPane,
        request: ToolCallRequest | ServerRequest | SkillRequest | BuiltinRequest | UpstreamRequest,
        subject: str,
    ) -> Verdict:
        role = self.role(pane)
        if role is None:
            return Verdict(
                "deny",
                RULE_ROLE_MISSING,
                f"This pane's role {pane.role!r} is not loaded (deleted, renamed, or never valid), so "
                f"Polter refuses {subject}: with no role, nothing may be used.",
            )
        try:
            return role.decide(request)
        except Exception as exc:
            logger.exception("the engine failed on %r", request)
            return Verdict(
                "deny",
                RULE_POLICY_ERROR,
                f"Polter could not evaluate the role {pane.role!r} for {subject} ({exc}), so it refuses.",
            )

    # -- listing: fails open ---------------------------------------------------------------------

    def visible_tools(
        self, pane: RegisteredPane, server: str, tools: Sequence[types.Tool], generation: int
    ) -> list[types.Tool]:
        role = self.role(pane)
        if role is None:
            return list(tools)
        key = (role, pane.phase, generation)
        cached = self._listings.get((pane.id, server))
        if cached is not None and cached[0] == key:
            return cached[1]
        try:
            visible = [tool for tool in tools if role.visible(self.tool_request(pane, server, tool.name, tool))]
        except Exception:
            logger.exception("listing %s for pane %s failed; listing everything", server, pane.id)
            return list(tools)
        self._listings[(pane.id, server)] = (key, visible)
        return visible

    def server_visible(self, pane: RegisteredPane, server: str) -> bool:
        """Whether the server's prompts and resources are listed: hidden only on an outright deny."""
        role = self.role(pane)
        if role is None:
            return True
        try:
            return role.decide(ServerRequest(server)).decision != "deny"
        except Exception:
            logger.exception("listing %s for pane %s failed; listing everything", server, pane.id)
            return True

    def forget(self, pane_id: str | None = None, *, server: str | None = None) -> None:
        """Drop cached listings of a pane, or of a server (removed from the servers file)."""
        for key in [key for key in self._listings if key[0] == pane_id or key[1] == server]:
            del self._listings[key]
