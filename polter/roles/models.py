"""What a role file says, as pydantic models: every field described, unknown keys refused.

A role has, for each kind of thing an agent can use (servers, tools, skills), a *default* and three
exception lists. There is deliberately no way to write a pure whitelist: whatever the role does not
name — a server installed next week — follows the default, and is never mistaken for something the
user switched off. ``[gates]`` and ``[phases]`` can only tighten what the lists decide.

These models check each value on its own (pattern syntax, keyword lists). Checks that need the whole
role (a missing default, a pattern in two lists) are in :meth:`Role.semantic_problems`, so the loader
can report every problem of a file with its line, not just the first.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Annotated, ClassVar, Generic, Literal, NamedTuple, TypeVar

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, field_validator

from polter.protocol import DEFAULT_ROLE, ROLE_NAME_PATTERN, Decision
from polter.roles.builtins import DEFAULT_RESEARCH_BUILTINS, check_builtin_pattern, is_builtin_pattern
from polter.roles.patterns import check_server_pattern, check_skill_pattern, check_tool_pattern
from polter.sandbox.rules import kernel_problems

__all__ = [
    "BuiltinPolicy",
    "DECISIONS",
    "DEFAULT_ROLE",
    "ElicitationPolicy",
    "ROLE_NAME",
    "Decision",
    "KindPolicy",
    "PhasePolicy",
    "Problem",
    "SandboxPolicy",
    "Role",
    "TeamPolicy",
    "TeamTarget",
    "SamplingPolicy",
    "ServerPolicy",
    "SkillPolicy",
    "ToolPolicy",
]

DECISIONS: tuple[Decision, ...] = ("allow", "ask", "deny")
"""In increasing strictness; a decision can only ever move right (tighten)."""

ROLE_NAME = re.compile(ROLE_NAME_PATTERN)
"""A role's name: its file's stem (``coder`` for ``coder.toml``)."""


def _checked(check: Callable[[str], str | None]) -> AfterValidator:
    """A pydantic validator from one of the ``check_*_pattern`` functions (each item fails on its own,
    so the loader can point at its line)."""

    def validate(pattern: str) -> str:
        if error := check(pattern):
            raise ValueError(error)
        return pattern

    return AfterValidator(validate)


def _keyword(keyword: str) -> str:
    if not keyword.strip():
        raise ValueError("a keyword cannot be blank")
    return keyword


def _check_named_tool_pattern(pattern: str) -> str | None:
    """A tool pattern without argument conditions (gates and phases name tools, not calls)."""
    if error := check_tool_pattern(pattern):
        return error
    if pattern.endswith(")"):
        return f"{pattern!r}: argument conditions belong in tools.allow, ask or deny; here a pattern names tools"
    return None


ServerPattern = Annotated[str, _checked(check_server_pattern)]
ToolPattern = Annotated[str, _checked(check_tool_pattern)]
NamedToolPattern = Annotated[str, _checked(_check_named_tool_pattern)]
SkillPattern = Annotated[str, _checked(check_skill_pattern)]
BuiltinPattern = Annotated[str, _checked(check_builtin_pattern)]


def _check_gate_pattern(pattern: str) -> str | None:
    """A gate names an MCP tool pattern (``server/tool``) or a built-in one (``shell(git push*)``)."""
    return check_builtin_pattern(pattern) if is_builtin_pattern(pattern) else _check_named_tool_pattern(pattern)


GatePattern = Annotated[str, _checked(_check_gate_pattern)]
Keywords = Annotated[list[Annotated[str, AfterValidator(_keyword)]], Field(min_length=1)]


class Problem(NamedTuple):
    """A problem found in a valid-looking role: the field, the message, and the offending value
    (used to find its line in the file)."""

    field: str
    message: str
    value: str | None = None


PatternT = TypeVar("PatternT")


class KindPolicy(BaseModel, Generic[PatternT]):
    """A default for one kind of thing, plus exceptions. Deny beats ask beats allow.

    Generic over the pattern type, so each kind checks its own pattern syntax item by item.
    """

    model_config = ConfigDict(extra="forbid", strict=True)
    kind: ClassVar[str] = "kind"

    default: Decision | None = Field(
        default=None,
        description="What happens to anything no exception names: allow, ask (the human) or deny. "
        "Required unless the role extends another (which then supplies it).",
    )
    allow: list[PatternT] = Field(default_factory=list, description="Patterns allowed (unless denied or asked).")
    ask: list[PatternT] = Field(
        default_factory=list, description="Patterns that need the human's approval (unless denied)."
    )
    deny: list[PatternT] = Field(
        default_factory=list, description="Patterns always refused: deny wins over everything."
    )

    def exceptions(self) -> list[tuple[str, Decision]]:
        """Every (pattern, decision) pair, in the order deny, ask, allow."""
        return [(pattern, decision) for decision in ("deny", "ask", "allow") for pattern in getattr(self, decision)]


class ServerPolicy(KindPolicy[ServerPattern]):
    """Which MCP servers the pane may reach. A denied server's tools are all denied."""

    kind: ClassVar[str] = "servers"


class ToolPolicy(KindPolicy[ToolPattern]):
    """Which MCP tools the pane may call: ``server/tool`` globs, ``@read-only``/``@destructive``, and conditions on
    a call's arguments (``fs/write_file(path=src/**)``)."""

    kind: ClassVar[str] = "tools"


class SamplingPolicy(KindPolicy[ServerPattern]):
    """Which MCP servers may ask the pane's model for a completion (``sampling/createMessage``), by server name.
    Without a ``[sampling]`` table every server asks the human first."""

    kind: ClassVar[str] = "sampling"


class ElicitationPolicy(KindPolicy[ServerPattern]):
    """Which MCP servers may ask the human a question (``elicitation/create``: a form in the CLI or in Polter's
    window), by server name. Without an ``[elicitation]`` table every server may."""

    kind: ClassVar[str] = "elicitation"


class SkillPolicy(KindPolicy[SkillPattern]):
    """Which skills the pane's CLI may use (the adapter hides denied ones and vetoes their use)."""

    kind: ClassVar[str] = "skills"


class BuiltinPolicy(KindPolicy[BuiltinPattern]):
    """The CLI's own tools, by kind (shell, read, write, web, agent, meta, or a CLI tool's name), with
    Claude Code style arguments: ``shell(git push*)``, ``write(src/**)``, ``web(domain:github.com)``."""

    kind: ClassVar[str] = "builtins"


class PhasePolicy(BaseModel):
    """Research before action: each human request starts in the research phase, in which only the
    ``research`` tools are listed and callable; ``polter/escalate`` (or the human) moves the pane to
    the action phase, and the human's next line starts a new research phase."""

    model_config = ConfigDict(extra="forbid", strict=True)

    enabled: bool = Field(
        default=True, description="Whether the role uses phases (false turns off an inherited [phases])."
    )
    research: list[NamedToolPattern] = Field(
        default_factory=lambda: ["@read-only"],
        description="Tool patterns usable in the research phase (besides Polter's floor tools).",
    )
    builtins: list[BuiltinPattern] = Field(
        default_factory=lambda: list(DEFAULT_RESEARCH_BUILTINS),
        description="Built-in tool patterns usable in the research phase: by default reads, read-only shell "
        "commands, the web and the agent's own bookkeeping (todo lists, plans).",
    )
    escalate: Literal["allow", "ask"] = Field(
        default="allow",
        description="Whether the agent's own escalate call moves it to the action phase at once (allow) or "
        "asks the human first (ask). The human escalating from the UI is never asked.",
    )


class SandboxPolicy(BaseModel):
    """The kernel sandbox every pane runs in (its files, processes and network follow the role's rules). Only a
    plain shell pane may leave it, when its role says so: the human's own shell. An agent's pane never does."""

    model_config = ConfigDict(extra="forbid", strict=True)

    shell: Literal["confined", "unconfined"] | None = Field(
        default=None,
        description='"unconfined": a shell pane (no agent CLI) under this role runs outside the sandbox, with the '
        "human's full powers; an agent CLI's pane under the role stays sandboxed. Default (and inherited unless "
        'set): "confined".',
    )


def _check_role_glob(glob: str) -> str:
    if not ROLE_GLOB.match(glob):
        raise ValueError(f"{glob!r} is not a role name or glob (letters, digits, '.', '_', '-' and '*')")
    return glob


def _check_team_target(target: str) -> str:
    if target in TEAM_RELATIONS:
        return target
    if target.startswith("@"):
        raise ValueError(f"{target!r} is not a relation; the relations are {', '.join(TEAM_RELATIONS)}")
    return _check_role_glob(target)


TEAM_RELATIONS: tuple[str, ...] = ("@sender", "@opened")
"""Panes named by their relation to the caller: the pane that gave it its current task, the panes it opened."""
ROLE_GLOB = re.compile(r"^[A-Za-z0-9*][A-Za-z0-9_.*-]*$")
TeamTarget = Annotated[str, AfterValidator(_check_team_target)]
RoleGlob = Annotated[str, AfterValidator(_check_role_glob)]


class TeamPolicy(BaseModel):
    """Working with the other panes of the session through the ``polter`` floor server's team tools. Each list
    names panes by their role (a glob: ``reviewer``, ``*``) or by their relation to the caller (``@sender``: the
    pane that gave it its current task; ``@opened``: the panes it opened). A field the role does not set is
    inherited (``extends``), else its default: see and read every pane, nothing else."""

    model_config = ConfigDict(extra="forbid", strict=True)

    see: list[TeamTarget] | None = Field(
        default=None, description='Panes listed by `panes` (default ["*"]); the other verbs need this too.'
    )
    read: list[TeamTarget] | None = Field(
        default=None, description='Panes whose screen `read` returns (default ["*"]).'
    )
    send: list[TeamTarget] | None = Field(
        default=None, description="Panes `send` may hand a message to, typed as a prompt (default: none)."
    )
    wait: list[TeamTarget] | None = Field(default=None, description="Panes `wait` may wait on (default: none).")
    close: list[TeamTarget] | None = Field(
        default=None, description="Panes `close` may close, always only among the panes it opened (default: none)."
    )
    open: list[RoleGlob] | None = Field(
        default=None,
        description="Roles a pane opened with `open` may get (default: none). A role that grants anything the "
        "opener's does not is asked of the human, with the difference listed.",
    )
    messages_per_minute: int | None = Field(
        default=None, ge=1, le=10_000, description="Messages `send` may hand out per minute (default 20)."
    )
    depth: int | None = Field(
        default=None,
        ge=0,
        le=10,
        description="How deep panes opened by panes may nest: a pane the human opened is at depth 0 (default 2).",
    )


class Role(BaseModel):
    """One role: what the agent in a pane may use. One role per TOML file, named after the file."""

    model_config = ConfigDict(extra="forbid", strict=True)

    name: str = Field(description="The role's name; in a file it is the file's stem (coder.toml → coder).")
    description: str = Field(default="", description="What the role is for; its first line is shown in lists.")
    extends: str | None = Field(
        default=None,
        description="A role whose policy this one starts from: its defaults and exceptions apply unless this "
        "role names the same pattern or sets its own default. A role may extend the role it overrides "
        "(a project's coder.toml extending the bundled coder).",
    )
    servers: ServerPolicy = Field(default_factory=ServerPolicy, description="Which MCP servers the pane may reach.")
    tools: ToolPolicy = Field(default_factory=ToolPolicy, description="Which MCP tools the pane may call.")
    skills: SkillPolicy = Field(default_factory=SkillPolicy, description="Which skills the pane's CLI may use.")
    sampling: SamplingPolicy = Field(
        default_factory=SamplingPolicy,
        description="Which MCP servers may use the pane's model (sampling); the default without a table is ask.",
    )
    elicitation: ElicitationPolicy = Field(
        default_factory=ElicitationPolicy,
        description="Which MCP servers may ask the human questions (elicitation); the default without a table is "
        "allow.",
    )
    builtins: BuiltinPolicy = Field(
        default_factory=BuiltinPolicy,
        description="Which of the CLI's own tools (shell commands, file reads and writes, the web, sub-agents) "
        "the agent may use.",
    )
    gates: dict[GatePattern, Keywords] = Field(
        default_factory=dict,
        description="Tool pattern → keywords: a matching call runs only if the human's recent input in the pane "
        "contains one of the keywords (any language, case-insensitive). Otherwise it is denied.",
    )
    phases: PhasePolicy | None = Field(
        default=None, description="Research-then-action phases; absent means the pane is always in the action phase."
    )
    sandbox: SandboxPolicy = Field(
        default_factory=SandboxPolicy, description="The pane's kernel sandbox: whether a shell pane may leave it."
    )
    team: TeamPolicy = Field(
        default_factory=TeamPolicy,
        description="Which panes of the session the agent may see, read, send to, wait on, open and close.",
    )

    @field_validator("name")
    @classmethod
    def _name_is_valid(cls, name: str) -> str:
        if not ROLE_NAME.match(name):
            raise ValueError(
                f"{name!r} is not a role name (letters, digits, '.', '_' and '-', starting with a letter or digit)"
            )
        return name

    @field_validator("extends")
    @classmethod
    def _extends_is_a_name(cls, name: str | None) -> str | None:
        return None if name is None else cls._name_is_valid(name)

    def policies(
        self,
    ) -> tuple[ServerPolicy, ToolPolicy, SkillPolicy, BuiltinPolicy, SamplingPolicy, ElicitationPolicy]:
        return self.servers, self.tools, self.skills, self.builtins, self.sampling, self.elicitation

    def semantic_problems(self) -> list[Problem]:
        """Problems that only show in the whole role: a missing default, a pattern in two lists."""
        problems = []
        for policy in self.policies():
            stated = policy.kind in self.model_fields_set
            if policy.default is None and stated and self.extends is None:
                problems.append(
                    Problem(
                        f"{policy.kind}.default",
                        "missing: say allow, ask or deny; whatever the role does not name follows it "
                        "(a role cannot be a pure whitelist)",
                    )
                )
            seen: dict[str, Decision] = {}
            for pattern, decision in reversed(policy.exceptions()):
                if pattern in seen and seen[pattern] != decision:
                    problems.append(
                        Problem(
                            f"{policy.kind}.{decision}",
                            f'"{pattern}" is also in {policy.kind}.{seen[pattern]}; a pattern belongs in one list',
                            pattern,
                        )
                    )
                seen[pattern] = decision
        for pattern, decision, message in kernel_problems(
            [(pattern, decision) for pattern, decision in self.builtins.exceptions()]
        ):
            problems.append(Problem(f"builtins.{decision}", message, pattern))
        return problems
