"""Polter's own floor tools on ``/mcp/polter``: ``whoami``, ``escalate`` and the team tools.

``whoami`` takes no parameters: it answers for the pane whose token made the request, and no one
else. ``escalate(reason)`` moves a pane whose role has phases from research to action; it is listed
only for such roles. The team tools (``panes``, ``read``, ``send``, ``wait``, ``open``, ``close``:
:mod:`polter.gateway.team_tools`) are always callable, and decided by the role's ``[team]``.
"""

from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING, Any

import mcp_types as types

from polter.gateway.panes import RegisteredPane
from polter.roles.engine import FLOOR_SERVER

if TYPE_CHECKING:
    from polter.gateway.core import Gateway

__all__ = ["WHOAMI", "ESCALATE", "call_floor_tool", "floor_tools"]

_READ_ONLY = types.ToolAnnotations(
    read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False
)

WHOAMI = types.Tool(
    name="whoami",
    title="What may I use?",
    description="Your own role, phase, and for every server, tool and skill: whether you may use it "
    "(allow / ask the human / deny) and why. Use it to tell a forbidden tool from a broken one.",
    input_schema={"type": "object", "properties": {}, "additionalProperties": False},
    annotations=_READ_ONLY,
)

ESCALATE = types.Tool(
    name="escalate",
    title="Move to the action phase",
    description="Your role starts each request from the human in a research phase (read-only tools). When "
    "you have researched enough and must act, call this with the reason; the human's next line "
    "starts a new research phase.",
    input_schema={
        "type": "object",
        "properties": {"reason": {"type": "string", "description": "Why you need to act now."}},
        "required": ["reason"],
        "additionalProperties": False,
    },
    annotations=types.ToolAnnotations(
        read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False
    ),
)


def floor_tools(gateway: Gateway, pane: RegisteredPane) -> list[types.Tool]:
    from polter.gateway.team_tools import team_tools

    role = gateway.policy.role(pane)
    own = [WHOAMI, ESCALATE] if role is not None and role.has_phases else [WHOAMI]
    return own + team_tools(role)


def _text(text: str, *, error: bool = False, structured: dict[str, Any] | None = None) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=error, structured_content=structured)


async def call_floor_tool(
    gateway: Gateway, pane: RegisteredPane, name: str, arguments: dict[str, Any] | None
) -> types.CallToolResult:
    started = time.perf_counter()
    from polter.gateway.core import Authorization
    from polter.gateway.team_tools import TEAM_TOOLS, call_team_tool

    if name == WHOAMI.name:
        capabilities = (await gateway.capabilities(pane)).model_dump(mode="json")
        result = _text(json.dumps(capabilities, indent=1, ensure_ascii=False), structured=capabilities)
        auth = Authorization(True, "allow", "floor", "whoami is a floor tool")
    elif name == ESCALATE.name:
        result, auth = await _escalate(gateway, pane, str((arguments or {}).get("reason", "")))
    elif name in TEAM_TOOLS:
        result, auth = await call_team_tool(gateway, pane, name, arguments)
    else:
        result = _text(
            f"{FLOOR_SERVER} has no tool {name!r}; it has whoami, (for roles with phases) escalate, and "
            f"{', '.join(TEAM_TOOLS)}.",
            error=True,
        )
        auth = Authorization(False, "error", None, f"unknown floor tool {name!r}")
    await gateway.audit_decision(pane, "call", FLOOR_SERVER, name, auth, started, arguments)
    return gateway.with_notice(pane, result)


async def _escalate(gateway: Gateway, pane: RegisteredPane, reason: str) -> tuple[types.CallToolResult, Any]:
    from polter.gateway.core import Authorization, refusal

    role = gateway.policy.role(pane)
    if role is None or not role.has_phases:
        text = f"The role {pane.role} has no phases: there is nothing to escalate to."
        return _text(text, error=True), Authorization(False, "error", None, text)
    if pane.phase == "action":
        text = "This pane is already in the action phase."
        return _text(text), Authorization(True, "allow", "floor", text)
    verdict = gateway.policy.decide_tool(pane, FLOOR_SERVER, ESCALATE.name, ESCALATE)
    auth = await gateway.authorize(
        pane, verdict, kind="escalate", server=FLOOR_SERVER, name=ESCALATE.name, arguments={"reason": reason}
    )
    if not auth.allowed:
        return refusal(f"{FLOOR_SERVER}/{ESCALATE.name}", auth), auth
    pane.phase = "action"
    await gateway.notify(pane, ("tools", "prompts", "resources"))
    gateway.events.publish("pane", gateway.pane_info(pane))
    text = (
        "This pane is now in the action phase: the tools your role allows are listed and callable. "
        "The human's next line starts a new research phase. Reason recorded: " + (reason or "(none given)")
    )
    return _text(text), Authorization(True, "allow", auth.rule, f"escalated to action: {reason}")
