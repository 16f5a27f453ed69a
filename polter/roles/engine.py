"""The one decision engine: a compiled role answers ``decide(request) -> Verdict``. Pure, no I/O.

How a tool call ``server/tool`` is decided (see ``docs/roles.md`` for examples):

1. Polter's own floor tools (server ``polter``) are always allowed; a deny on them is ignored and
   the verdict says so.
2. Two levels each give a decision, by the same order — a matching ``deny``, else a matching ``ask``,
   else a matching ``allow``, else that level's ``default``:

   - the *server level* (``servers.*`` against the server's name) says whether the pane may reach
     the server at all;
   - the *tool level* (``tools.*`` against ``server/tool`` and the tool's annotations, and a pattern's
     conditions on the call's arguments: ``fs/write_file(path=src/**)``).

   The stricter of the two wins (deny > ask > allow). So deny at either level always wins, a server
   that asks makes every call of its tools ask, and a tool is allowed only if both levels allow it.
3. Then gates and phases may tighten the result, never loosen it: a gated call whose keywords the
   human has not typed is denied; in the research phase, a tool not listed for research is denied.

Decisions are cached per (server, tool, annotations): the static part of a decision is computed once;
gates, phases and argument conditions, which depend on the request, are checked on top of the cached
entry (which knows the few argument rules that could apply to its tool, so a thousand rules cost the
same as three).

A server's own requests of the pane (``sampling`` of the pane's model, ``elicitation`` of the human) are
decided by ``[sampling]`` and ``[elicitation]`` against the server's name; a server the role denies may
do neither.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NamedTuple

from polter.errors import RoleError
from polter.protocol import FLOOR_SERVER, Decision, Phase
from polter.roles.builtin_matcher import BuiltinMatcher
from polter.roles.builtin_verdicts import BuiltinRequest, BuiltinRules, decide_builtin
from polter.roles.builtins import is_builtin_pattern, parse_builtin_pattern
from polter.roles.models import DECISIONS, Role
from polter.roles.patterns import (
    ArgumentRule,
    NameMatcher,
    ToolMatcher,
    ToolPattern,
    keyword_regex,
    normalise_text,
    parse_tool_pattern,
)
from polter.roles.team import DEFAULT_TEAM, TeamRules, compile_team, decide_cli_agent

__all__ = [
    "BuiltinRequest",
    "ESCALATE_TOOL",
    "FLOOR_SERVER",
    "CompiledRole",
    "Phase",
    "Request",
    "ServerRequest",
    "SkillRequest",
    "ToolCallRequest",
    "UpstreamRequest",
    "Verdict",
    "compile_role",
    "short_path",
]

ESCALATE_TOOL = "escalate"

_STRICTNESS = {decision: rank for rank, decision in enumerate(DECISIONS)}
_CACHE_LIMIT = 100_000


@dataclass(frozen=True, slots=True)
class ToolCallRequest:
    """A call (or a listing) of one MCP tool.

    ``read_only``/``destructive`` are the tool's ``readOnlyHint``/``destructiveHint`` annotations, None
    when the upstream does not give them. ``recent_input`` is what the human typed into the pane
    recently (the gateway chooses the window); ``phase`` is the pane's phase, None meaning the role's
    first phase (research, for a role with phases).
    """

    server: str
    tool: str
    read_only: bool | None = None
    destructive: bool | None = None
    recent_input: Sequence[str] = ()
    phase: Phase | None = None
    arguments: Mapping[str, Any] | None = None
    """The call's arguments, for the rules that name some; None for a listing (what a tool is, not a call)."""


@dataclass(frozen=True, slots=True)
class ServerRequest:
    """Whether the pane may reach (see, connect to) one MCP server."""

    server: str


@dataclass(frozen=True, slots=True)
class UpstreamRequest:
    """Whether one MCP server may ask something of the pane: its model (``sampling``) or its human
    (``elicitation``)."""

    server: str
    kind: Literal["sampling", "elicitation"]


@dataclass(frozen=True, slots=True)
class SkillRequest:
    """Whether the pane's CLI may show and use one skill."""

    skill: str


Request = ToolCallRequest | ServerRequest | SkillRequest | BuiltinRequest | UpstreamRequest


@dataclass(frozen=True, slots=True)
class Verdict:
    """A decision, the rule that produced it, and a reason written for the agent and the human."""

    decision: Decision
    rule: str
    reason: str
    by_arguments: bool = False
    """Decided by a rule on the call's arguments: a human's approval covers these arguments only."""

    def as_dict(self) -> dict[str, str]:
        return {"decision": self.decision, "rule": self.rule, "reason": self.reason}


def short_path(path: Path) -> str:
    """A path as people read it: relative to the working directory when inside it, else with ``~``."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        pass
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except (ValueError, RuntimeError):
        return str(path)


@dataclass(frozen=True, slots=True)
class _Rule:
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
class _KindRules:
    """A kind's merged default and exceptions, compiled to one matcher per decision."""

    kind: str
    default: _Rule
    exceptions: Mapping[str, _Rule]

    def by_decision(self) -> Iterable[tuple[Decision, list[_Rule]]]:
        for decision in ("deny", "ask", "allow"):
            yield decision, [rule for rule in self.exceptions.values() if rule.decision == decision]


@dataclass(frozen=True, slots=True)
class _Gate:
    rule_label: str
    keywords: tuple[str, ...]
    regex: re.Pattern[str]


class _PhaseRules(NamedTuple):
    """A role's phases, after inheritance: the research tools, how escalation is decided, and the file."""

    research: tuple[str, ...]
    escalate: Decision
    origin: Path | None
    builtins: tuple[str, ...] = ()


class _Entry:
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

    def __init__(self, decision: Decision, final: bool, subject: str, rule: _Rule, hint_absent: bool = False) -> None:
        self.decision = decision
        self.final = final  # a floor tool or a deny: nothing can change it
        self.subject = subject
        self.rule = rule  # the deciding rule (for a floor tool: the strictest rule it overrides)
        self.hint_absent = hint_absent  # no destructiveHint: said in the reason when @destructive decided
        self.gates: tuple[_Gate, ...] = ()
        self.research_hidden = False  # not a research tool: denied and hidden in the research phase
        self.verdict: Verdict | None = None
        self.phase_verdict: Verdict | None = None
        self.argument_rules: tuple[tuple[ArgumentRule, _Rule], ...] = ()
        """The rules with argument conditions whose tool part matches this tool, strictest first."""
        self.server_rule: _Rule | None = None
        self.tool_rule: _Rule | None = None  # the tool level's rule on the name alone (an exception or the default)


class _ArgumentCandidates:
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


class CompiledRole:
    """A role compiled for fast decisions. Immutable; a new version of the role is a new object."""

    def __init__(
        self,
        role: Role,
        *,
        source: Path | None,
        description: str,
        kinds: tuple[_KindRules, _KindRules, _KindRules, _KindRules],
        requests: tuple[_KindRules, _KindRules],
        gates: Mapping[str, tuple[tuple[str, ...], Path | None]],
        research: _PhaseRules | None,
        warnings: Sequence[RoleError],
        unconfined_shell: bool = False,
        team: TeamRules = DEFAULT_TEAM,
    ) -> None:
        self.role = role
        """The role as written (its own file, before inheritance)."""
        self.name = role.name
        self.description = description
        self.source = source
        self.extends = role.extends
        self.warnings = tuple(warnings)
        """Things the role says that Polter does not honour (a deny on a floor tool)."""
        self.unconfined_shell = unconfined_shell
        """A shell pane (not an agent's) under this role runs outside the kernel sandbox ([sandbox] shell)."""
        self.team = team
        """Which panes of the session the pane may see, read, send to, wait on, open and close ([team])."""
        self._kinds = kinds
        self._servers, self._tools, self._skills, self._builtins = kinds
        self._requests = requests
        self._sampling, self._elicitation = requests
        self._server_matcher = self._name_matcher(self._servers)
        self._skill_matcher = self._name_matcher(self._skills)
        self._request_matchers = {rules.kind: self._name_matcher(rules) for rules in requests}
        parsed = [(parse_tool_pattern(pattern), rule) for pattern, rule in self._tools.exceptions.items()]
        self._tool_matcher = ToolMatcher(
            (pattern, _STRICTNESS[rule.decision]) for pattern, rule in parsed if not pattern.arguments
        )
        self._argument_rules = sorted(
            (
                (ToolMatcher([(pattern, 0)]), ArgumentRule(pattern, any_element=rule.decision != "allow"), rule)
                for pattern, rule in parsed
                if pattern.arguments
            ),
            key=lambda entry: -_STRICTNESS[entry[2].decision],
        )
        self._argument_candidates = _ArgumentCandidates(rule[1].pattern for rule in self._argument_rules)
        self._argument_verdicts: dict[tuple[str, str], Verdict] = {}
        self._gates = gates
        self._gate_matchers = [
            (
                ToolMatcher([(parse_tool_pattern(pattern), 0)]),
                _Gate(self._label("gates", pattern, origin), keywords, keyword_regex(keywords)),
            )
            for pattern, (keywords, origin) in gates.items()
            if not is_builtin_pattern(pattern)
        ]
        self._research = research
        self.has_phases = research is not None
        self._research_matcher = (
            ToolMatcher((parse_tool_pattern(p), 0) for p in research.research) if research else None
        )
        shown = f" ({short_path(research.origin)})" if research and research.origin else ""
        self._research_label = f"phases.research{shown}"
        self._escalate_label = f"phases.escalate{shown}"
        self._builtin_rules = self._compile_builtins(gates, research, shown)
        self._cache: dict[tuple[str, str, bool | None, bool | None], _Entry] = {}
        self._server_cache: dict[str, tuple[Verdict, _Rule]] = {}
        self._skill_cache: dict[str, Verdict] = {}
        self._request_cache: dict[tuple[str, str], Verdict] = {}

    def __repr__(self) -> str:
        return f"<CompiledRole {self.name!r} from {self.source}>"

    @staticmethod
    def _label(kind: str, pattern: str, origin: Path | None) -> str:
        return f'{kind}["{pattern}"]' + (f" ({short_path(origin)})" if origin else "")

    def _compile_builtins(
        self, gates: Mapping[str, tuple[tuple[str, ...], Path | None]], research: _PhaseRules | None, shown: str
    ) -> BuiltinRules:
        rules = self._builtins
        labels = {pattern: (rule.decision, rule.label) for pattern, rule in rules.exceptions.items()}
        matcher = BuiltinMatcher(
            (parse_builtin_pattern(pattern), _STRICTNESS[rule.decision]) for pattern, rule in rules.exceptions.items()
        )
        builtin_gates = tuple(
            (
                BuiltinMatcher([(parse_builtin_pattern(pattern), 0)]),
                self._label("gates", pattern, origin),
                keywords,
                keyword_regex(keywords),
            )
            for pattern, (keywords, origin) in gates.items()
            if is_builtin_pattern(pattern)
        )
        return BuiltinRules(
            role=self.name,
            matcher=matcher,
            labels=labels,
            default=(rules.default.decision, rules.default.label, rules.default.implicit),
            research=BuiltinMatcher((parse_builtin_pattern(p), 0) for p in research.builtins) if research else None,
            research_label=f"phases.builtins{shown}",
            gates=builtin_gates,
        )

    @staticmethod
    def _name_matcher(kind: _KindRules) -> NameMatcher:
        return NameMatcher((pattern, _STRICTNESS[rule.decision], pattern) for pattern, rule in kind.exceptions.items())

    # -- the public questions -------------------------------------------------------------------

    def decide(self, request: Request) -> Verdict:
        """The decision on ``request``: allow, ask or deny, with the rule and a reason."""
        if type(request) is ToolCallRequest:
            entry = self._entry(request)
            if entry.final:
                return entry.verdict or self._base_verdict(entry)
            base = entry.verdict or self._base_verdict(entry)
            if entry.argument_rules and request.arguments is not None:
                base = self._with_arguments(entry, request.arguments, base)
                if base.decision == "deny":
                    return base
            verdict = self._through_gates(entry, request, base) if entry.gates else base
            if entry.research_hidden and request.phase != "action" and verdict.decision != "deny":
                return entry.phase_verdict or self._phase_verdict(entry)
            return verdict
        if isinstance(request, ServerRequest):
            return self._server_verdict(request.server)[0]
        if isinstance(request, SkillRequest):
            return self._skill_verdict(request.skill)
        if isinstance(request, BuiltinRequest):
            verdict = decide_builtin(self._builtin_rules, request, Verdict)
            if request.call.kind != "agent" or verdict.decision == "deny":
                return verdict
            return decide_cli_agent(self.name, self.team, request.call.cli_tool, verdict, Verdict)
        if isinstance(request, UpstreamRequest):
            return self._request_verdict(request)
        raise TypeError(f"not a request: {request!r}")

    def visible(self, request: ToolCallRequest) -> bool:
        """Whether the tool is listed to the pane (the listing layer's question).

        Hidden: what the role denies outright, and in the research phase what is not a research tool.
        Gated and asked tools stay visible (a call explains what is missing). Recent input is ignored.
        """
        entry = self._entry(request)
        if entry.final:
            return entry.decision != "deny"
        return not entry.research_hidden or request.phase == "action"

    def describe(self) -> dict[str, Any]:
        """The effective policy (after inheritance), for ``whoami`` and ``polter roles``."""

        def kind(rules: _KindRules) -> dict[str, Any]:
            described: dict[str, Any] = {"default": rules.default.decision}
            for decision, exceptions in rules.by_decision():
                described[decision] = [rule.pattern for rule in exceptions]
            return described

        return {
            "name": self.name,
            "description": self.description,
            "source": str(self.source) if self.source else None,
            "extends": self.extends,
            "servers": kind(self._servers),
            "tools": kind(self._tools),
            "skills": kind(self._skills),
            "builtins": kind(self._builtins),
            "sampling": kind(self._sampling),
            "elicitation": kind(self._elicitation),
            "gates": {pattern: list(keywords) for pattern, (keywords, _) in self._gates.items()},
            "phases": {
                "research": list(self._research.research),
                "builtins": list(self._research.builtins),
                "escalate": self._research.escalate,
            }
            if self._research
            else None,
            "sandbox": {"shell": "unconfined" if self.unconfined_shell else "confined"},
            "team": self.team.describe(),
        }

    @property
    def fingerprint(self) -> str:
        """Equal for two compilations that decide alike and name the same rules and files."""
        labels = [
            rule.label for kind in (*self._kinds, *self._requests) for rule in (kind.default, *kind.exceptions.values())
        ]
        gates = {pattern: str(origin) for pattern, (_keywords, origin) in self._gates.items()}
        return json.dumps([self.describe(), labels, gates, self._research_label], sort_keys=True, ensure_ascii=False)

    # -- the static part, cached ----------------------------------------------------------------

    def _server_verdict(self, server: str) -> tuple[Verdict, _Rule]:
        cached = self._server_cache.get(server)
        if cached is None:
            rule = self._name_rule(self._servers, self._server_matcher, server)
            if server == FLOOR_SERVER:
                cached = (_floor_verdict(f"the server {server}", self.name, rule), rule)
            else:
                cached = (Verdict(rule.decision, rule.label, _reason(self.name, f"the server {server}", rule)), rule)
            self._remember(self._server_cache, server, cached)
        return cached

    def _skill_verdict(self, skill: str) -> Verdict:
        verdict = self._skill_cache.get(skill)
        if verdict is None:
            rule = self._name_rule(self._skills, self._skill_matcher, skill)
            verdict = Verdict(rule.decision, rule.label, _reason(self.name, f"the skill {skill}", rule))
            self._remember(self._skill_cache, skill, verdict)
        return verdict

    def _request_verdict(self, request: UpstreamRequest) -> Verdict:
        """A server's request of the pane: its [sampling] or [elicitation] rule, unless the server is denied."""
        key = (request.kind, request.server)
        verdict = self._request_cache.get(key)
        if verdict is None:
            rules = self._sampling if request.kind == "sampling" else self._elicitation
            rule = self._name_rule(rules, self._request_matchers[request.kind], request.server)
            server_verdict, server_rule = self._server_verdict(request.server)
            if server_rule.decision == "deny" and request.server != FLOOR_SERVER:
                verdict = server_verdict
            else:
                what = (
                    "use the pane's model (sampling)" if request.kind == "sampling" else "ask the human (elicitation)"
                )
                verdict = Verdict(
                    rule.decision,
                    rule.label,
                    _reason(self.name, f"the server {request.server} to {what}", rule, verb_for=request.kind),
                )
            self._remember(self._request_cache, key, verdict)
        return verdict

    @staticmethod
    def _name_rule(kind: _KindRules, matcher: NameMatcher, name: str) -> _Rule:
        found = matcher.best(name)
        return kind.default if found is None else kind.exceptions[found[1]]

    def _tool_rule(self, request: ToolCallRequest) -> _Rule:
        found = self._tool_matcher.best(request.server, request.tool, request.read_only, request.destructive)
        return self._tools.default if found is None else self._tools.exceptions[found[1]]

    def _entry(self, request: ToolCallRequest) -> _Entry:
        key = (request.server, request.tool, request.read_only, request.destructive)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._compute_entry(request)
            self._remember(self._cache, key, entry)
        return entry

    @staticmethod
    def _remember(cache: dict[Any, Any], key: Any, value: Any) -> None:
        if len(cache) >= _CACHE_LIMIT:
            cache.clear()
        cache[key] = value

    def _compute_entry(self, request: ToolCallRequest) -> _Entry:
        subject = f"{request.server}/{request.tool}"
        server_rule = self._server_verdict(request.server)[1]
        tool_rule = self._tool_rule(request)
        if request.server == FLOOR_SERVER:
            overridden = max((server_rule, tool_rule), key=lambda rule: _STRICTNESS[rule.decision])
            if request.tool == ESCALATE_TOOL and self._research is not None and self._research.escalate == "ask":
                entry = _Entry("ask", True, subject, overridden)
                entry.verdict = Verdict("ask", self._escalate_label, _escalate_reason(self.name))
                return entry
            return _Entry("allow", True, subject, overridden)
        rule = _stricter(server_rule, tool_rule)
        entry = _Entry(rule.decision, rule.decision == "deny", subject, rule, request.destructive is None)
        if entry.final:
            return entry
        entry.server_rule, entry.tool_rule = server_rule, tool_rule
        hints = (request.server, request.tool, request.read_only, request.destructive)
        rules = self._argument_rules
        entry.argument_rules = tuple(
            (rules[index][1], rules[index][2])
            for index in self._argument_candidates.of(request.server, request.tool)
            if rules[index][0].best(*hints) is not None
        )
        entry.gates = tuple(gate for matcher, gate in self._gate_matchers if matcher.best(*hints) is not None)
        entry.research_hidden = self._research_matcher is not None and self._research_matcher.best(*hints) is None
        return entry

    def _base_verdict(self, entry: _Entry) -> Verdict:
        rule = entry.rule
        if entry.final and entry.decision == "allow":
            verdict = _floor_verdict(entry.subject, self.name, rule)
        elif rule.kind == "servers":
            verdict = self._server_verdict(entry.subject.split("/", 1)[0])[0]
        else:
            verdict = Verdict(rule.decision, rule.label, _reason(self.name, entry.subject, rule, entry.hint_absent))
        entry.verdict = verdict
        return verdict

    def _phase_verdict(self, entry: _Entry) -> Verdict:
        entry.phase_verdict = Verdict("deny", self._research_label, _phase_reason(entry.subject, self.name))
        return entry.phase_verdict

    def _with_arguments(self, entry: _Entry, arguments: Mapping[str, Any], base: Verdict) -> Verdict:
        """The verdict once the rules on this call's arguments are counted. The strictest matching one is an
        exception like any: it beats the tool level's default, and beats a name exception only if stricter;
        then the stricter of the two levels wins as always."""
        rule = next((rule for rules, rule in entry.argument_rules if rules.matches(arguments)), None)
        if rule is None:  # (they are strictest first: the first that matches is the one)
            return base
        assert entry.server_rule is not None and entry.tool_rule is not None
        tool_rule = entry.tool_rule
        if tool_rule.pattern is None or _STRICTNESS[rule.decision] > _STRICTNESS[tool_rule.decision]:
            tool_rule = rule
        decided = _stricter(entry.server_rule, tool_rule)
        if decided is not rule:
            return base
        key = (entry.subject, rule.label)
        verdict = self._argument_verdicts.get(key)
        if verdict is None:
            reason = (
                f"The role {self.name} {_VERBS[rule.decision]} {entry.subject} with these arguments: they match "
                f'"{rule.pattern}" in tools.{rule.decision}.'
            )
            verdict = Verdict(rule.decision, rule.label, reason, by_arguments=True)
            self._remember(self._argument_verdicts, key, verdict)
        return verdict

    def _through_gates(self, entry: _Entry, request: ToolCallRequest, base: Verdict) -> Verdict:
        """The base verdict if the human's words open every gate (and which words did), else a deny."""
        said = normalise_text("\n".join(request.recent_input))
        opened = []
        for gate in entry.gates:
            match = gate.regex.search(said)
            if match is None:
                return Verdict("deny", gate.rule_label, _gate_reason(entry.subject, self.name, gate.keywords))
            opened.append(f'"{match.group(0)}" opens {gate.rule_label}')
        return Verdict(base.decision, base.rule, f"{base.reason} The human asked for it: {'; '.join(opened)}.")


def _stricter(server_rule: _Rule, tool_rule: _Rule) -> _Rule:
    """The rule whose decision wins. On a tie an exception beats a default (it explains more); then
    a deny is blamed on the server (the broader reason), anything else on the tool."""
    server_rank, tool_rank = _STRICTNESS[server_rule.decision], _STRICTNESS[tool_rule.decision]
    if server_rank != tool_rank:
        return server_rule if server_rank > tool_rank else tool_rule
    if (server_rule.pattern is None) != (tool_rule.pattern is None):
        return server_rule if server_rule.pattern is not None else tool_rule
    return server_rule if server_rule.decision == "deny" else tool_rule


_VERBS = {"deny": "denies", "ask": "asks the human before each use of", "allow": "allows"}
_REQUEST_VERBS = {"deny": "does not allow", "ask": "asks the human before allowing", "allow": "allows"}


def _reason(role: str, subject: str, rule: _Rule, hint_absent: bool = False, verb_for: str | None = None) -> str:
    """A sentence for the agent and the human: what the role decided about ``subject``, and why."""
    verbs = _REQUEST_VERBS if verb_for is not None else _VERBS
    said = f"The role {role} {verbs[rule.decision]} {subject}"
    if rule.pattern is not None:
        said += f': it matches "{rule.pattern}" in {rule.kind}.{rule.decision}'
        if hint_absent and rule.pattern.endswith("@destructive"):
            said += " (the tool has no destructiveHint annotation, and MCP counts such a tool as destructive)"
    elif rule.implicit and verb_for is not None:
        every = "every server's sampling asks the human first" if rule.decision == "ask" else "every server may ask"
        said += f": the role has no [{rule.kind}] table, and without one {every}"
    elif rule.implicit:
        said += f": the role has no [{rule.kind}] table, so {rule.kind} it does not name are allowed"
    else:
        said += f': it matches none of the role\'s {rule.kind} exceptions, and {rule.kind}.default is "{rule.decision}"'
    if rule.kind == "servers" and rule.decision != "allow":
        said += ", which covers every tool of the server"
    return said + "."


def _floor_verdict(subject: str, role: str, overridden: _Rule) -> Verdict:
    reason = f"{subject} is Polter's own: every role allows its floor tools."
    if overridden.decision != "allow":
        reason += f" The role {role}'s {overridden.label} is ignored for it."
    return Verdict("allow", "floor", reason)


def _gate_reason(subject: str, role: str, keywords: Sequence[str]) -> str:
    listed = ", ".join(f'"{keyword}"' for keyword in keywords)
    return (
        f"{subject} is gated: the role {role} runs it only when the human has asked for it in this pane, "
        f"and their recent input does not. Ask the human to request it in their own words (the request "
        f"must mention one of: {listed}); do not retry until they have."
    )


def _escalate_reason(role: str) -> str:
    return (
        f"The role {role} asks the human before the agent moves from the research phase to the action "
        f'phase (phases.escalate = "ask").'
    )


def _phase_reason(subject: str, role: str) -> str:
    return (
        f"This pane is in the research phase of the role {role}: only research (read-only) tools can be "
        f"used, and {subject} is not one. Finish researching, then call the escalate tool of the "
        f"{FLOOR_SERVER} server (or ask the human) to move to the action phase, and call it again."
    )


_IMPLICIT_DEFAULTS: dict[str, Decision] = {"sampling": "ask"}
"""A kind's default when no role in the chain writes its table: allow, but sampling asks the human first."""


def _kind_rules(policy_kind: str, role: Role, source: Path | None, parent: _KindRules | None) -> _KindRules:
    policy = getattr(role, policy_kind)
    shown = short_path(source) if source is not None else None
    if policy.default is not None:
        default = _Rule(policy_kind, policy.default, None, source, shown)
    elif parent is not None:
        default = parent.default
    else:
        default = _Rule(policy_kind, _IMPLICIT_DEFAULTS.get(policy_kind, "allow"), None, source, shown, implicit=True)
    exceptions: dict[str, _Rule] = dict(parent.exceptions) if parent is not None else {}
    for pattern, decision in reversed(policy.exceptions()):  # allow, ask, deny: the stricter list wins a duplicate
        exceptions.pop(pattern, None)
        exceptions[pattern] = _Rule(policy_kind, decision, pattern, source, shown)
    return _KindRules(policy_kind, default, exceptions)


def _floor_warnings(kinds: Sequence[_KindRules], source: Path | None) -> list[RoleError]:
    """A deny or ask aimed at Polter's floor server is not honoured: say so once, at load time."""
    warnings = []
    servers, tools, _skills, _builtins = kinds
    for rules in (servers, tools):
        for rule in rules.exceptions.values():
            if rule.decision == "allow" or rule.origin != source or rule.pattern is None:
                continue  # (an exception always has a pattern; a default has none)
            server = rule.pattern if rules.kind == "servers" else parse_tool_pattern(rule.pattern).server
            if server != "*" and NameMatcher([(server, 0, server)]).best(FLOOR_SERVER) is not None:
                warnings.append(
                    RoleError(
                        f'"{rule.pattern}" is ignored for {FLOOR_SERVER}/*: Polter\'s floor tools are always allowed',
                        path=source,
                        field=f"{rules.kind}.{rule.decision}",
                    )
                )
    return warnings


def compile_role(role: Role, *, source: Path | None = None, parent: CompiledRole | None = None) -> CompiledRole:
    """Compile ``role`` (from the file ``source``) on top of ``parent``, the role it extends.

    Raises:
        RoleError: the role is inconsistent (a missing default, a pattern in two lists), or it
            extends a role and no parent was given.
    """
    if role.extends is not None and (parent is None or parent.name != role.extends):
        raise RoleError(f"unknown role {role.extends!r}", path=source, field="extends")
    if role.extends is None and parent is not None:
        raise RoleError(f"the role extends nothing, yet a parent ({parent.name}) was given", path=source)
    problems = role.semantic_problems()
    if problems:
        raise RoleError(problems[0].message, path=source, field=problems[0].field)
    parent_kinds = parent._kinds if parent is not None else (None, None, None, None)
    servers, tools, skills, builtins = (
        _kind_rules(kind, role, source, parent_kind)
        for kind, parent_kind in zip(("servers", "tools", "skills", "builtins"), parent_kinds, strict=True)
    )
    kinds = (servers, tools, skills, builtins)
    parent_requests = parent._requests if parent is not None else (None, None)
    sampling, elicitation = (
        _kind_rules(kind, role, source, parent_kind)
        for kind, parent_kind in zip(("sampling", "elicitation"), parent_requests, strict=True)
    )
    gates = dict(parent._gates) if parent is not None else {}
    for pattern, keywords in role.gates.items():
        gates[pattern] = (tuple(keywords), source)
    research = parent._research if parent is not None else None
    if role.phases is not None:
        phases = role.phases
        research = (
            _PhaseRules(tuple(phases.research), phases.escalate, source, tuple(phases.builtins))
            if phases.enabled
            else None
        )
    description = role.description if "description" in role.model_fields_set or parent is None else parent.description
    shell = role.sandbox.shell
    unconfined_shell = shell == "unconfined" if shell is not None else parent is not None and parent.unconfined_shell
    return CompiledRole(
        role,
        source=source,
        description=description,
        kinds=kinds,
        requests=(sampling, elicitation),
        gates=gates,
        research=research,
        warnings=_floor_warnings(kinds, source),
        unconfined_shell=unconfined_shell,
        team=compile_team(role.team, parent.team if parent is not None else None),
    )
