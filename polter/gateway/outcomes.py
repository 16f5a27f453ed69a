"""What a decision of the gateway's comes to, as every part hands it on: an :class:`Authorization` (allowed or not,
by which rule, why), the tool results that tell the model a refusal from a failure, and the errors of the
control API's pane operations."""

from __future__ import annotations

import mcp_types as types

__all__ = ["Authorization", "PaneNotFound", "PhaseError", "failure", "refusal"]


class PaneNotFound(KeyError):
    pass


class PhaseError(ValueError):
    """A phase change the pane's role does not support."""


class Authorization:
    """The outcome of the execution layer for one request: allowed or not, and why."""

    __slots__ = ("allowed", "decision", "reason", "rule")

    def __init__(self, allowed: bool, decision: str, rule: str | None, reason: str) -> None:
        self.allowed, self.decision, self.rule, self.reason = allowed, decision, rule, reason


def refusal(subject: str, auth: Authorization) -> types.CallToolResult:
    """A deny the model can tell from a failure: it says Polter refused, by which rule, and why."""
    text = f"Polter refused {subject} (forbidden, not broken). Rule: {auth.rule}. {auth.reason}"
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        is_error=True,
        _meta={"polter": {"decision": "deny", "rule": auth.rule, "reason": auth.reason}},
    )


def failure(subject: str, message: str) -> types.CallToolResult:
    """An upstream failure: the role allowed the call, the server could not serve it."""
    text = f"{subject} failed (broken, not forbidden: the role allows it). {message}"
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        is_error=True,
        _meta={"polter": {"decision": "error", "reason": message}},
    )
