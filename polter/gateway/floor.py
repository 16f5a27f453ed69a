"""Polter's own floor tools on ``/mcp/polter``: ``whoami``, ``escalate`` and the team tools.

``whoami`` takes no parameters: it answers for the pane whose token made the request, and no one
else, with the pane's :func:`capabilities` (the control API's ``/control/panes/{id}/capabilities`` too).
``escalate(reason)`` moves a pane whose role has phases from research to action; it is listed only for
such roles. The team tools (``panes``, ``read``, ``send``, ``wait``, ``open``, ``close``:
:mod:`polter.gateway.team_tools`) are always listed, and each call is decided by the role's ``[team]``.
"""

from __future__ import annotations

import asyncio
import json
import time
from typing import TYPE_CHECKING, Any

import mcp_types as types

from polter.gateway.builtin_calls import builtins_policy, gateway_targets
from polter.gateway.models import Capabilities, ServerCapability, SkillCapability, ToolCapability
from polter.gateway.outcomes import Authorization, refusal
from polter.gateway.panes import RegisteredPane
from polter.gateway.policy import annotations_of
from polter.gateway.team_tools import TEAM_TOOLS, call_team_tool, team_tools
from polter.gateway.tool_specs import ToolSpec
from polter.roles.engine import FLOOR_SERVER

if TYPE_CHECKING:
    from polter.gateway.core import Gateway

__all__ = ["WHOAMI", "ESCALATE", "call_floor_tool", "capabilities", "floor_tools"]

WHOAMI = ToolSpec(
    name="whoami",
    title="What may I use?",
    description="Your own role, phase, and for every server, tool and skill: whether you may use it "
    "(allow / ask the human / deny) and why. Use it to tell a forbidden tool from a broken one.",
    properties={},
    required=(),
    read_only=True,
    idempotent=True,
)

ESCALATE = ToolSpec(
    name="escalate",
    title="Move to the action phase",
    description="Your role starts each request from the human in a research phase (read-only tools). When "
    "you have researched enough and must act, call this with the reason; the human's next line "
    "starts a new research phase.",
    properties={"reason": {"type": "string", "description": "Why you need to act now."}},
    required=("reason",),
    read_only=False,
    idempotent=True,
)


def floor_tools(gateway: Gateway, pane: RegisteredPane) -> list[ToolSpec]:
    role = gateway.policy.role(pane)
    own = [WHOAMI, ESCALATE] if role is not None and role.has_phases else [WHOAMI]
    return own + team_tools(role)


def _text(text: str, *, error: bool = False, structured: dict[str, Any] | None = None) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)], is_error=error, structured_content=structured)


async def call_floor_tool(
    gateway: Gateway, pane: RegisteredPane, name: str, arguments: dict[str, Any] | None
) -> types.CallToolResult:
    started = time.perf_counter()
    if name == WHOAMI.name:
        shown = (await capabilities(gateway, pane)).model_dump(mode="json")
        result = _text(json.dumps(shown, indent=1, ensure_ascii=False), structured=shown)
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
    await gateway.auditor.record(pane, "call", FLOOR_SERVER, name, auth, started, arguments)
    return gateway.execution.with_notice(pane, result)


async def _escalate(gateway: Gateway, pane: RegisteredPane, reason: str) -> tuple[types.CallToolResult, Any]:
    role = gateway.policy.role(pane)
    if role is None or not role.has_phases:
        text = f"The role {pane.role} has no phases: there is nothing to escalate to."
        return _text(text, error=True), Authorization(False, "error", None, text)
    if pane.phase == "action":
        text = "This pane is already in the action phase."
        return _text(text), Authorization(True, "allow", "floor", text)
    verdict = gateway.policy.decide_tool(pane, FLOOR_SERVER, ESCALATE.name, ESCALATE)
    auth = await gateway.execution.authorize(
        pane, verdict, kind="escalate", server=FLOOR_SERVER, name=ESCALATE.name, arguments={"reason": reason}
    )
    if not auth.allowed:
        return refusal(f"{FLOOR_SERVER}/{ESCALATE.name}", auth), auth
    pane.phase = "action"
    await gateway.pane_control.notify(pane, ("tools", "prompts", "resources"))
    gateway.pane_control.publish(pane)
    text = (
        "This pane is now in the action phase: the tools your role allows are listed and callable. "
        "The human's next line starts a new research phase. Reason recorded: " + (reason or "(none given)")
    )
    return _text(text), Authorization(True, "allow", auth.rule, f"escalated to action: {reason}")


async def capabilities(gateway: Gateway, pane: RegisteredPane, *, wait: bool = True) -> Capabilities:
    """The pane's own surface. Waits (briefly) for upstreams still starting, so their tools show; ``wait=False``
    answers at once, an upstream still starting listed as such and without tools (the role's decisions on
    skills and builtins, which a pane's launch needs, do not depend on them)."""
    if wait:
        await asyncio.gather(*(upstream.wait_running() for upstream in gateway.pool.upstreams.values()))
    policy = gateway.policy
    role = policy.role(pane)
    notes = []
    if role is None:
        notes.append(f"The role {pane.role!r} is not loaded: every call is refused until it is fixed.")
    elif role.has_phases:
        notes.append(
            f"Phase {pane.phase}: "
            + (
                "only research tools can be used; call escalate on the polter server to act."
                if pane.phase == "research"
                else "a new line from the human starts a new research phase."
            )
        )
    floor = [_tool_capability(gateway, pane, FLOOR_SERVER, tool, True) for tool in floor_tools(gateway, pane)]
    servers = [_server_capability(gateway, pane, FLOOR_SERVER, "running", floor)]
    for upstream in gateway.pool.upstreams.values():
        visible = {tool.name for tool in policy.visible_tools(pane, upstream.name, upstream.tools, upstream.generation)}
        tools = [_tool_capability(gateway, pane, upstream.name, tool, tool.name in visible) for tool in upstream.tools]
        servers.append(_server_capability(gateway, pane, upstream.name, upstream.state, tools))
    skills = []
    for skill in pane.skills:
        verdict = policy.decide_skill(pane, skill)
        skills.append(SkillCapability(name=skill, decision=verdict.decision, rule=verdict.rule, reason=verdict.reason))
    return Capabilities(
        builtins=builtins_policy(role, gateway_targets(gateway)) if role is not None else None,
        pane=pane.id,
        title=pane.title,
        role=pane.role,
        role_found=role is not None,
        description=role.description if role is not None else "",
        phase=pane.phase,
        servers=servers,
        skills=skills,
        notes=notes,
    )


def _server_capability(
    gateway: Gateway, pane: RegisteredPane, server: str, state: Any, tools: list[ToolCapability]
) -> ServerCapability:
    verdict = gateway.policy.decide_server(pane, server)
    return ServerCapability(
        name=server, decision=verdict.decision, rule=verdict.rule, reason=verdict.reason, state=state, tools=tools
    )


def _tool_capability(
    gateway: Gateway, pane: RegisteredPane, server: str, tool: types.Tool | ToolSpec, visible: bool
) -> ToolCapability:
    verdict = gateway.policy.decide_tool(pane, server, tool.name, tool)
    read_only, destructive = annotations_of(tool)
    return ToolCapability(
        name=tool.name,
        decision=verdict.decision,
        visible=visible,
        rule=verdict.rule,
        reason=verdict.reason,
        read_only=bool(read_only),
        destructive=destructive is not False and not read_only,
    )
