"""A role's rules compiled kind by kind (servers, tools, skills, builtins, sampling, elicitation): each
default and exception with the file it came from, merged over the parent's, and the cached part of a tool's
decision. The engine (:mod:`polter.roles.engine`) decides with them."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from polter.protocol import Decision
from polter.roles.models import DECISIONS, Role
from polter.roles.patterns import ArgumentRule, ToolPattern
from polter.roles.requests import Verdict, short_path

STRICTNESS = {decision: rank for rank, decision in enumerate(DECISIONS)}
"""deny > ask > allow."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One default or exception of a role, and the file it came from (which may be a parent's)."""

    kind: str
    decision: Decision
    pattern: str | None
    origin: Path | None
    shown_origin: str | None  # short_path(origin), computed once per file
    implicit: bool = False
    label: str = field(init=False)
    """How a verdict names the rule: ``tools.deny["*/delete_*"] (roles/coder.toml)``."""

    def __post_init__(self) -> None:
        where = f"{self.kind}.default" if self.pattern is None else f'{self.kind}.{self.decision}["{self.pattern}"]'
        label = where if self.shown_origin is None or self.implicit else f"{where} ({self.shown_origin})"
        object.__setattr__(self, "label", label)


@dataclass(frozen=True, slots=True)
class KindRules:
    """A kind's merged default and exceptions, compiled to one matcher per decision."""

    kind: str
    default: Rule
    exceptions: Mapping[str, Rule]

    def by_decision(self) -> Iterable[tuple[Decision, list[Rule]]]:
        for decision in ("deny", "ask", "allow"):
            yield decision, [rule for rule in self.exceptions.values() if rule.decision == decision]


@dataclass(frozen=True, slots=True)
class Gate:
    rule_label: str
    keywords: tuple[str, ...]
    regex: re.Pattern[str]


class PhaseRules(NamedTuple):
    """A role's phases, after inheritance: the research tools, how escalation is decided, and the file."""

    research: tuple[str, ...]
    escalate: Decision
    origin: Path | None
    builtins: tuple[str, ...] = ()


class Entry:
    """The cached, request-independent part of a tool's decision. Its texts are written on first
    use: filtering a listing needs only the decisions."""

    __slots__ = (
        "decision",
        "final",
        "gates",
        "research_hidden",
        "subject",
        "rule",
        "hint_absent",
        "verdict",
        "phase_verdict",
        "argument_rules",
        "server_rule",
        "tool_rule",
    )

    def __init__(self, decision: Decision, final: bool, subject: str, rule: Rule, hint_absent: bool = False) -> None:
        self.decision = decision
        self.final = final  # a floor tool or a deny: nothing can change it
        self.subject = subject
        self.rule = rule  # the deciding rule (for a floor tool: the strictest rule it overrides)
        self.hint_absent = hint_absent  # no destructiveHint: said in the reason when @destructive decided
        self.gates: tuple[Gate, ...] = ()
        self.research_hidden = False  # not a research tool: denied and hidden in the research phase
        self.verdict: Verdict | None = None
        self.phase_verdict: Verdict | None = None
        self.argument_rules: tuple[tuple[ArgumentRule, Rule], ...] = ()
        """The rules with argument conditions whose tool part matches this tool, strictest first."""
        self.server_rule: Rule | None = None
        self.tool_rule: Rule | None = None  # the tool level's rule on the name alone (an exception or the default)


class ArgumentCandidates:
    """Which argument rules could match a tool, by the shape of their tool part (an exact name, a glob on a
    literal server, anything else), so that building a tool's entry tries a few of a hundred rules, not all."""

    __slots__ = ("_anywhere", "_by_server", "_exact")

    def __init__(self, patterns: Iterable[ToolPattern]) -> None:
        self._exact: dict[tuple[str, str], list[int]] = {}
        self._by_server: dict[str, list[int]] = {}
        self._anywhere: list[int] = []
        for index, pattern in enumerate(patterns):
            if pattern.tool is None or "*" in pattern.server:
                self._anywhere.append(index)
            elif "*" in pattern.tool:
                self._by_server.setdefault(pattern.server, []).append(index)
            else:
                self._exact.setdefault((pattern.server, pattern.tool), []).append(index)

    def of(self, server: str, tool: str) -> list[int]:
        """The rules' indices (in the rules' order: strictest first) whose tool part may match."""
        found = [*self._exact.get((server, tool), ()), *self._by_server.get(server, ()), *self._anywhere]
        return sorted(found) if len(found) > 1 else found


def stricter(server_rule: Rule, tool_rule: Rule) -> Rule:
    """The rule whose decision wins. On a tie an exception beats a default (it explains more); then
    a deny is blamed on the server (the broader reason), anything else on the tool."""
    server_rank, tool_rank = STRICTNESS[server_rule.decision], STRICTNESS[tool_rule.decision]
    if server_rank != tool_rank:
        return server_rule if server_rank > tool_rank else tool_rule
    if (server_rule.pattern is None) != (tool_rule.pattern is None):
        return server_rule if server_rule.pattern is not None else tool_rule
    return server_rule if server_rule.decision == "deny" else tool_rule


_IMPLICIT_DEFAULTS: dict[str, Decision] = {"sampling": "ask"}
"""A kind's default when no role in the chain writes its table: allow, but sampling asks the human first."""


def kind_rules(policy_kind: str, role: Role, source: Path | None, parent: KindRules | None) -> KindRules:
    policy = getattr(role, policy_kind)
    shown = short_path(source) if source is not None else None
    if policy.default is not None:
        default = Rule(policy_kind, policy.default, None, source, shown)
    elif parent is not None:
        default = parent.default
    else:
        default = Rule(policy_kind, _IMPLICIT_DEFAULTS.get(policy_kind, "allow"), None, source, shown, implicit=True)
    exceptions: dict[str, Rule] = dict(parent.exceptions) if parent is not None else {}
    for pattern, decision in reversed(policy.exceptions()):  # allow, ask, deny: the stricter list wins a duplicate
        exceptions.pop(pattern, None)
        exceptions[pattern] = Rule(policy_kind, decision, pattern, source, shown)
    return KindRules(policy_kind, default, exceptions)
