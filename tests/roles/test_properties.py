"""Properties of the decision engine, checked with hypothesis against a naive reference (fnmatch).

Small alphabets make patterns and names collide often, so the interesting cases come up.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from support.generated import Tally

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


def test_deny_always_wins() -> None:
    seen = Tally()

    @settings(max_examples=200, deadline=None)
    @given(roles_spec, requests)
    def check(spec: dict[str, object], request: ToolCallRequest) -> None:
        servers: dict[str, str] = spec["servers"]  # type: ignore[assignment]
        tools: dict[str, str] = spec["tools"]  # type: ignore[assignment]
        denied_server = any(d == "deny" and fnmatchcase(request.server, p) for p, d in servers.items())
        denied_tool = any(d == "deny" and tool_matches(p, request) for p, d in tools.items())
        assume(denied_server or denied_tool)
        seen("a server deny applies" if denied_server else "only a tool deny applies")
        if any(d != "deny" and fnmatchcase(request.server, p) for p, d in servers.items()) or any(
            d != "deny" and tool_matches(p, request) for p, d in tools.items()
        ):
            seen("an allow or ask applies too")
        verdict = build(spec).decide(request)
        assert verdict.decision == "deny"
        assert ".deny[" in verdict.rule

    check()
    seen.require({"a server deny applies": 35, "only a tool deny applies": 25, "an allow or ask applies too": 40})


def test_a_name_matching_no_exception_follows_the_default() -> None:
    seen = Tally()

    @settings(max_examples=200, deadline=None)
    @given(roles_spec, requests)
    def check(spec: dict[str, object], request: ToolCallRequest) -> None:
        servers: dict[str, str] = spec["servers"]  # type: ignore[assignment]
        tools: dict[str, str] = spec["tools"]  # type: ignore[assignment]
        named_server = any(fnmatchcase(request.server, p) for p in servers)
        named_tool = any(tool_matches(p, request) for p in tools)
        assume(not named_server and not named_tool)
        default = max(spec["server_default"], spec["tool_default"], key=RANK.__getitem__)  # type: ignore[arg-type]
        seen(f"the defaults give {default}")
        if servers or tools:
            seen("exceptions exist but name something else")
        verdict = build(spec).decide(request)
        assert verdict.decision == default
        assert verdict.rule.split(" ")[0] in ("servers.default", "tools.default")

    check()
    seen.require({
        "the defaults give allow": 10, "the defaults give ask": 20, "the defaults give deny": 20,
        "exceptions exist but name something else": 25,
    })  # fmt: skip


keywords = st.lists(st.text("ab封 ", min_size=1, max_size=3).filter(str.strip), min_size=1, max_size=3)
gates = st.dictionaries(tool_patterns, keywords, max_size=3)
phases = st.one_of(st.none(), st.builds(PhasePolicy, research=st.lists(tool_patterns, max_size=3)))


def test_gates_and_phases_never_loosen() -> None:
    seen = Tally()

    @settings(max_examples=400, deadline=None)
    @given(
        roles_spec,
        gates,
        phases,
        requests,
        st.lists(st.text("ab封 ", max_size=5), max_size=3),
        st.sampled_from([None, "research", "action"]),
    )
    def check(
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
        if RANK[after.decision] > RANK[before.decision]:
            seen("a gate or phase tightened the decision")
        if before.decision != "allow":
            seen("not allowed without gates and phases")
            assert after.decision != "allow"
        if before.decision == "deny":
            seen("denied without gates and phases")
            assert after == before
        if not plain.visible(full):
            seen("hidden without gates and phases")
            assert not tightened.visible(full)

    check()
    seen.require({
        "a gate or phase tightened the decision": 15, "not allowed without gates and phases": 90,
        "denied without gates and phases": 50, "hidden without gates and phases": 50,
    })  # fmt: skip


def test_an_unrelated_exception_never_changes_another_tools_decision() -> None:
    seen = Tally()

    @example(  # two selectors match contradictory hints: the one reported must not depend on the new pattern
        {
            "server_default": "allow",
            "servers": {},
            "tool_default": "allow",
            "tools": {"@destructive": "deny", "@read-only": "deny"},
        },
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
    def check(spec: dict[str, object], request: ToolCallRequest, added: tuple[str, str], decision: str) -> None:
        kind, pattern = added
        exceptions: dict[str, str] = spec[kind]  # type: ignore[assignment]
        related = fnmatchcase(request.server, pattern) if kind == "servers" else tool_matches(pattern, request)
        assume(not related and pattern not in exceptions)
        seen(f"an unrelated {kind[:-1]} exception")
        if decision == "deny":
            seen("an unrelated deny")
        before = build(spec).decide(request)
        after = build({**spec, kind: {**exceptions, pattern: decision}}).decide(request)
        assert after == before

    check()
    seen.require({"an unrelated server exception": 25, "an unrelated tool exception": 90, "an unrelated deny": 30})


@settings(max_examples=200, deadline=None)
@given(roles_spec, requests)
def test_caching_never_changes_a_decision(spec: dict[str, object], request: ToolCallRequest) -> None:
    compiled = build(spec)
    first = compiled.decide(request)
    assert compiled.decide(request) == first == build(spec).decide(request)
