"""Polter's own tools (the floor's ``whoami`` and ``escalate``, the team tools) as plain definitions.

A role's decision and ``whoami``'s report need a tool's name and hints only. The MCP ``Tool`` a listing sends is
built from its definition when a pane first lists it. So the gateway answers its control API without loading
``mcp_types``' models (``sdk_imports.py``), including each pane's capabilities, which the host asks for as it
starts the pane.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import mcp_types as types

__all__ = ["ToolSpec"]


@dataclass(frozen=True, eq=False)
class ToolSpec:
    """One of Polter's own tools. Its hints are MCP's: none of these tools reaches outside the session, and none
    destroys anything."""

    name: str
    title: str
    description: str
    properties: Mapping[str, Any]
    required: tuple[str, ...]
    read_only: bool
    idempotent: bool

    @cached_property
    def tool(self) -> types.Tool:
        """The tool as a listing sends it."""
        import mcp_types as types  # lazy: at the first listing (the module's docstring)

        schema = {"type": "object", "properties": dict(self.properties), "additionalProperties": False}
        if self.required:
            schema["required"] = list(self.required)
        hints = types.ToolAnnotations(
            read_only_hint=self.read_only,
            destructive_hint=False,
            idempotent_hint=self.idempotent,
            open_world_hint=False,
        )
        return types.Tool(
            name=self.name, title=self.title, description=self.description, input_schema=schema, annotations=hints
        )
