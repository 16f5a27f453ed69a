"""Properties of the decision engine, checked with hypothesis against a naive reference (fnmatch).

Small alphabets make patterns and names collide often, so the interesting cases come up.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from hypothesis import example, given, settings
from hypothesis import strategies as st

from polter.roles import (
    FLOOR_SERVER,
    CompiledRole,
    PhasePolicy,
    Role,
    ServerPolicy,
    ToolCallRequest,
    ToolPolicy,
    compile_role,
)

RANK = {"allow": 0, "ask": 1, "deny": 2}
decisions = st.sampled_from(["allow", "ask", "deny"])
servers = st.text("xy", min_size=1, max_size=3)
tools = st.text("ab_", min_size=1, max_size=4)
server_globs = st.text("xy*", min_size=1, max_size=3)
tool_globs = st.text("ab_*", min_size=1, max_size=4)
selectors = st.sampled_from(["@read-only", "@destructive"])
tool_patterns = st.one_of(
    st.builds(lambda s, t: f"{s}/{t}", server_globs, tool_globs),
    selectors,
    st.builds(lambda s, sel: f"{s}/{sel}", server_globs, selectors),
)
hints = st.sampled_from([None, True, False])
requests = st.builds(ToolCallRequest, servers, tools, hints, hints)


def policy(cls: type, default: str, exceptions: dict[str, str]) -> object:
    lists: dict[str, list[str]] = {"allow": [], "ask": [], "deny": []}
    for pattern, decision in exceptions.items():
        lists[decision].append(pattern)
    return cls(default=default, **lists)


roles_spec = st.fixed_dictionaries(
    {
        "server_default": decisions,
        "servers": st.dictionaries(server_globs, decisions, max_size=4),
        "tool_default": decisions,
        "tools": st.dictionaries(tool_patterns, decisions, max_size=8),
    }
)


def build(spec: dict[str, object], **extra: object) -> CompiledRole:
    return compile_role(
        Role(
            name="r",
            servers=policy(ServerPolicy, spec["server_default"], spec["servers"]),  # type: ignore[arg-type]
            tools=policy(ToolPolicy, spec["tool_default"], spec["tools"]),  # type: ignore[arg-type]
            **extra,  # type: ignore[arg-type]
        )
    )


# -- the reference: a direct reading of docs/roles.md, with fnmatch -----------------------------


def annotated(selector: str, request: ToolCallRequest) -> bool:
    if selector == "read-only":
        return request.read_only is True
    return request.destructive if request.destructive is not None else request.read_only is not True


def tool_matches(pattern: str, request: ToolCallRequest) -> bool:
    if pattern.startswith("@"):
        return annotated(pattern[1:], request)
    server, tool = pattern.split("/", 1)
    if not fnmatchcase(request.server, server):
        return False
    return annotated(tool[1:], request) if tool.startswith("@") else fnmatchcase(request.tool, tool)


def level(default: str, exceptions: dict[str, str], matches: object) -> tuple[str, bool]:
    """(decision, whether an exception decided) for one level."""
    for decision in ("deny", "ask", "allow"):
        if any(d == decision and matches(p) for p, d in exceptions.items()):  # type: ignore[operator]
            return decision, True
    return default, False


def reference(spec: dict[str, object], request: ToolCallRequest) -> str:
    if request.server == FLOOR_SERVER:
        return "allow"
    server = level(spec["server_default"], spec["servers"], lambda p: fnmatchcase(request.server, p))  # type: ignore[arg-type]
    tool = level(spec["tool_default"], spec["tools"], lambda p: tool_matches(p, request))  # type: ignore[arg-type]
    return max(server[0], tool[0], key=RANK.__getitem__)


# -- the properties -----------------------------------------------------------------------------


@settings(max_examples=400, deadline=None)
@given(roles_spec, requests)
def test_the_engine_agrees_with_the_reference(spec: dict[str, object], request: ToolCallRequest) -> None:
    assert build(spec).decide(request).decision == reference(spec, request)


@settings(max_examples=300, deadline=None)
@given(roles_spec, requests)
def test_deny_always_wins(spec: dict[str, object], request: ToolCallRequest) -> None:
    denied_server = any(d == "deny" and fnmatchcase(request.server, p) for p, d in spec["servers"].items())  # type: ignore[attr-defined]
    denied_tool = any(d == "deny" and tool_matches(p, request) for p, d in spec["tools"].items())  # type: ignore[attr-defined]
    verdict = build(spec).decide(request)
    if denied_server or denied_tool:
        assert verdict.decision == "deny"
        assert ".deny[" in verdict.rule


@settings(max_examples=300, deadline=None)
@given(roles_spec, requests)
def test_a_name_matching_no_exception_follows_the_default(spec: dict[str, object], request: ToolCallRequest) -> None:
    named_server = any(fnmatchcase(request.server, p) for p in spec["servers"])  # type: ignore[attr-defined]
    named_tool = any(tool_matches(p, request) for p in spec["tools"])  # type: ignore[attr-defined]
    if named_server or named_tool:
        return
    verdict = build(spec).decide(request)
    assert verdict.decision == max(spec["server_default"], spec["tool_default"], key=RANK.__getitem__)  # type: ignore[arg-type]
    assert verdict.rule.split(" ")[0] in ("servers.default", "tools.default")


keywords = st.lists(st.text("ab封 ", min_size=1, max_size=3).filter(str.strip), min_size=1, max_size=3)
gates = st.dictionaries(tool_patterns, keywords, max_size=3)
phases = st.one_of(st.none(), st.builds(PhasePolicy, research=st.lists(tool_patterns, max_size=3)))


@settings(max_examples=400, deadline=None)
@given(
    roles_spec,
    gates,
    phases,
    requests,
    st.lists(st.text("ab封 ", max_size=5), max_size=3),
    st.sampled_from([None, "research", "action"]),
)
def test_gates_and_phases_never_loosen(
    spec: dict[str, object],
    gate_spec: dict[str, list[str]],
    phase_spec: PhasePolicy | None,
    request: ToolCallRequest,
    said: list[str],
    phase: str | None,
) -> None:
    plain = build(spec)
    tightened = build(spec, gates=gate_spec, phases=phase_spec)
    full = ToolCallRequest(request.server, request.tool, request.read_only, request.destructive, tuple(said), phase)  # type: ignore[arg-type]
    before, after = plain.decide(full), tightened.decide(full)
    assert RANK[after.decision] >= RANK[before.decision]
    if before.decision != "allow":
        assert after.decision != "allow"
    if before.decision == "deny":
        assert after == before
    if not plain.visible(full):
        assert not tightened.visible(full)


@example(  # two selectors match contradictory hints: the one reported must not depend on the new pattern
    {"server_default": "allow", "servers": {}, "tool_default": "allow", "tools": {"@destructive": "deny", "@read-only": "deny"}},
    ToolCallRequest("xx", "_", True, True),
    ("tools", "x/@destructive"),
    "allow",
)
@settings(max_examples=400, deadline=None)
@given(
    roles_spec,
    requests,
    st.one_of(tool_patterns.map(lambda p: ("tools", p)), server_globs.map(lambda p: ("servers", p))),
    decisions,
)
def test_an_unrelated_exception_never_changes_another_tools_decision(
    spec: dict[str, object], request: ToolCallRequest, added: tuple[str, str], decision: str
) -> None:
    kind, pattern = added
    exceptions: dict[str, str] = spec[kind]  # type: ignore[assignment]
    related = fnmatchcase(request.server, pattern) if kind == "servers" else tool_matches(pattern, request)
    if related or pattern in exceptions:
        return
    before = build(spec).decide(request)
    after = build({**spec, kind: {**exceptions, pattern: decision}}).decide(request)
    assert after == before


@settings(max_examples=200, deadline=None)
@given(roles_spec, requests)
def test_caching_never_changes_a_decision(spec: dict[str, object], request: ToolCallRequest) -> None:
    compiled = build(spec)
    first = compiled.decide(request)
    assert compiled.decide(request) == first == build(spec).decide(request)
