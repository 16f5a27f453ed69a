"""Shared pieces for translating CLI hook payloads and answers (several CLIs copy Claude Code's format)."""

from __future__ import annotations

import json
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from polter.adapters._contract import deny_message
from polter.protocol import HookAnswer, HookReply, HookRequest

__all__ = ["hook_shell_command", "mcp_tool_request", "permission_decision_reply", "split_tool_name", "tool_input"]

HOOK_TIMEOUT_SECONDS = 600
"""How long a CLI waits for ``polter hook``: longer than the gateway's ask timeout, so a human can answer."""


def hook_shell_command(argv: Sequence[str]) -> str:
    """A command line for CLIs that run hooks through a shell."""
    return shlex.join(argv)


def split_tool_name(name: str, *, prefix: str, separator: str) -> tuple[str, str] | None:
    """``mcp__server__tool`` → (server, tool), or None when the name is not an MCP tool's."""
    if not name.startswith(prefix):
        return None
    server, sep, tool = name[len(prefix) :].partition(separator)
    if not sep or not server or not tool:
        return None
    return server, tool


def tool_input(payload: Mapping[str, Any]) -> dict[str, Any]:
    """The tool's arguments from a hook payload (``tool_input``), always a dict."""
    value = payload.get("tool_input")
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {"input": value}
    return dict(value) if isinstance(value, Mapping) else {}


def mcp_tool_request(cli_tool: str, server: str, tool: str, payload: Mapping[str, Any]) -> HookRequest:
    return HookRequest(kind="mcp_tool", cli_tool=cli_tool, server=server, tool=tool, arguments=tool_input(payload))


def permission_decision_reply(answer: HookAnswer, event: str = "PreToolUse") -> HookReply:
    """Claude Code's (and Codex's) JSON answer: ``hookSpecificOutput.permissionDecision``.

    An allow prints nothing: the CLI's own permission rules still apply, Polter only ever vetoes.
    """
    if answer.decision == "allow":
        return HookReply()
    output = {
        "hookSpecificOutput": {
            "hookEventName": event,
            "permissionDecision": "deny",
            "permissionDecisionReason": deny_message(answer),
        }
    }
    return HookReply(stdout=json.dumps(output))
