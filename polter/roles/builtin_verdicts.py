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

import fnmatch
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from polter.protocol import Decision
from polter.roles.builtin_matcher import BuiltinMatcher, could_match
from polter.roles.builtins import HOLE, Access, BuiltinCall, Protected, Resolver, accesses
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
    guard, surely = _protected(request, access)
    if guard is not None and surely and not access.unsure:
        why = f"{named} is refused: the path is within {guard.what}, which no role can " + (
            "write (writing it runs code outside any rule)." if guard.writes_only else "open."
        )
        return _Judged("deny", "protected", why, access)
    if guard is not None:
        access = replace(access, unsure=access.unsure or f"it could reach {guard.what}, which no role can open")
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
        if access.caveat:
            why += f" ({access.caveat}, so the read-only list does not cover it)"
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
    if decision == "allow" and access.unsure:
        why = f"{named} cannot be read for sure ({access.unsure}), so the human is asked ({why})"
        return _Judged("ask", "polter:unsure", why + ".", access)
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


def _protected(request: BuiltinRequest, access: Access) -> tuple[Protected | None, bool]:
    """The protected target ``access`` opens, and whether surely: a path known only when it runs, a glob or a
    folder's whole tree that could reach one is not sure (the call is asked about, never allowed)."""
    if access.kind not in ("read", "write"):
        return None, False
    unsure: Protected | None = None
    for form in access.forms or (access.subject,):
        for target in request.protected:
            if target.writes_only and access.kind != "write":
                continue
            for option in expand_braces(form):
                reach = _reaches(target, option, access.tree)
                if reach == "surely":
                    return target, True
                if reach == "could":
                    unsure = unsure or target
    return unsure, False


_GLOB = re.compile(r"[*?\[]")


def _reaches(target: Protected, form: str, tree: bool) -> str | None:
    """Whether the path ``form`` (a glob, a hole, a whole tree) reaches ``target``: "surely", "could" or None."""
    if HOLE not in form and not _GLOB.search(form):
        if target.covers(form):
            return "surely"
        inside = target.path if not target.anywhere else None
        return "could" if tree and inside is not None and inside.startswith(form.rstrip("/") + "/") else None
    known = form.split(HOLE, 1)[0]
    if HOLE in form and known.startswith("/") and (target.covers(known.rstrip("/")) or target.path.startswith(known)):
        return "surely" if target.covers(known.rstrip("/")) else "could"
    segments = [part for part in target.path.strip("/").split("/") if part]
    literal = [part for part in re.split(r"[/\x00]", form) if part and not _GLOB.search(part)]
    near = HOLE in form and any(part in segments[-2:] for part in literal)
    if _GLOB.search(form) and HOLE not in form:
        return "could" if _glob_reaches(target, form) else None
    if near and could_match(_path_tokens(target.path, target.anywhere), _path_tokens(form, False)):
        return "could"
    return None


def _glob_reaches(target: Protected, glob: str) -> bool:
    """Whether some path the glob names is within ``target`` (segment by segment, as the shell expands it)."""
    parts = glob.strip("/").split("/")
    wanted = target.path.strip("/").split("/")
    starts = range(len(parts) - len(wanted) + 1) if target.anywhere else [0]
    for start in starts:
        window = parts[start : start + len(wanted)]
        if len(window) == len(wanted) and all(
            fnmatch.fnmatchcase(name, part) for part, name in zip(window, wanted, strict=True)
        ):
            return True
    return False


def _path_tokens(path: str, anywhere: bool) -> list[str]:
    tokens = ["ANY"] if anywhere else []
    tokens += ["ANY" if char == HOLE else char for char in path]
    return tokens + ["ANY"]


def expand_braces(word: str, limit: int = 64) -> list[str]:
    """Bash's brace expansion of a path (``.git/{hooks,x}`` → both), up to ``limit`` results."""
    match = re.search(r"\{([^{}]*,[^{}]*)\}", word)
    if match is None:
        return [word]
    results: list[str] = []
    for choice in match[1].split(","):
        results += expand_braces(word[: match.start()] + choice + word[match.end() :], limit)
        if len(results) >= limit:
            break
    return results[:limit]


def strictest(decisions: Sequence[Decision]) -> Decision:
    return _DECISIONS[max((_RANK[d] for d in decisions), default=0)]
