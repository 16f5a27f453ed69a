"""Deciding a built-in tool call: each thing it touches on its own, then the strictest wins.

Order for one :class:`~polter.roles.builtins.Access` (a command of a shell line, a path, a URL):

1. a **protected target** (Polter's own config, roles and state, the files it writes for the pane's CLI,
   ``.git/hooks`` and ``.git/config`` for writing) is denied, whatever the role says;
2. the role's ``[builtins]`` lists: a matching deny, else ask, else allow, else the default; a part known
   only when it runs (``$VAR``) takes the strictest rule that could match it;
3. gates and phases tighten: a gated access whose keywords the human has not typed is denied; in the
   research phase an access that ``[phases] builtins`` does not cover is denied.

The call's decision is its strictest access's, so a denied command hidden in a chain denies the line.
Pure: paths arrive resolved by the request's resolver.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from polter.protocol import Decision
from polter.roles.builtins import HOLE, Access, BuiltinCall, BuiltinMatcher, Protected, Resolver, accesses
from polter.roles.patterns import normalise_text

__all__ = ["BuiltinRequest", "BuiltinRules", "decide_builtin"]

_RANK: dict[Decision, int] = {"allow": 0, "ask": 1, "deny": 2}
_DECISIONS: tuple[Decision, ...] = ("allow", "ask", "deny")
_VERBS = {"deny": "denies", "ask": "asks the human before", "allow": "allows"}


@dataclass(frozen=True, slots=True)
class BuiltinRequest:
    """A call of one of the CLI's own tools, with what is needed to judge its paths.

    ``project`` is the pane's directory (relative path patterns are anchored there, ``@outside`` is
    outside it), ``resolve`` turns a path as the CLI wrote it into its normalised absolute forms, and
    ``protected`` lists the targets no role can open.
    """

    call: BuiltinCall
    project: str
    home: str
    resolve: Resolver
    protected: tuple[Protected, ...] = ()
    recent_input: Sequence[str] = ()
    phase: Literal["research", "action"] | None = None


@dataclass(frozen=True, slots=True)
class BuiltinRules:
    """A role's compiled ``[builtins]``: the matcher, each pattern's label, the default's, and the tighteners."""

    role: str
    matcher: BuiltinMatcher
    labels: Mapping[str, tuple[Decision, str]]
    """pattern → (its decision, how a verdict names it)."""
    default: tuple[Decision, str, bool]
    """(decision, label, implicit: the role has no [builtins] table)."""
    research: BuiltinMatcher | None = None
    research_label: str = "phases.builtins"
    gates: Sequence[tuple[BuiltinMatcher, str, tuple[str, ...], re.Pattern[str]]] = field(default_factory=tuple)
    """(matcher of one gate pattern, its label, its keywords, their regex)."""


@dataclass(frozen=True, slots=True)
class _Judged:
    decision: Decision
    rule: str
    why: str
    access: Access


def decide_builtin(rules: BuiltinRules, request: BuiltinRequest, verdict: Callable[[Decision, str, str], Any]) -> Any:
    """The verdict on ``request`` (built by ``verdict(decision, rule, reason)``)."""
    call = request.call
    found, _problem = accesses(call, request.resolve)
    judged = [_judge(rules, request, access) for access in found]
    worst = max(judged, key=lambda item: _RANK[item.decision])  # the first of the strictest
    subject = _subject(call)
    if len(found) == 1 or worst.access.shown == subject:
        reason = f"{worst.why[0].upper()}{worst.why[1:]}" if worst.why else ""
    else:
        reason = f"In {subject}: {worst.why}"
    return verdict(worst.decision, worst.rule, reason)


def _subject(call: BuiltinCall) -> str:
    if call.kind == "shell":
        return f"the shell command `{call.command}`"
    if call.kind in ("read", "write"):
        return f"{call.kind} of {', '.join(call.paths) or 'an unknown path'}"
    return f"{call.cli_tool} ({call.argument})" if call.argument else call.cli_tool


def _judge(rules: BuiltinRules, request: BuiltinRequest, access: Access) -> _Judged:
    if len(access.forms) > 1:  # a path and where its symlinks really lead: each judged, the strictest wins
        judged = [_judge(rules, request, replace(access, subject=form, forms=(form,))) for form in access.forms]
        return max(judged, key=lambda item: _RANK[item.decision])
    named = _named(access)
    guard = _protected(request, access)
    if guard is not None:
        why = f"{named} is refused: the path is within {guard.what}, which no role can " + (
            "write (writing it runs code outside any rule)." if guard.writes_only else "open."
        )
        return _Judged("deny", "protected", why, access)
    hits, sure = rules.matcher.matches(access, request.project, request.home)
    candidates = [(rules.labels[pattern.text][0], pattern.text) for pattern, _rank in hits]
    strictest = max(candidates, key=lambda item: _RANK[item[0]], default=None)
    default, default_label, implicit = rules.default
    if strictest is None or (not sure and _RANK[default] > _RANK[strictest[0]]):
        decision, rule = default, default_label
        if implicit:
            why = (
                f"the role {rules.role} {_VERBS[default]} {named}: it has no [builtins] table, so built-in "
                "tools are allowed"
            )
        else:
            why = (
                f"the role {rules.role} {_VERBS[default]} {named}: it matches none of the role's builtins "
                f'exceptions, and builtins.default is "{default}"'
            )
        if strictest is not None:
            why += f' (it could also match "{strictest[1]}": part of it is known only when it runs)'
    else:
        decision, pattern = strictest
        rule = rules.labels[pattern][1]
        why = f'the role {rules.role} {_VERBS[decision]} {named}: it matches "{pattern}" in builtins.{decision}'
        if not sure:
            why += " (part of it is known only when it runs, so the strictest rule that could match applies)"
    if decision == "deny":
        return _Judged("deny", rule, why + ".", access)
    for matcher, label, keywords, regex in rules.gates:
        gate_hits, _ = matcher.matches(access, request.project, request.home)
        if gate_hits:
            if regex.search(normalise_text("\n".join(request.recent_input))) is None:
                listed = ", ".join(f'"{keyword}"' for keyword in keywords)
                return _Judged(
                    "deny",
                    label,
                    f"{named} is gated: the role {rules.role} runs it only when the human has asked for it in "
                    f"this pane (their words must mention one of: {listed}); ask the human, do not retry until "
                    "they have.",
                    access,
                )
    if rules.research is not None and request.phase != "action":
        research_hits, research_sure = rules.research.matches(access, request.project, request.home)
        if not (research_hits and research_sure):
            return _Judged(
                "deny",
                rules.research_label,
                f"this pane is in the research phase of the role {rules.role}, which permits only reads "
                f"({rules.research_label}), and {named} is not one. Call the escalate tool of the polter server "
                f"(or ask the human) to move to the action phase, then try again.",
                access,
            )
    return _Judged(decision, rule, why + ".", access)


def _named(access: Access) -> str:
    if access.kind == "shell":
        return access.shown if access.subject == HOLE else f"the command {access.shown}"
    if access.kind in ("read", "write"):
        verb = "reading" if access.kind == "read" else "writing"
        return f"{verb} {access.shown}"
    if access.kind == "web":
        return access.shown if access.shown.startswith("the web search") else f"fetching {access.shown}"
    if access.kind == "agent":
        return f"starting {access.shown}"
    return f"the tool {access.shown}"


def _protected(request: BuiltinRequest, access: Access) -> Protected | None:
    """The protected target ``access`` opens (or, for a path known only when it runs, could open)."""
    if access.kind not in ("read", "write"):
        return None
    for form in access.forms or (access.subject,):
        known, dynamic = form.split(HOLE, 1)[0], HOLE in form
        for target in request.protected:
            if target.writes_only and access.kind != "write":
                continue
            if not dynamic and target.covers(form):
                return target
            if (
                dynamic
                and known.startswith("/")
                and (target.covers(known.rstrip("/")) or target.path.startswith(known))
            ):
                return target
    return None


def strictest(decisions: Sequence[Decision]) -> Decision:
    return _DECISIONS[max((_RANK[d] for d in decisions), default=0)]
