"""A role's [team]: which panes it may see, read, send to, wait on, open and close, and no escalation by proxy."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from polter.paths import bundled_dir
from polter.roles import CompiledRole, Role, RoleLibrary, SkillPolicy, SkillRequest, ToolCallRequest, ToolPolicy
from polter.roles import compile_role
from polter.roles.library import Layer
from polter.roles.models import TeamPolicy
from polter.roles.team import DEFAULT_TEAM, Member, decide_open, decide_team, proxy_differences
from support.generated import Tally


def role(name: str = "r", **fields: object) -> CompiledRole:
    return compile_role(Role(name=name, **fields))  # type: ignore[arg-type]


def bundled() -> RoleLibrary:
    library = RoleLibrary([Layer("bundled", bundled_dir("roles"))])
    library.reload()
    return library


CODER = Member("p1", "coder", number=1)
REVIEWER = Member("p2", "reviewer", number=2, sender="p1", opened_by="p1", depth=1)
OPS = Member("p3", "ops", number=3)


def test_a_role_without_team_may_see_and_read_every_pane_and_nothing_else() -> None:
    rules = role().team
    assert rules == DEFAULT_TEAM
    assert decide_team("r", rules, "see", CODER, OPS).allowed
    assert decide_team("r", rules, "read", CODER, OPS).allowed
    for verb in ("send", "wait", "close"):
        verdict = decide_team("r", rules, verb, CODER, OPS)  # type: ignore[arg-type]
        assert not verdict.allowed and verdict.rule in (f"team.{verb}", "team.close")
        assert "pane 3 (ops)" in verdict.reason or "not opened by this pane" in verdict.reason
    refused = decide_open("r", rules, CODER, "reviewer")
    assert not refused.allowed and refused.rule == "team.open" and "team.open is empty" in refused.reason


def test_targets_are_role_globs_or_relations_and_every_verb_needs_see() -> None:
    rules = role(team=TeamPolicy(see=["rev*", "@sender"], send=["*"], read=["ops"])).team
    assert decide_team("r", rules, "send", CODER, REVIEWER).rule == 'team.send["*"]'
    hidden = decide_team("r", rules, "send", CODER, OPS)
    assert not hidden.allowed and hidden.rule == "team.see" and "may not see pane 3 (ops)" in hidden.reason
    assert not decide_team("r", rules, "read", CODER, OPS).allowed  # read lists ops, but ops is not seen
    answering = role(team=TeamPolicy(send=["@sender"])).team
    assert decide_team("r", answering, "send", REVIEWER, CODER).rule == 'team.send["@sender"]'
    assert not decide_team("r", answering, "send", REVIEWER, OPS).allowed
    assert not decide_team("r", answering, "send", CODER, REVIEWER).allowed  # the reviewer gave coder no task


def test_close_reaches_only_the_panes_the_caller_opened() -> None:
    rules = role(team=TeamPolicy(close=["*"])).team
    assert decide_team("r", rules, "close", CODER, REVIEWER).allowed
    refused = decide_team("r", rules, "close", CODER, OPS)
    assert not refused.allowed and "not opened by this pane" in refused.reason
    opened = role(team=TeamPolicy(close=["@opened"])).team
    assert decide_team("r", opened, "close", CODER, REVIEWER).rule == 'team.close["@opened"]'


def test_open_names_roles_and_the_depth_of_panes_opened_by_panes_is_limited() -> None:
    rules = role(team=TeamPolicy(open=["rev*"], depth=1)).team
    assert decide_open("r", rules, CODER, "reviewer").rule == 'team.open["rev*"]'
    assert not decide_open("r", rules, CODER, "coder").allowed
    deep = decide_open("r", rules, REVIEWER, "reviewer")
    assert not deep.allowed and deep.rule == "team.depth" and "depth 1" in deep.reason


def test_team_fields_are_inherited_one_by_one_and_bad_targets_are_refused() -> None:
    parent = role("base", team=TeamPolicy(send=["*"], open=["reviewer"], messages_per_minute=5))
    child = compile_role(Role(name="child", extends="base", team=TeamPolicy(open=[])), parent=parent)
    assert child.team.send == ("*",) and child.team.open == () and child.team.messages_per_minute == 5
    with pytest.raises(ValidationError, match="not a relation"):
        TeamPolicy(send=["@boss"])
    with pytest.raises(ValidationError, match="not a role name or glob"):
        TeamPolicy(open=["@opened"])
    with pytest.raises(ValidationError, match="greater than or equal to 1"):
        TeamPolicy(messages_per_minute=0)


def test_the_bundled_roles_team_sections() -> None:
    library = bundled()
    for name in ("coder", "ops"):
        team = library.get(name).team  # type: ignore[union-attr]
        assert team.send == team.wait == team.see == team.read == ("*",)
        assert team.open == ("reviewer", "researcher") and team.close == ("@opened",)
    for name in ("reviewer", "researcher"):
        team = library.get(name).team  # type: ignore[union-attr]
        assert team.see == team.read == ("*",) and team.send == ("@sender",)
        assert team.wait == team.open == team.close == ()


# -- no escalation by proxy ---------------------------------------------------------------------------------


def test_a_coder_may_open_reviewers_and_researchers_and_the_engine_shows_it() -> None:
    library = bundled()
    coder = library.get("coder").describe()  # type: ignore[union-attr]
    for name in ("reviewer", "researcher", "coder"):
        assert proxy_differences(coder, library.get(name).describe()) == []  # type: ignore[union-attr]


def test_a_researcher_opening_a_coder_gets_every_difference_listed() -> None:
    library = bundled()
    found = proxy_differences(library.get("researcher").describe(), library.get("coder").describe())  # type: ignore[union-attr]
    assert 'tools.default: coder allows what it does not name ("allow"), researcher says "deny"' in found
    assert any(line.startswith('builtins.deny["write"]: researcher denies it') for line in found)
    assert any(line.startswith("team.send: coder also reaches *") for line in found)


def test_ops_opening_a_reviewer_cannot_be_shown_and_says_why() -> None:
    """ops gates deploys on the human's words and starts in research; reviewer does neither: the human decides."""
    library = bundled()
    found = proxy_differences(library.get("ops").describe(), library.get("reviewer").describe())  # type: ignore[union-attr]
    assert any(line.startswith('gates["*/deploy*"]') for line in found)
    assert any(line.startswith('skills.allow["*review*"]: reviewer allows it') for line in found)


def test_gates_phases_sandbox_and_arguments_are_compared() -> None:
    gated = role("a", gates={"gh/merge*": ["merge"]}, phases={"research": ["@read-only"], "escalate": "ask"})
    loose = role("b", gates={"gh/merge*": ["merge", "ship"]}, phases={"research": ["@read-only", "gh/*"]})
    found = proxy_differences(gated.describe(), loose.describe())
    assert 'gates["gh/merge*"]: b opens it on more words (ship)' in found
    assert "phases.research: b also allows in research gh/*" in found
    assert "phases.escalate: b escalates without asking; a asks the human" in found
    unconfined = role("c", sandbox={"shell": "unconfined"})
    assert any(line.startswith("sandbox.shell") for line in proxy_differences(role().describe(), unconfined.describe()))
    by_arguments = role("d", tools=ToolPolicy(default="allow", deny=["fs/write(path=/etc/**)"]))
    without = role("e", tools=ToolPolicy(default="allow"))
    assert proxy_differences(by_arguments.describe(), without.describe())
    stricter = role("f", tools=ToolPolicy(default="deny", deny=["fs/write(path=/etc/**)", "fs/rm"]))
    assert proxy_differences(by_arguments.describe(), stricter.describe()) == []


# -- the comparison is sound: where it shows nothing more, the engine decides nothing looser -------------------

NAMES = ["read_file", "read_dir", "write_file", "write_dir", "delete", "search"]
PATTERNS = ["*", "read_*", "write_*", "*_file", "*_dir", "delete", "search", "write_file"]
DECISIONS = ["allow", "ask", "deny"]
RANK = {"allow": 0, "ask": 1, "deny": 2}


def kind_policies() -> st.SearchStrategy[dict[str, object]]:
    exceptions = st.dictionaries(st.sampled_from(PATTERNS), st.sampled_from(DECISIONS), max_size=4)
    return st.builds(
        lambda default, found: {"default": default, **{d: [p for p, e in found.items() if e == d] for d in DECISIONS}},
        st.sampled_from(DECISIONS),
        exceptions,
    )


def test_where_the_comparison_shows_nothing_more_no_skill_or_tool_is_decided_more_loosely() -> None:
    seen = Tally()

    @settings(max_examples=400, deadline=None)
    @given(kind_policies(), kind_policies(), kind_policies(), kind_policies())
    def check(opener_skills: dict, candidate_skills: dict, opener_tools: dict, candidate_tools: dict) -> None:
        opener = role("o", skills=SkillPolicy(**opener_skills), tools=ToolPolicy(**with_server(opener_tools)))
        candidate = role("c", skills=SkillPolicy(**candidate_skills), tools=ToolPolicy(**with_server(candidate_tools)))
        found = proxy_differences(opener.describe(), candidate.describe())
        looser = [
            name
            for name in NAMES
            for mine, theirs in (
                (opener.decide(SkillRequest(name)), candidate.decide(SkillRequest(name))),
                (opener.decide(ToolCallRequest("fs", name)), candidate.decide(ToolCallRequest("fs", name))),
            )
            if RANK[theirs.decision] < RANK[mine.decision]
        ]
        if looser:
            assert found, f"the candidate decides {looser} more loosely, yet no difference was listed"
            seen("looser, and listed")
        else:
            seen("nothing looser, listed" if found else "nothing looser, none listed")

    check()
    seen.require({"looser, and listed": 50, "nothing looser, none listed": 10})


def with_server(policy: dict) -> dict:
    return {key: value if key == "default" else [f"fs/{pattern}" for pattern in value] for key, value in policy.items()}


def test_team_describe_is_part_of_the_role() -> None:
    described = role(team=TeamPolicy(open=["reviewer"])).describe()
    assert described["team"]["open"] == ["reviewer"] and described["team"]["depth"] == 2
