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
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from polter.errors import RoleError
from polter.protocol import FLOOR_SERVER, Phase
from polter.roles.builtin_matcher import BuiltinMatcher
from polter.roles.builtin_verdicts import BuiltinRequest, BuiltinRules, decide_builtin
from polter.roles.builtins import is_builtin_pattern, parse_builtin_pattern
from polter.roles.models import Role
from polter.roles.patterns import (
    ArgumentRule,
    NameMatcher,
    ToolMatcher,
    keyword_regex,
    normalise_text,
    parse_tool_pattern,
)
from polter.roles.reasons import VERBS, escalate_reason, floor_verdict, gate_reason, phase_reason, reason
from polter.roles.requests import (
    Request,
    ServerRequest,
    SkillRequest,
    ToolCallRequest,
    UpstreamRequest,
    Verdict,
    short_path,
)
from polter.roles.rule_kinds import (
    STRICTNESS,
    ArgumentCandidates,
    Entry,
    Gate,
    KindRules,
    PhaseRules,
    Rule,
    kind_rules,
    stricter,
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

_CACHE_LIMIT = 100_000


class CompiledRole:
    """A role compiled for fast decisions. Immutable; a new version of the role is a new object."""

    def __init__(
        self,
        role: Role,
        *,
        source: Path | None,
        description: str,
        kinds: tuple[KindRules, KindRules, KindRules, KindRules],
        requests: tuple[KindRules, KindRules],
        gates: Mapping[str, tuple[tuple[str, ...], Path | None]],
        research: PhaseRules | None,
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
            (pattern, STRICTNESS[rule.decision]) for pattern, rule in parsed if not pattern.arguments
        )
        self._argument_rules = sorted(
            (
                (ToolMatcher([(pattern, 0)]), ArgumentRule(pattern, any_element=rule.decision != "allow"), rule)
                for pattern, rule in parsed
                if pattern.arguments
            ),
            key=lambda entry: -STRICTNESS[entry[2].decision],
        )
        self._argument_candidates = ArgumentCandidates(rule[1].pattern for rule in self._argument_rules)
        self._argument_verdicts: dict[tuple[str, str], Verdict] = {}
        self._gates = gates
        self._gate_matchers = [
            (
                ToolMatcher([(parse_tool_pattern(pattern), 0)]),
                Gate(self._label("gates", pattern, origin), keywords, keyword_regex(keywords)),
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
        self._cache: dict[tuple[str, str, bool | None, bool | None], Entry] = {}
        self._server_cache: dict[str, tuple[Verdict, Rule]] = {}
        self._skill_cache: dict[str, Verdict] = {}
        self._request_cache: dict[tuple[str, str], Verdict] = {}

    def __repr__(self) -> str:
        return f"<CompiledRole {self.name!r} from {self.source}>"

    @staticmethod
    def _label(kind: str, pattern: str, origin: Path | None) -> str:
        return f'{kind}["{pattern}"]' + (f" ({short_path(origin)})" if origin else "")

    def _compile_builtins(
        self, gates: Mapping[str, tuple[tuple[str, ...], Path | None]], research: PhaseRules | None, shown: str
    ) -> BuiltinRules:
        rules = self._builtins
        labels = {pattern: (rule.decision, rule.label) for pattern, rule in rules.exceptions.items()}
        matcher = BuiltinMatcher(
            (parse_builtin_pattern(pattern), STRICTNESS[rule.decision]) for pattern, rule in rules.exceptions.items()
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
    def _name_matcher(kind: KindRules) -> NameMatcher:
        return NameMatcher((pattern, STRICTNESS[rule.decision], pattern) for pattern, rule in kind.exceptions.items())

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

        def kind(rules: KindRules) -> dict[str, Any]:
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

    def _server_verdict(self, server: str) -> tuple[Verdict, Rule]:
        cached = self._server_cache.get(server)
        if cached is None:
            rule = self._name_rule(self._servers, self._server_matcher, server)
            if server == FLOOR_SERVER:
                cached = (floor_verdict(f"the server {server}", self.name, rule), rule)
            else:
                cached = (Verdict(rule.decision, rule.label, reason(self.name, f"the server {server}", rule)), rule)
            self._remember(self._server_cache, server, cached)
        return cached

    def _skill_verdict(self, skill: str) -> Verdict:
        verdict = self._skill_cache.get(skill)
        if verdict is None:
            rule = self._name_rule(self._skills, self._skill_matcher, skill)
            verdict = Verdict(rule.decision, rule.label, reason(self.name, f"the skill {skill}", rule))
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
                    reason(self.name, f"the server {request.server} to {what}", rule, verb_for=request.kind),
                )
            self._remember(self._request_cache, key, verdict)
        return verdict

    @staticmethod
    def _name_rule(kind: KindRules, matcher: NameMatcher, name: str) -> Rule:
        found = matcher.best(name)
        return kind.default if found is None else kind.exceptions[found[1]]

    def _tool_rule(self, request: ToolCallRequest) -> Rule:
        found = self._tool_matcher.best(request.server, request.tool, request.read_only, request.destructive)
        return self._tools.default if found is None else self._tools.exceptions[found[1]]

    def _entry(self, request: ToolCallRequest) -> Entry:
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

    def _compute_entry(self, request: ToolCallRequest) -> Entry:
        subject = f"{request.server}/{request.tool}"
        server_rule = self._server_verdict(request.server)[1]
        tool_rule = self._tool_rule(request)
        if request.server == FLOOR_SERVER:
            overridden = max((server_rule, tool_rule), key=lambda rule: STRICTNESS[rule.decision])
            if request.tool == ESCALATE_TOOL and self._research is not None and self._research.escalate == "ask":
                entry = Entry("ask", True, subject, overridden)
                entry.verdict = Verdict("ask", self._escalate_label, escalate_reason(self.name))
                return entry
            return Entry("allow", True, subject, overridden)
        rule = stricter(server_rule, tool_rule)
        entry = Entry(rule.decision, rule.decision == "deny", subject, rule, request.destructive is None)
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

    def _base_verdict(self, entry: Entry) -> Verdict:
        rule = entry.rule
        if entry.final and entry.decision == "allow":
            verdict = floor_verdict(entry.subject, self.name, rule)
        elif rule.kind == "servers":
            verdict = self._server_verdict(entry.subject.split("/", 1)[0])[0]
        else:
            verdict = Verdict(rule.decision, rule.label, reason(self.name, entry.subject, rule, entry.hint_absent))
        entry.verdict = verdict
        return verdict

    def _phase_verdict(self, entry: Entry) -> Verdict:
        entry.phase_verdict = Verdict("deny", self._research_label, phase_reason(entry.subject, self.name))
        return entry.phase_verdict

    def _with_arguments(self, entry: Entry, arguments: Mapping[str, Any], base: Verdict) -> Verdict:
        """The verdict once the rules on this call's arguments are counted. The strictest matching one is an
        exception like any: it beats the tool level's default, and beats a name exception only if stricter;
        then the stricter of the two levels wins as always."""
        rule = next((rule for rules, rule in entry.argument_rules if rules.matches(arguments)), None)
        if rule is None:  # (they are strictest first: the first that matches is the one)
            return base
        assert entry.server_rule is not None and entry.tool_rule is not None
        tool_rule = entry.tool_rule
        if tool_rule.pattern is None or STRICTNESS[rule.decision] > STRICTNESS[tool_rule.decision]:
            tool_rule = rule
        decided = stricter(entry.server_rule, tool_rule)
        if decided is not rule:
            return base
        key = (entry.subject, rule.label)
        verdict = self._argument_verdicts.get(key)
        if verdict is None:
            said = (
                f"The role {self.name} {VERBS[rule.decision]} {entry.subject} with these arguments: they match "
                f'"{rule.pattern}" in tools.{rule.decision}.'
            )
            verdict = Verdict(rule.decision, rule.label, said, by_arguments=True)
            self._remember(self._argument_verdicts, key, verdict)
        return verdict

    def _through_gates(self, entry: Entry, request: ToolCallRequest, base: Verdict) -> Verdict:
        """The base verdict if the human's words open every gate (and which words did), else a deny."""
        said = normalise_text("\n".join(request.recent_input))
        opened = []
        for gate in entry.gates:
            match = gate.regex.search(said)
            if match is None:
                return Verdict("deny", gate.rule_label, gate_reason(entry.subject, self.name, gate.keywords))
            opened.append(f'"{match.group(0)}" opens {gate.rule_label}')
        return Verdict(base.decision, base.rule, f"{base.reason} The human asked for it: {'; '.join(opened)}.")


def _floor_warnings(kinds: Sequence[KindRules], source: Path | None) -> list[RoleError]:
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
        kind_rules(kind, role, source, parent_kind)
        for kind, parent_kind in zip(("servers", "tools", "skills", "builtins"), parent_kinds, strict=True)
    )
    kinds = (servers, tools, skills, builtins)
    parent_requests = parent._requests if parent is not None else (None, None)
    sampling, elicitation = (
        kind_rules(kind, role, source, parent_kind)
        for kind, parent_kind in zip(("sampling", "elicitation"), parent_requests, strict=True)
    )
    gates = dict(parent._gates) if parent is not None else {}
    for pattern, keywords in role.gates.items():
        gates[pattern] = (tuple(keywords), source)
    research = parent._research if parent is not None else None
    if role.phases is not None:
        phases = role.phases
        research = (
            PhaseRules(tuple(phases.research), phases.escalate, source, tuple(phases.builtins))
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
