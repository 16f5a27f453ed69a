"""Agents that work together: what a role's ``[team]`` lets its pane do to the other panes of the session, and
whether a role it would give a pane it opens grants nothing its own does not (no escalation by proxy). Pure.

A verb (``see``, ``read``, ``send``, ``wait``, ``close``) is allowed on a pane when one of the verb's targets
names it: a role glob matching the pane's role, ``@sender`` (the pane that gave the caller its current task)
or ``@opened`` (a pane the caller opened). Every verb needs ``see`` as well, and ``close`` only ever reaches
panes the caller opened. ``open`` names the roles a pane opened by the caller may get.

The CLIs' own agent tools (Claude Code's ``Agent``/``Task``/``Workflow``/``SendMessage``, Codex's ``spawn_agent``
and its thread tools, Gemini CLI's ``invoke_agent``: the [builtins] kind ``agent``) are decided here too
(:func:`decide_cli_agent`), after [builtins]: what starts, waits on or closes one of the CLI's sub-agents needs
``team.open`` (a role that may not open helper panes may not start the CLI's own helpers either), what messages
one needs ``team.send``. A sub-agent runs inside the pane's program, so in its sandbox, and its calls reach the
gateway with the pane's token, so under its role: it can never grant more than the pane has.

The comparison of two roles (:func:`proxy_differences`) is rule by rule, by pattern text: it shows a role
grants nothing more only where that follows from the patterns as written (the same pattern at least as
strict, or a default and exceptions that are all at least as strict). Where it cannot show it, it lists each
rule it could not account for; the gateway then asks the human with that list. A difference listed is not
always a real widening (``write`` denied covers ``write(@outside)`` asked), never the other way round.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, NamedTuple, TypeVar

from polter.protocol import Decision
from polter.roles.models import DECISIONS, TeamPolicy

__all__ = [
    "DEFAULT_TEAM",
    "Member",
    "TeamRules",
    "TeamVerb",
    "TeamVerdict",
    "compile_team",
    "decide_cli_agent",
    "decide_open",
    "decide_team",
    "proxy_differences",
]

TeamVerb = Literal["see", "read", "send", "wait", "close"]
_RANK: dict[str, int] = {decision: rank for rank, decision in enumerate(DECISIONS)}
_VERBS = {"allow": "allows", "ask": "asks the human for", "deny": "denies"}


@dataclass(frozen=True, slots=True)
class TeamRules:
    """A role's ``[team]`` after inheritance."""

    see: tuple[str, ...]
    read: tuple[str, ...]
    send: tuple[str, ...]
    wait: tuple[str, ...]
    close: tuple[str, ...]
    open: tuple[str, ...]
    messages_per_minute: int
    depth: int

    def targets(self, verb: TeamVerb) -> tuple[str, ...]:
        return getattr(self, verb)

    def describe(self) -> dict[str, Any]:
        return {
            "see": list(self.see),
            "read": list(self.read),
            "send": list(self.send),
            "wait": list(self.wait),
            "close": list(self.close),
            "open": list(self.open),
            "messages_per_minute": self.messages_per_minute,
            "depth": self.depth,
        }


DEFAULT_TEAM = TeamRules(see=("*",), read=("*",), send=(), wait=(), close=(), open=(), messages_per_minute=20, depth=2)
"""A role without ``[team]``: it may list and read the panes of its session, nothing else."""


def compile_team(policy: TeamPolicy, parent: TeamRules | None) -> TeamRules:
    """``policy`` on top of the role it extends (each field the role sets replaces the parent's)."""
    base = parent or DEFAULT_TEAM
    values: dict[str, Any] = {}
    for name in ("see", "read", "send", "wait", "close", "open"):
        own = getattr(policy, name)
        values[name] = tuple(own) if own is not None else getattr(base, name)
    values["messages_per_minute"] = policy.messages_per_minute or base.messages_per_minute
    values["depth"] = policy.depth if policy.depth is not None else base.depth
    return TeamRules(**values)


@dataclass(frozen=True, slots=True)
class Member:
    """A pane as the team rules see it: its id and role, who gave it its current task, who opened it."""

    pane: str
    role: str
    number: int = 0
    sender: str | None = None
    opened_by: str | None = None
    depth: int = 0
    """0 for a pane the human opened; one more than its opener's for a pane an agent opened."""

    @property
    def label(self) -> str:
        return f"pane {self.number} ({self.role})" if self.number else f"{self.pane} ({self.role})"


class TeamVerdict(NamedTuple):
    allowed: bool
    rule: str
    reason: str


def _match(targets: Sequence[str], caller: Member, target: Member) -> str | None:
    for pattern in targets:
        if pattern == "@sender":
            if caller.sender is not None and caller.sender == target.pane:
                return pattern
        elif pattern == "@opened":
            if target.opened_by is not None and target.opened_by == caller.pane:
                return pattern
        elif fnmatch.fnmatchcase(target.role, pattern):
            return pattern
    return None


def _listed(targets: Sequence[str]) -> str:
    return "[" + ", ".join(f'"{target}"' for target in targets) + "]" if targets else "empty"


def decide_team(role: str, rules: TeamRules, verb: TeamVerb, caller: Member, target: Member) -> TeamVerdict:
    """Whether the pane ``caller`` (under ``role``) may ``verb`` the pane ``target``, by which rule, and why."""
    if verb != "see" and _match(rules.see, caller, target) is None:
        return TeamVerdict(
            False,
            "team.see",
            f"The role {role} may not see {target.label}: team.see is {_listed(rules.see)}.",
        )
    if verb == "close" and target.opened_by != caller.pane:
        return TeamVerdict(False, "team.close", f"{target.label} was not opened by this pane: close only closes "
                                                f"the panes it opened.")  # fmt: skip
    found = _match(rules.targets(verb), caller, target)
    if found is None:
        return TeamVerdict(
            False,
            f"team.{verb}",
            f"The role {role} may not {verb} {target.label}: team.{verb} is {_listed(rules.targets(verb))}.",
        )
    return TeamVerdict(True, f'team.{verb}["{found}"]', f"The role {role} may {verb} {target.label}.")


def decide_open(role: str, rules: TeamRules, caller: Member, new_role: str) -> TeamVerdict:
    """Whether the pane ``caller`` may open a pane under ``new_role`` (before the comparison of the roles)."""
    if caller.depth >= rules.depth:
        return TeamVerdict(
            False,
            "team.depth",
            f"This pane is at depth {caller.depth} of panes opened by panes, and the role {role} allows "
            f"{rules.depth} (team.depth): it may not open another.",
        )
    found = next((glob for glob in rules.open if fnmatch.fnmatchcase(new_role, glob)), None)
    if found is None:
        return TeamVerdict(
            False,
            "team.open",
            f"The role {role} may not open a pane as {new_role}: team.open is {_listed(rules.open)}.",
        )
    return TeamVerdict(True, f'team.open["{found}"]', f"The role {role} may open panes as {new_role}.")


V = TypeVar("V")
MESSAGING_TOOLS = frozenset({"SendMessage", "send_input", "send_message"})
"""The CLIs' agent tools that message another of their agents (Claude Code's, Codex's) rather than start one."""


def decide_cli_agent(role: str, rules: TeamRules, cli_tool: str, builtins: V,
                        verdict: Callable[[Decision, str, str], V]) -> V:  # fmt: skip
    """The verdict on a call of the CLI's own agent tool ``cli_tool``: ``builtins`` (the [builtins] verdict) when
    the role's [team] lets the pane do as much with panes, else a refusal built by ``verdict``."""
    if cli_tool in MESSAGING_TOOLS:
        if rules.send:
            return builtins
        why = (f"The role {role} may not message another agent ({cli_tool}): team.send is empty, and the CLI's own "
               f"agents are decided by the same [team] rules as its panes.")  # fmt: skip
        return verdict("deny", "team.send", why)
    if rules.open:
        return builtins
    return verdict("deny", "team.open", f"The role {role} may not start the CLI's own sub-agents ({cli_tool}): "
                   f"team.open is empty, so it may not open helpers, in a pane or inside its own.")  # fmt: skip


# -- no escalation by proxy ------------------------------------------------------------------------------


def proxy_differences(opener: Mapping[str, Any], candidate: Mapping[str, Any]) -> list[str]:
    """What ``candidate`` (a compiled role's ``describe()``) may grant that ``opener`` does not, as far as the
    rules show: empty when the comparison shows it grants nothing more, else one line per rule not accounted
    for."""
    names = (opener["name"], candidate["name"])
    found: list[str] = []
    for kind in ("servers", "tools", "skills", "builtins", "sampling", "elicitation"):
        found += _kind_differences(kind, opener[kind], candidate[kind], names)
    found += _gate_differences(opener.get("gates") or {}, candidate.get("gates") or {}, names)
    found += _phase_differences(opener.get("phases"), candidate.get("phases"), names)
    if candidate["sandbox"]["shell"] == "unconfined" and opener["sandbox"]["shell"] != "unconfined":
        found.append(f"sandbox.shell: {names[1]} runs a shell pane unconfined; {names[0]} keeps it confined")
    found += _team_differences(opener["team"], candidate["team"], names)
    return found


def _exceptions(described: Mapping[str, Any]) -> dict[str, Decision]:
    return {pattern: decision for decision in DECISIONS for pattern in described.get(decision, [])}


def _kind_differences(
    kind: str, opener: Mapping[str, Any], candidate: Mapping[str, Any], names: tuple[str, str]
) -> list[str]:
    """Sound for "the strictest matching exception decides, else the default" (every kind but the tools'
    argument rules, which are compared as written: the same rules, plus denies)."""
    mine, theirs = names
    opener_default, candidate_default = opener["default"], candidate["default"]
    ours, others = _exceptions(opener), _exceptions(candidate)
    found = []
    if _RANK[candidate_default] < _RANK[opener_default]:
        found.append(
            f'{kind}.default: {theirs} {_VERBS[candidate_default]} what it does not name ("{candidate_default}"), '
            f'{mine} says "{opener_default}"'
        )
    if kind == "tools" and any(pattern.endswith(")") for pattern in (*ours, *others)):
        for pattern, decision in ours.items():
            if others.get(pattern) not in (decision, "deny"):
                found.append(_missing(kind, pattern, decision, others.get(pattern), names))
        for pattern, decision in others.items():
            if pattern not in ours and decision != "deny":
                found.append(f'{kind}.{decision}["{pattern}"]: {theirs} {_VERBS[decision]} it; {mine} does not name it '
                             f"(rules on arguments are compared as written)")  # fmt: skip
        return found
    lowest = min((_RANK[decision] for decision in others.values()), default=len(DECISIONS))
    for pattern, decision in ours.items():
        theirs_decision = others.get(pattern)
        if theirs_decision is not None and _RANK[theirs_decision] >= _RANK[decision]:
            continue
        if theirs_decision is None and min(lowest, _RANK[candidate_default]) >= _RANK[decision]:
            continue  # everything the candidate says is at least as strict
        found.append(_missing(kind, pattern, decision, theirs_decision, names))
    for pattern, decision in others.items():
        if _RANK[decision] < _RANK[opener_default] and pattern not in ours:
            found.append(
                f'{kind}.{decision}["{pattern}"]: {theirs} {_VERBS[decision]} it; {mine} does not name it and its '
                f'{kind}.default is "{opener_default}"'
            )
    return found


def _missing(kind: str, pattern: str, decision: Decision, theirs: Decision | None, names: tuple[str, str]) -> str:
    mine, other = names
    said = f"{_VERBS[theirs]} it" if theirs is not None else "does not name it"
    return f'{kind}.{decision}["{pattern}"]: {mine} {_VERBS[decision]} it; {other} {said}'


def _gate_differences(ours: Mapping[str, Sequence[str]], others: Mapping[str, Sequence[str]],
                      names: tuple[str, str]) -> list[str]:  # fmt: skip
    mine, theirs = names
    found = []
    for pattern, keywords in ours.items():
        their_keywords = others.get(pattern)
        if their_keywords is None:
            found.append(f'gates["{pattern}"]: {mine} runs it only on the human\'s words; {theirs} has no such gate')
        elif not {word.casefold() for word in their_keywords} <= {word.casefold() for word in keywords}:
            extra = sorted(set(their_keywords) - set(keywords))
            found.append(f'gates["{pattern}"]: {theirs} opens it on more words ({", ".join(extra)})')
    return found


def _phase_differences(ours: Mapping[str, Any] | None, others: Mapping[str, Any] | None,
                       names: tuple[str, str]) -> list[str]:  # fmt: skip
    mine, theirs = names
    if ours is None:
        return []
    if others is None:
        return [f"phases: {mine} starts each request in a research phase; {theirs} has no phases"]
    found = []
    for field in ("research", "builtins"):
        extra = [pattern for pattern in others[field] if pattern not in ours[field]]
        if extra:
            found.append(f"phases.{field}: {theirs} also allows in research {', '.join(extra)}")
    if _RANK[others["escalate"]] < _RANK[ours["escalate"]]:
        found.append(f"phases.escalate: {theirs} escalates without asking; {mine} asks the human")
    return found


def _covered(pattern: str, ours: Sequence[str]) -> bool:
    if "*" in ours or pattern in ours:
        return True
    globs = [glob for glob in ours if not glob.startswith("@")]
    return "*" not in pattern and not pattern.startswith("@") and any(fnmatch.fnmatchcase(pattern, g) for g in globs)


def _team_differences(ours: Mapping[str, Any], others: Mapping[str, Any], names: tuple[str, str]) -> list[str]:
    mine, theirs = names
    found = []
    for verb in ("see", "read", "send", "wait", "close", "open"):
        extra = [pattern for pattern in others[verb] if not _covered(pattern, ours[verb])]
        if extra:
            found.append(f"team.{verb}: {theirs} also reaches {', '.join(extra)}; {mine} has {_listed(ours[verb])}")
    if others["messages_per_minute"] > ours["messages_per_minute"]:
        found.append(f"team.messages_per_minute: {theirs} {others['messages_per_minute']}, {mine} "
                     f"{ours['messages_per_minute']}")  # fmt: skip
    if others["depth"] > ours["depth"]:
        found.append(f"team.depth: {theirs} {others['depth']}, {mine} {ours['depth']}")
    return found
