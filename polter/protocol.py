"""Wire models shared by the gateway, its clients and the adapters.

Kept free of transport code so a CLI hook helper (``polter hook``) can import it cheaply.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["AgentState", "Decision", "HookAnswer", "HookRequest"]

Decision = Literal["allow", "ask", "deny"]


class HookRequest(BaseModel):
    """A CLI's pre-tool hook payload, translated by its adapter into Polter's neutral form.

    Sent as JSON to ``POST /hook/<adapter>`` with the pane's bearer token.
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["mcp_tool", "skill", "other"] = Field(
        description="An MCP tool of a gateway server, a skill, or a tool Polter has no say over (allowed)."
    )
    cli_tool: str = Field(description="The tool's name as the CLI knows it, e.g. mcp__terraria__world_rain.")
    server: str | None = Field(default=None, description="For mcp_tool: the gateway server (endpoint) name.")
    tool: str | None = Field(default=None, description="For mcp_tool: the upstream tool name.")
    skill: str | None = Field(default=None, description="For skill: the skill's name.")
    arguments: dict[str, Any] = Field(default_factory=dict, description="The tool input, for the audit digest.")


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
