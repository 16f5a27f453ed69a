"""Each bundled adapter installs its CLI's state hooks (a turn began, a dialog waits, the turn ended) as reports
that cannot veto, and reads the payloads its CLI sends into a state. The payload shapes are those of the pinned
versions (Claude Code 2.1.332's hook schemas, Codex 0.171.0's ``*.command.input`` schemas, Gemini CLI 0.61.0's
and Qwen Code 0.24.4's bundles, opencode 1.18.33's event types); the e2e tests send the real ones."""

from __future__ import annotations

import json
import tomllib
from collections.abc import Callable
from typing import Any

import pytest

from polter.adapters import Adapter, PaneToPrepare, StateReport, one_line
from polter.adapters.plugins import AdapterRegistry, write_pane_files
from polter.protocol import AgentState

WORKING, WAITING, IDLE = AgentState.WORKING, AgentState.WAITING, AgentState.IDLE


def files_of(adapter: Adapter, pane: PaneToPrepare) -> dict[str, str]:
    prepared = adapter.prepare(pane)
    write_pane_files(pane.runtime_dir, prepared.files, prepared.homes)
    return {name: file.text or "" for name, file in prepared.files.items()}


def report(adapter: Adapter, **payload: Any) -> tuple[AgentState, str, str, bool] | None:
    found = adapter.state_report(payload)
    return None if found is None else (found.state, found.event, found.message, found.turn_ended)


def test_claude_code_posts_its_state_events_straight_to_the_gateway(
    bundled: AdapterRegistry, make_pane: Callable[..., PaneToPrepare]
) -> None:
    claude = bundled.get("claude-code")
    settings = json.loads(files_of(claude, make_pane())["claude/settings.json"])
    hooks = settings["hooks"]
    assert set(hooks) == {"PreToolUse", "UserPromptSubmit", "PostToolUse", "PermissionRequest", "Notification",
                          "Stop", "StopFailure"}  # fmt: skip
    for event in ("UserPromptSubmit", "PostToolUse", "PermissionRequest", "Notification", "Stop", "StopFailure"):
        [entry] = hooks[event]
        [hook] = entry["hooks"]
        assert hook["type"] == "http" and hook["url"] == "http://127.0.0.1:4321/hook/claude-code/state"
        assert hook["headers"] == {"Authorization": "Bearer $POLTER_TOKEN"} and hook["allowedEnvVars"] == [
            "POLTER_TOKEN"
        ]
        assert "onFailure" not in hook, "a report that does not arrive must not block anything"
    [veto] = hooks["PreToolUse"][0]["hooks"]
    assert veto["onFailure"] == "block" and veto["url"].startswith("http://127.0.0.1:4321/hook/claude-code/payload")


def test_claude_code_payloads(bundled: AdapterRegistry) -> None:
    claude = bundled.get("claude-code")
    common = {"session_id": "s", "transcript_path": "/t", "cwd": "/p", "permission_mode": "default"}
    assert report(claude, **common, hook_event_name="UserPromptSubmit", prompt="fix it") == (
        WORKING,
        "UserPromptSubmit",
        "",
        False,
    )
    assert report(claude, **common, hook_event_name="PermissionRequest", tool_name="Bash",
                  tool_input={"command": "rm -rf build"}) == (
        WAITING, "PermissionRequest", "Claude Code asks permission to use Bash", False)  # fmt: skip
    assert report(claude, **common, hook_event_name="Notification", notification_type="permission_prompt",
                  message="Claude needs your permission to use Bash") == (
        WAITING, "Notification:permission_prompt", "Claude needs your permission to use Bash", False)  # fmt: skip
    assert (
        report(claude, **common, hook_event_name="Notification", notification_type="auth_success", message="ok") is None
    )
    assert report(claude, **common, hook_event_name="Stop", stop_hook_active=False,
                  last_assistant_message="All 12 tests pass.\n\nI changed two files.") == (
        IDLE, "Stop", "All 12 tests pass. I changed two files.", True)  # fmt: skip
    assert report(claude, **common, hook_event_name="StopFailure", error="rate_limit") == (
        IDLE, "StopFailure", "the turn failed: rate_limit", True)  # fmt: skip
    assert report(claude, **common, hook_event_name="PreToolUse", tool_name="Bash") is None
    assert report(claude) is None


def test_codex_reports_through_the_forwarder_in_its_report_mode(
    bundled: AdapterRegistry, make_pane: Callable[..., PaneToPrepare]
) -> None:
    codex = bundled.get("codex")
    config = tomllib.loads(files_of(codex, make_pane())["codex/config.toml"])
    for event in ("UserPromptSubmit", "PermissionRequest", "Stop"):
        [entry] = config["hooks"][event]
        [hook] = entry["hooks"]
        assert hook["type"] == "command" and hook["command"].endswith(".pyc --state codex"), hook
    common = {"session_id": "s", "turn_id": "t", "cwd": "/p", "model": "gpt", "permission_mode": "default",
              "transcript_path": None}  # fmt: skip
    assert report(codex, **common, hook_event_name="PermissionRequest", tool_name="Bash",
                  tool_input={"command": "cargo test"}) == (
        WAITING, "PermissionRequest", "Codex CLI asks permission to use Bash", False)  # fmt: skip
    assert report(codex, **common, hook_event_name="Stop", stop_hook_active=False,
                  last_assistant_message=None) == (IDLE, "Stop", "", True)  # fmt: skip


def test_gemini_cli_and_qwen_code_name_their_state_hooks(
    bundled: AdapterRegistry, make_pane: Callable[..., PaneToPrepare]
) -> None:
    gemini, qwen = bundled.get("gemini-cli"), bundled.get("qwen-code")
    settings = json.loads(files_of(gemini, make_pane())["gemini-cli/.gemini/settings.json"])
    for event in ("BeforeAgent", "Notification", "AfterAgent"):
        [entry] = settings["hooks"][event]
        [hook] = entry["hooks"]
        assert hook["name"] == "polter-state" and hook["command"].endswith(".pyc --state gemini-cli")
    qwen_pane = make_pane(runtime_dir=make_pane().runtime_dir.with_name("qwen-runtime"))
    settings = json.loads(files_of(qwen, qwen_pane)["qwen-code/settings.json"])
    for event in ("UserPromptSubmit", "Notification", "Stop"):
        [entry] = settings["hooks"][event]
        assert entry["hooks"][0]["command"].endswith(".pyc --state qwen-code")

    base = {"session_id": "s", "transcript_path": "/t", "cwd": "/p", "timestamp": "2026-12-01T00:00:00Z"}
    assert report(gemini, **base, hook_event_name="BeforeAgent", prompt="go") == (WORKING, "BeforeAgent", "", False)
    assert report(gemini, **base, hook_event_name="Notification", notification_type="ToolPermission",
                  message="Tool run_shell_command requires editing", details={}) == (
        WAITING, "Notification:ToolPermission", "Tool run_shell_command requires editing", False)  # fmt: skip
    assert report(gemini, **base, hook_event_name="AfterAgent", prompt="go", prompt_response="Done: 3 files.",
                  stop_hook_active=False) == (IDLE, "AfterAgent", "Done: 3 files.", True)  # fmt: skip
    assert report(qwen, **base, hook_event_name="Notification", notification_type="permission_prompt",
                  message="Qwen Code needs your permission to use run_shell_command") == (
        WAITING, "Notification:permission_prompt", "Qwen Code needs your permission to use run_shell_command",
        False)  # fmt: skip
    assert report(qwen, **base, hook_event_name="Notification", notification_type="idle_prompt", message="idle") is None
    assert report(qwen, **base, hook_event_name="Stop", last_assistant_message="Fixed.") == (
        IDLE,
        "Stop",
        "Fixed.",
        True,
    )


def test_opencode_reports_from_its_plugin(bundled: AdapterRegistry, make_pane: Callable[..., PaneToPrepare]) -> None:
    opencode = bundled.get("opencode")
    plugin = files_of(opencode, make_pane())["opencode/polter-veto.js"]
    assert 'const STATE_URL = "http://127.0.0.1:4321/hook/opencode/state";' in plugin
    assert "event: async ({ event })" in plugin and "subagents" in plugin
    assert report(opencode, type="session.status", status="busy") == (WORKING, "session.status:busy", "", False)
    assert report(opencode, type="session.status", status="idle") is None
    assert report(opencode, type="permission.asked", permission="bash", patterns=["rm -rf build"]) == (
        WAITING, "permission.asked", "opencode asks permission: bash rm -rf build", False)  # fmt: skip
    assert report(opencode, type="question.asked", question="Which branch?") == (
        WAITING, "question.asked", "opencode asks: Which branch?", False)  # fmt: skip
    assert report(opencode, type="permission.replied") == (WORKING, "permission.replied", "", False)
    assert report(opencode, type="session.idle") == (IDLE, "session.idle", "", True)
    assert report(opencode, type="session.error", error="overloaded") == (
        IDLE, "session.error", "the turn failed: overloaded", True)  # fmt: skip
    assert report(opencode, type="message.updated") is None


def test_the_shell_installs_no_hooks_and_reads_the_turns_a_program_it_runs_reports(
    bundled: AdapterRegistry, make_pane: Callable[..., PaneToPrepare]
) -> None:
    """A shell has no hooks (its screen is read); the bundled scripted agent, run in its place, reports its turns in
    Claude Code's payloads to the shell's state route."""
    shell = bundled.get("shell")
    assert "hook" not in " ".join(shell.prepare(make_pane()).launch.argv)
    assert report(shell, hook_event_name="UserPromptSubmit", prompt="work 2") == (WORKING, "UserPromptSubmit", "", False)
    assert report(shell, hook_event_name="Stop", last_assistant_message="Worked 2 s: done.") == (
        IDLE, "Stop", "Worked 2 s: done.", True)  # fmt: skip
    assert report(shell, hook_event_name="SessionStart") is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("plain", "plain"),
        ("two\nlines\t and  tabs", "two lines and tabs"),
        ("\x1b]9;evil\x07 bell", "]9;evil bell"),
        ("x" * 300, "x" * 199 + "…"),
        (None, ""),
    ],
)
def test_one_line_keeps_notifications_to_one_clean_line(text: Any, expected: str) -> None:
    assert one_line(text) == expected


def test_a_report_is_a_description_and_nothing_else() -> None:
    """The model has no field that could carry a decision."""
    assert set(StateReport.model_fields) == {"state", "event", "message", "turn_ended"}
