"""The sentences a verdict gives the agent and the human: what the role decided, and why."""

from __future__ import annotations

from collections.abc import Sequence

from polter.protocol import FLOOR_SERVER
from polter.roles.requests import Verdict
from polter.roles.rule_kinds import Rule

VERBS = {"deny": "denies", "ask": "asks the human before each use of", "allow": "allows"}
_REQUEST_VERBS = {"deny": "does not allow", "ask": "asks the human before allowing", "allow": "allows"}


def reason(role: str, subject: str, rule: Rule, hint_absent: bool = False, verb_for: str | None = None) -> str:
    """A sentence for the agent and the human: what the role decided about ``subject``, and why."""
    verbs = _REQUEST_VERBS if verb_for is not None else VERBS
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


def floor_verdict(subject: str, role: str, overridden: Rule) -> Verdict:
    reason = f"{subject} is Polter's own: every role allows its floor tools."
    if overridden.decision != "allow":
        reason += f" The role {role}'s {overridden.label} is ignored for it."
    return Verdict("allow", "floor", reason)


def gate_reason(subject: str, role: str, keywords: Sequence[str]) -> str:
    listed = ", ".join(f'"{keyword}"' for keyword in keywords)
    return (
        f"{subject} is gated: the role {role} runs it only when the human has asked for it in this pane, "
        f"and their recent input does not. Ask the human to request it in their own words (the request "
        f"must mention one of: {listed}); do not retry until they have."
    )


def escalate_reason(role: str) -> str:
    return (
        f"The role {role} asks the human before the agent moves from the research phase to the action "
        f'phase (phases.escalate = "ask").'
    )


def phase_reason(subject: str, role: str) -> str:
    return (
        f"This pane is in the research phase of the role {role}: only research (read-only) tools can be "
        f"used, and {subject} is not one. Finish researching, then call the escalate tool of the "
        f"{FLOOR_SERVER} server (or ask the human) to move to the action phase, and call it again."
    )
