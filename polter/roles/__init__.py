"""Roles: what the agent in a pane may use. Models, loading, and the pure decision engine.

This package imports no transport, screen or PTY code: it is pure and testable alone.

- :mod:`polter.roles.models`: what a role file says (pydantic, unknown keys refused);
- :mod:`polter.roles.patterns`: pattern syntax and compiled matchers;
- :mod:`polter.roles.requests`: what the engine is asked, and its :class:`Verdict`;
- :mod:`polter.roles.engine`: ``compile_role``, and a compiled role's ``decide`` → :class:`Verdict` (its rules
  kind by kind in :mod:`polter.roles.rule_kinds`, its sentences in :mod:`polter.roles.reasons`);
- :mod:`polter.roles.loader`: one role file → :class:`Role`, problems with file, line and field;
- :mod:`polter.roles.library`: :class:`RoleLibrary`, the layered folders, ``reload`` and ``watch``.

See ``docs/roles.md`` for the format and the decision order.
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
)
from polter.roles.library import DEFAULT_ROLE, ReloadReport, RoleLibrary, RoleSource
from polter.roles.models import Decision, KindPolicy, PhasePolicy, Role, ServerPolicy, SkillPolicy, ToolPolicy

__all__ = [
    "CompiledRole",
    "DEFAULT_ROLE",
    "Decision",
    "FLOOR_SERVER",
    "KindPolicy",
    "Phase",
    "PhasePolicy",
    "ReloadReport",
    "Request",
    "Role",
    "RoleLibrary",
    "RoleSource",
    "ServerPolicy",
    "ServerRequest",
    "SkillPolicy",
    "SkillRequest",
    "ToolCallRequest",
    "ToolPolicy",
    "Verdict",
    "compile_role",
]
