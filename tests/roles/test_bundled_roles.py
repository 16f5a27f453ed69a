"""The roles Polter ships: they load cleanly and do what their comments promise."""

from __future__ import annotations

import pytest

from polter.paths import bundled_dir
from polter.roles import CompiledRole, ServerRequest, SkillRequest, ToolCallRequest
from polter.roles.library import DEFAULT_ROLE, RoleLibrary

# The 46-tool catalogue of the Terraria MCP server.
TERRARIA_READ_ONLY = [
    "server_status", "server_info", "server_motd", "world_info", "player_list", "player_info",
    "user_list", "user_info", "ban_list", "ban_info", "group_list", "group_info", "region_list",
    "region_info", "warp_list", "wiki_search", "item_lookup",
]  # fmt: skip
TERRARIA_ACTING = [
    "server_broadcast", "server_save", "server_reload", "server_stop", "server_raw_command",
    "world_time_set", "world_rain", "world_wind", "world_bloodmoon", "world_event", "world_invasion",
    "world_hardmode", "world_butcher", "give_item", "player_kick", "player_ban", "player_unban",
    "player_mute", "player_kill", "player_heal", "player_godmode", "player_buff", "player_teleport",
    "npc_spawn", "region_protect", "region_allow", "region_delete", "group_permissions", "user_set_group",
]  # fmt: skip
TERRARIA_GATED = {
    "world_hardmode": ("enable hard mode please", "开启困难模式吧"),
    "server_stop": ("shut down the server", "请关服"),
    "world_butcher": ("butcher everything", "清怪"),
    "player_ban": ("ban griefer42", "封禁 griefer42"),
    "player_kick": ("kick bob", "把bob踢出"),
    "player_kill": ("smite him", "处死他"),
    "region_delete": ("delete region spawn", "删除区域 spawn"),
    "server_raw_command": ("run command /time noon", "执行命令 /time noon"),
}


@pytest.fixture(scope="module")
def library() -> RoleLibrary:
    return RoleLibrary.load([bundled_dir("roles")])


def role(library: RoleLibrary, name: str) -> CompiledRole:
    compiled = library.get(name)
    assert compiled is not None, library.problems
    return compiled


def terraria(tool: str, **fields: object) -> ToolCallRequest:
    annotations = {"read_only": True} if tool in TERRARIA_READ_ONLY else {"destructive": tool in TERRARIA_GATED}
    return ToolCallRequest("terraria", tool, **{**annotations, "phase": "action", **fields})  # type: ignore[arg-type]


def test_the_catalogue_has_46_tools() -> None:
    assert len(TERRARIA_READ_ONLY) == 17 and len(TERRARIA_ACTING) == 29
    assert set(TERRARIA_GATED) <= set(TERRARIA_ACTING)


def test_every_bundled_role_loads_without_problems_and_says_what_it_is_for(library: RoleLibrary) -> None:
    assert library.problems == [] and library.warnings == []
    assert library.names() == [
        "coder", "ops", "researcher", "reviewer", "terraria-admin", "terraria-moderator", "terraria-researcher",
    ]  # fmt: skip
    for name in library.names():
        assert role(library, name).description
        assert bundled_dir("roles").joinpath(f"{name}.toml").read_text(encoding="utf-8").startswith(f"# {name} — ")
    assert DEFAULT_ROLE in library.names()


def test_terraria_researcher_grants_exactly_the_17_read_only_tools(library: RoleLibrary) -> None:
    researcher = role(library, "terraria-researcher")
    # Whatever the annotations say: the tools are named one by one.
    for hints in ({}, {"read_only": True}, {"read_only": False, "destructive": True}):
        allowed = {
            tool
            for tool in TERRARIA_READ_ONLY + TERRARIA_ACTING + ["recent_events"]
            if researcher.decide(ToolCallRequest("terraria", tool, **hints)).decision == "allow"  # type: ignore[arg-type]
        }
        assert allowed == {*TERRARIA_READ_ONLY, "recent_events"}  # the event log, when the intake is on
    denied = {tool for tool in TERRARIA_ACTING if researcher.decide(terraria(tool)).decision == "deny"}
    assert denied == set(TERRARIA_ACTING)
    assert not researcher.visible(terraria("world_hardmode"))
    assert researcher.decide(ToolCallRequest("github", "search", read_only=True)).decision == "deny"
    assert researcher.decide(ServerRequest("github")).decision == "deny"
    assert researcher.decide(ToolCallRequest("polter", "whoami")).decision == "allow"


def test_terraria_moderator_moderates_and_kicks_and_bans_ask(library: RoleLibrary) -> None:
    moderator = role(library, "terraria-moderator")
    decisions = {tool: moderator.decide(terraria(tool)).decision for tool in TERRARIA_READ_ONLY + TERRARIA_ACTING}
    assert {tool for tool, d in decisions.items() if d == "ask"} == {"player_kick", "player_ban"}
    assert {tool for tool, d in decisions.items() if d == "allow"} == set(TERRARIA_READ_ONLY) | {
        "player_mute", "player_unban", "server_broadcast",
    }  # fmt: skip
    assert moderator.decide(terraria("recent_events", read_only=True)).decision == "allow"  # watching the chat
    assert decisions["world_hardmode"] == decisions["give_item"] == "deny"


def test_terraria_admin_allows_all_46_tools_but_gates_and_asks_the_dangerous_ones(library: RoleLibrary) -> None:
    admin = role(library, "terraria-admin")
    for tool in TERRARIA_READ_ONLY + TERRARIA_ACTING:
        assert admin.visible(terraria(tool)), tool
        verdict = admin.decide(terraria(tool))
        if tool in TERRARIA_GATED:
            assert (verdict.decision, verdict.rule) == (
                "deny",
                f'gates["terraria/{tool}"] ({verdict.rule.split(" (", 1)[1]}',
            )
            assert "the human has asked for it" in verdict.reason
        elif tool in ("group_permissions", "user_set_group"):
            assert verdict.decision == "ask"
        else:
            assert verdict.decision == "allow", tool
    for tool, (english, chinese) in TERRARIA_GATED.items():
        for said in (english, chinese, english.upper()):
            verdict = admin.decide(terraria(tool, recent_input=["hi", said]))
            assert verdict.decision == "ask", (tool, said)
            assert "The human asked for it" in verdict.reason
    # Someone else's gate words do not open a gate.
    assert admin.decide(terraria("world_hardmode", recent_input=["ban griefer42"])).decision == "deny"
    assert admin.decide(terraria("player_ban", recent_input=["unban griefer42"])).decision == "deny"
    # Nor does the game's own vocabulary (a player asking for items, the rain).
    everyday = ["give me a banner and a bandage", "put it in my piggy bank", "make it rain", "给我一把剑"]
    for tool in TERRARIA_GATED:
        assert admin.decide(terraria(tool, recent_input=everyday)).decision == "deny", tool


def test_coder_allows_everything_and_asks_before_destructive_tools(library: RoleLibrary) -> None:
    coder = role(library, "coder")
    assert coder.decide(ToolCallRequest("github", "search", read_only=True)).decision == "allow"
    assert coder.decide(ToolCallRequest("github", "create_issue", destructive=False)).decision == "allow"
    assert coder.decide(ToolCallRequest("github", "delete_repo", destructive=True)).decision == "ask"
    assert coder.decide(ToolCallRequest("unknown", "tool")).decision == "ask"  # no annotations: destructive per MCP
    assert coder.decide(SkillRequest("anything")).decision == "allow"
    assert not coder.has_phases


def test_researcher_calls_read_only_tools_only_and_no_writing_skills(library: RoleLibrary) -> None:
    researcher = role(library, "researcher")
    assert researcher.decide(ToolCallRequest("github", "search", read_only=True)).decision == "allow"
    assert researcher.decide(ToolCallRequest("github", "create_issue", destructive=False)).decision == "deny"
    assert researcher.decide(ToolCallRequest("next-weeks-server", "tool")).decision == "deny"
    assert researcher.decide(SkillRequest("git-commit")).decision == "deny"
    assert researcher.decide(SkillRequest("deploy-to-prod")).decision == "deny"
    assert researcher.decide(SkillRequest("web-search")).decision == "allow"
    assert researcher.decide(SkillRequest("pdf")).decision == "ask"


def test_reviewer_researches_first_asks_to_comment_and_never_merges(library: RoleLibrary) -> None:
    reviewer = role(library, "reviewer")
    comment = ToolCallRequest("github", "add_comment", destructive=False)
    assert reviewer.decide(comment).rule.startswith("phases.research")
    assert (
        reviewer.decide(ToolCallRequest("github", "add_comment", destructive=False, phase="action")).decision == "ask"
    )
    assert reviewer.decide(ToolCallRequest("github", "get_diff", read_only=True)).decision == "allow"
    assert reviewer.decide(ToolCallRequest("github", "merge_pull_request", phase="action")).decision == "deny"


def test_ops_needs_the_humans_words_for_a_deploy(library: RoleLibrary) -> None:
    ops = role(library, "ops")
    deploy = ToolCallRequest("k8s", "deploy_service", destructive=True, phase="action")
    assert ops.decide(deploy).decision == "deny"
    said = ToolCallRequest("k8s", "deploy_service", destructive=True, phase="action", recent_input=["请部署到生产"])
    assert ops.decide(said).decision == "ask"
    assert ops.decide(ToolCallRequest("k8s", "get_pods", read_only=True)).decision == "allow"
    assert ops.decide(
        ToolCallRequest("k8s", "deploy_service", destructive=True, recent_input=["deploy"])
    ).rule.startswith("phases.research")
