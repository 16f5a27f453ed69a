"""The decision engine: order of rules, the two levels, selectors, floor, gates, phases, inheritance."""

from __future__ import annotations

from pathlib import Path

import pytest

from polter.errors import RoleError
from polter.roles import (
    CompiledRole,
    PhasePolicy,
    Role,
    ServerPolicy,
    ServerRequest,
    SkillPolicy,
    SkillRequest,
    ToolCallRequest,
    ToolPolicy,
    compile_role,
)


def role(**fields: object) -> CompiledRole:
    return compile_role(Role(name="r", **fields))  # type: ignore[arg-type]


def call(target: str, **fields: object) -> ToolCallRequest:
    server, tool = target.split("/", 1)
    return ToolCallRequest(server, tool, **fields)  # type: ignore[arg-type]


def test_deny_beats_ask_beats_allow_beats_default() -> None:
    compiled = role(
        tools=ToolPolicy(default="ask", allow=["github/*"], ask=["github/create_*"], deny=["*/create_repo"])
    )
    assert compiled.decide(call("github/create_repo")).decision == "deny"
    assert compiled.decide(call("github/create_issue")).decision == "ask"
    assert compiled.decide(call("github/search")).decision == "allow"
    assert compiled.decide(call("time/now")).decision == "ask"


def test_the_verdict_names_the_rule_with_its_file_and_gives_a_reason(tmp_path: Path) -> None:
    source = tmp_path / "coder.toml"
    compiled = compile_role(Role(name="coder", tools=ToolPolicy(default="allow", deny=["*/delete_*"])), source=source)
    verdict = compiled.decide(call("github/delete_repo"))
    assert verdict.decision == "deny"
    assert verdict.rule == f'tools.deny["*/delete_*"] ({source})'
    assert verdict.reason == 'The role coder denies github/delete_repo: it matches "*/delete_*" in tools.deny.'
    default = compiled.decide(call("github/search"))
    assert default.rule == f"tools.default ({source})"
    assert default.as_dict() == {"decision": "allow", "rule": default.rule, "reason": default.reason}


def test_a_role_without_a_table_for_a_kind_allows_that_kind() -> None:
    verdict = role().decide(ServerRequest("anything"))
    assert (verdict.decision, verdict.rule) == ("allow", "servers.default")
    assert "has no [servers] table" in verdict.reason


def test_a_denied_server_denies_all_its_tools_even_ones_the_tool_level_allows() -> None:
    compiled = role(
        servers=ServerPolicy(default="allow", deny=["github"]),
        tools=ToolPolicy(default="allow", allow=["github/search"]),
    )
    verdict = compiled.decide(call("github/search", read_only=True))
    assert verdict.decision == "deny"
    assert verdict.rule == 'servers.deny["github"]'
    assert verdict.reason.endswith("which covers every tool of the server.")
    assert compiled.decide(ServerRequest("github")).decision == "deny"


def test_a_server_that_defaults_to_deny_denies_the_tools_of_servers_it_does_not_name() -> None:
    compiled = role(servers=ServerPolicy(default="deny", allow=["time"]), tools=ToolPolicy(default="allow"))
    assert compiled.decide(call("time/now")).decision == "allow"
    assert compiled.decide(call("github/search")).rule == "servers.default"


def test_a_server_that_asks_makes_every_call_of_its_tools_ask_unless_denied() -> None:
    compiled = role(
        servers=ServerPolicy(default="allow", ask=["github"]),
        tools=ToolPolicy(default="allow", allow=["github/search"], deny=["github/delete_*"]),
    )
    assert compiled.decide(call("github/search")).decision == "ask"
    assert compiled.decide(call("github/delete_repo")).decision == "deny"
    assert compiled.decide(call("time/now")).decision == "allow"


def test_the_stricter_level_wins_and_an_allowed_server_does_not_loosen_its_tools() -> None:
    compiled = role(
        servers=ServerPolicy(default="deny", allow=["github"]), tools=ToolPolicy(default="ask", allow=["@read-only"])
    )
    assert compiled.decide(call("github/create_issue")).decision == "ask"
    assert compiled.decide(call("github/search", read_only=True)).decision == "allow"


@pytest.mark.parametrize(
    ("read_only", "destructive", "is_read_only", "is_destructive"),
    [
        (None, None, False, True),  # MCP's defaults: not read-only, destructive
        (True, None, True, False),  # destructiveHint only means something when not read-only
        (False, None, False, True),
        (False, False, False, False),
        (None, False, False, False),
        (True, True, True, True),  # contradictory hints: both selectors match, so deny still wins
    ],
)
def test_selectors_follow_mcp_annotation_defaults(
    read_only: bool | None, destructive: bool | None, is_read_only: bool, is_destructive: bool
) -> None:
    compiled = role(tools=ToolPolicy(default="allow", ask=["@read-only"], deny=["@destructive"]))
    verdict = compiled.decide(call("s/t", read_only=read_only, destructive=destructive))
    expected = "deny" if is_destructive else "ask" if is_read_only else "allow"
    assert verdict.decision == expected


def test_a_selector_can_be_limited_to_one_server() -> None:
    compiled = role(tools=ToolPolicy(default="deny", allow=["github/@read-only"]))
    assert compiled.decide(call("github/search", read_only=True)).decision == "allow"
    assert compiled.decide(call("gitlab/search", read_only=True)).decision == "deny"


def test_an_absent_destructive_hint_is_explained() -> None:
    verdict = role(tools=ToolPolicy(default="allow", ask=["@destructive"])).decide(call("s/t"))
    assert "has no destructiveHint annotation" in verdict.reason


def test_globs_do_not_cross_the_slash_in_the_server_part() -> None:
    compiled = role(tools=ToolPolicy(default="allow", deny=["git*/push"]))
    assert compiled.decide(call("github/push")).decision == "deny"
    assert compiled.decide(call("git/hub/push")).decision == "allow"


def test_floor_tools_are_always_allowed_and_a_deny_on_them_is_reported() -> None:
    compiled = role(
        servers=ServerPolicy(default="deny", deny=["polter"]), tools=ToolPolicy(default="deny", deny=["polter/*"])
    )
    verdict = compiled.decide(call("polter/whoami"))
    assert (verdict.decision, verdict.rule) == ("allow", "floor")
    assert "is ignored" in verdict.reason
    assert compiled.visible(call("polter/escalate"))
    assert compiled.decide(ServerRequest("polter")).decision == "allow"
    assert [str(warning) for warning in compiled.warnings] == [
        'servers.deny: "polter" is ignored for polter/*: Polter\'s floor tools are always allowed',
        'tools.deny: "polter/*" is ignored for polter/*: Polter\'s floor tools are always allowed',
    ]


def test_floor_tools_pass_gates_and_phases() -> None:
    compiled = role(gates={"*/*": ["go"]}, phases=PhasePolicy(research=[]))
    assert compiled.decide(call("polter/escalate")).decision == "allow"


def test_a_role_can_make_the_agents_escalation_ask_the_human() -> None:
    compiled = role(phases=PhasePolicy(escalate="ask"), tools=ToolPolicy(default="deny", deny=["polter/*"]))
    verdict = compiled.decide(call("polter/escalate"))
    assert (verdict.decision, verdict.rule) == ("ask", "phases.escalate")
    assert "asks the human" in verdict.reason
    assert compiled.visible(call("polter/escalate"))
    assert compiled.decide(call("polter/whoami")).decision == "allow"
    assert compiled.describe()["phases"] == {
        "research": ["@read-only"],
        "builtins": ["read", "shell(@read-only)", "web", "meta"],
        "escalate": "ask",
    }


def test_an_inherited_escalation_setting_follows_the_phases_table() -> None:
    parent = role(phases=PhasePolicy(escalate="ask"))
    child = compile_role(Role(name="c", extends="r"), parent=parent)
    assert child.decide(call("polter/escalate")).decision == "ask"
    reset = compile_role(Role(name="c", extends="r", phases=PhasePolicy()), parent=parent)
    assert reset.decide(call("polter/escalate")).decision == "allow"


def test_skills_follow_the_skill_policy() -> None:
    compiled = role(skills=SkillPolicy(default="ask", allow=["pdf"], deny=["*deploy*"]))
    assert compiled.decide(SkillRequest("pdf")).decision == "allow"
    assert compiled.decide(SkillRequest("auto-deploy")).decision == "deny"
    assert compiled.decide(SkillRequest("frontend-design")).decision == "ask"


class TestGates:
    compiled = role(
        tools=ToolPolicy(default="allow", ask=["terraria/player_ban"]),
        gates={"terraria/player_ban": ["ban", "封禁"], "terraria/server_stop": ["shut down", "关服"]},
    )

    def test_a_gated_call_without_a_keyword_is_denied_with_what_the_human_must_say(self) -> None:
        verdict = self.compiled.decide(call("terraria/player_ban"))
        assert verdict.decision == "deny"
        assert verdict.rule == 'gates["terraria/player_ban"]'
        assert "the human has asked for it" in verdict.reason and '"封禁"' in verdict.reason

    @pytest.mark.parametrize("said", ["please BAN griefer42", "Banned him?", "请封禁这个玩家", "请ban他", "ＢＡＮ"])
    def test_a_keyword_in_any_recent_line_lets_the_call_through_to_its_decision(self, said: str) -> None:
        verdict = self.compiled.decide(call("terraria/player_ban", recent_input=["hello", said]))
        assert verdict.decision == "ask"

    @pytest.mark.parametrize("said", ["urban planning", "unban bob", "a banner", "my piggy bank", "bandage", "bane"])
    def test_keywords_are_whole_words(self, said: str) -> None:
        assert self.compiled.decide(call("terraria/player_ban", recent_input=[said])).decision == "deny"

    @pytest.mark.parametrize("said", ["bans", "banning bob", "shutting down", "ban players"])
    def test_keywords_take_english_endings(self, said: str) -> None:
        gated = "terraria/server_stop" if "down" in said else "terraria/player_ban"
        assert self.compiled.decide(call(gated, recent_input=[said])).decision != "deny"

    def test_spaces_inside_a_keyword_match_any_whitespace(self) -> None:
        assert self.compiled.decide(call("terraria/server_stop", recent_input=["Shut\tdown now"])).decision == "allow"

    def test_gated_tools_stay_visible(self) -> None:
        assert self.compiled.visible(call("terraria/server_stop"))


def test_every_matching_gate_must_be_satisfied() -> None:
    compiled = role(gates={"t/*": ["alpha"], "t/x": ["beta"]})
    assert compiled.decide(call("t/x", recent_input=["alpha"])).decision == "deny"
    assert compiled.decide(call("t/x", recent_input=["alpha beta"])).decision == "allow"


class TestPhases:
    compiled = role(
        tools=ToolPolicy(default="allow", ask=["@destructive"]), phases=PhasePolicy(research=["@read-only", "web/*"])
    )

    def test_research_phase_lists_and_allows_only_research_tools(self) -> None:
        assert self.compiled.has_phases
        assert self.compiled.decide(call("gh/search", read_only=True)).decision == "allow"
        assert self.compiled.decide(call("web/fetch", destructive=False)).decision == "allow"
        verdict = self.compiled.decide(call("gh/push", phase="research"))
        assert (verdict.decision, verdict.rule) == ("deny", "phases.research")
        assert "escalate" in verdict.reason
        assert not self.compiled.visible(call("gh/push"))

    def test_action_phase_uses_the_policy(self) -> None:
        assert self.compiled.decide(call("gh/push", phase="action")).decision == "ask"
        assert self.compiled.visible(call("gh/push", phase="action"))

    def test_a_role_without_phases_ignores_the_phase(self) -> None:
        assert not role().has_phases
        assert role().decide(call("gh/push", phase="research")).decision == "allow"


def test_a_denied_tool_is_hidden_and_an_asked_one_visible() -> None:
    compiled = role(tools=ToolPolicy(default="allow", ask=["a/*"], deny=["d/*"]))
    assert not compiled.visible(call("d/x"))
    assert compiled.visible(call("a/x"))


class TestInheritance:
    parent = compile_role(
        Role(
            name="base",
            description="the base",
            tools=ToolPolicy(default="allow", ask=["@destructive"], deny=["*/delete_*"]),
            gates={"x/y": ["why"]},
            phases=PhasePolicy(),
        ),
        source=Path("/roles/base.toml"),
    )

    def child(self, **fields: object) -> CompiledRole:
        return compile_role(
            Role(name="child", extends="base", **fields), source=Path("/p/child.toml"), parent=self.parent
        )  # type: ignore[arg-type]

    def test_a_child_inherits_defaults_exceptions_gates_phases_and_description(self) -> None:
        child = self.child()
        verdict = child.decide(call("gh/delete_repo", phase="action"))
        assert verdict.rule == 'tools.deny["*/delete_*"] (/roles/base.toml)'
        assert child.decide(call("x/y", read_only=True)).rule == 'gates["x/y"] (/roles/base.toml)'
        assert child.has_phases and child.description == "the base"

    def test_a_child_adds_exceptions_and_can_move_an_inherited_pattern(self) -> None:
        child = self.child(tools=ToolPolicy(deny=["gh/*"], allow=["*/delete_*"]))
        assert child.decide(call("gh/search", phase="action")).decision == "deny"
        verdict = child.decide(call("gl/delete_repo", destructive=False, phase="action"))
        assert (verdict.decision, verdict.rule) == ("allow", 'tools.allow["*/delete_*"] (/p/child.toml)')

    def test_a_child_can_turn_phases_off_and_change_a_default(self) -> None:
        child = self.child(phases=PhasePolicy(enabled=False), tools=ToolPolicy(default="deny"))
        assert not child.has_phases
        assert child.decide(call("gh/x", read_only=True)).rule == "tools.default (/p/child.toml)"

    def test_compiling_a_child_needs_its_parent(self) -> None:
        with pytest.raises(RoleError, match="extends: unknown role 'base'"):
            compile_role(Role(name="child", extends="base"))


def test_a_stated_kind_without_a_default_is_refused() -> None:
    with pytest.raises(RoleError) as caught:
        compile_role(Role(name="r", tools=ToolPolicy(allow=["gh/*"])), source=Path("r.toml"))
    assert str(caught.value) == (
        "r.toml: tools.default: missing: say allow, ask or deny; whatever the role does not name follows it "
        "(a role cannot be a pure whitelist)"
    )


def test_a_pattern_in_two_lists_is_refused() -> None:
    with pytest.raises(RoleError, match=r'tools.deny: "gh/\*" is also in tools.allow; a pattern belongs in one list'):
        compile_role(Role(name="r", tools=ToolPolicy(default="allow", allow=["gh/*"], deny=["gh/*"])))


def test_describe_gives_the_effective_policy() -> None:
    described = TestInheritance().child(tools=ToolPolicy(deny=["gh/*"])).describe()
    assert described["tools"] == {
        "default": "allow",
        "deny": ["*/delete_*", "gh/*"],
        "ask": ["@destructive"],
        "allow": [],
    }
    assert described["extends"] == "base" and described["phases"] == {
        "research": ["@read-only"],
        "builtins": ["read", "shell(@read-only)", "web", "meta"],
        "escalate": "allow",
    }


def test_the_same_selector_in_two_lists_reports_the_stricter_one() -> None:
    compiled = role(tools=ToolPolicy(default="allow", ask=["@destructive"], deny=["*/@destructive"]))
    verdict = compiled.decide(call("gh/push"))
    assert (verdict.decision, verdict.rule) == ("deny", 'tools.deny["*/@destructive"]')


def test_the_package_exports_are_sorted_and_importable() -> None:
    import polter.roles

    assert polter.roles.__all__ == sorted(polter.roles.__all__)
    assert all(hasattr(polter.roles, name) for name in polter.roles.__all__)


def test_argument_rules_decide_a_call_by_its_arguments_and_listings_ignore_them() -> None:
    from polter.roles import Role, compile_role
    from polter.roles.engine import ToolCallRequest, UpstreamRequest

    role = compile_role(
        Role.model_validate(
            {
                "name": "args",
                "servers": {"default": "allow", "deny": ["bad"]},
                "tools": {
                    "default": "ask",
                    "allow": ["fs/write_file(path=src/**)"],
                    "deny": ["terraria/player_ban(player=*admin*)"],
                },
            }
        )
    )
    call = lambda server, tool, **arguments: role.decide(ToolCallRequest(server, tool, arguments=arguments))  # noqa: E731
    allowed = call("fs", "write_file", path="src/a/b.py")
    assert (allowed.decision, allowed.by_arguments) == ("allow", True)
    assert call("fs", "write_file", path="/etc/passwd").decision == "ask"
    assert call("fs", "write_file", path=["src/a", "/etc/x"]).decision == "ask"  # an allow needs every element
    banned = call("terraria", "player_ban", player="superadmin")
    assert banned.decision == "deny" and banned.rule == 'tools.deny["terraria/player_ban(player=*admin*)"]'
    assert call("terraria", "player_ban", player="bob").decision == "ask"
    assert role.visible(ToolCallRequest("terraria", "player_ban"))
    assert role.decide(UpstreamRequest("fs", "sampling")).decision == "ask"
    assert role.decide(UpstreamRequest("fs", "elicitation")).decision == "allow"
    assert role.decide(UpstreamRequest("bad", "elicitation")).decision == "deny"
