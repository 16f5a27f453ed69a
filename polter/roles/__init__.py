"""Roles: what the agent in a pane may use. Models, loading, and the pure decision engine.

This package imports no transport, screen or PTY code: it is pure and testable alone.

- :mod:`polter.roles.models`: what a role file says (pydantic, unknown keys refused);
- :mod:`polter.roles.patterns`: pattern syntax and compiled matchers;
- :mod:`polter.roles.engine`: ``compile_role`` and ``decide`` → :class:`Verdict`;
"""

from polter.roles.engine import (
    FLOOR_SERVER,
    CompiledRole,
    Phase,
    Request,
    ServerRequest,
    SkillRequest,
    ToolCallRequest,
    Verdict,
    compile_role,
    decide,
)
from polter.roles.models import Decision, KindPolicy, PhasePolicy, Role, ServerPolicy, SkillPolicy, ToolPolicy

__all__ = [
    "FLOOR_SERVER",
    "CompiledRole",
    "Decision",
    "KindPolicy",
    "Phase",
    "PhasePolicy",
    "Request",
    "Role",
    "ServerPolicy",
    "ServerRequest",
    "SkillPolicy",
    "SkillRequest",
    "ToolCallRequest",
    "ToolPolicy",
    "Verdict",
    "compile_role",
    "decide",
]
