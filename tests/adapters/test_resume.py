"""``polter --restore``: adapters that can continue the CLI's last conversation in the pane's directory."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from polter.adapters import PaneToPrepare
from polter.adapters.plugins import AdapterRegistry


def test_which_adapters_resume_and_which_one_is_no_agent(bundled: AdapterRegistry) -> None:
    assert {loaded.adapter.name for loaded in bundled if loaded.adapter.info.resume} == {
        "claude-code", "codex", "gemini-cli", "opencode", "qwen-code"}
    assert [loaded.adapter.name for loaded in bundled if not loaded.adapter.info.agent] == ["shell"]


def test_claude_code_continues_only_where_it_has_a_conversation(
    bundled: AdapterRegistry, make_pane: Callable[..., PaneToPrepare], home: Path, project: Path
) -> None:
    claude = bundled.get("claude-code")
    assert "--continue" not in claude.prepare(make_pane(resume=True)).launch.argv  # nothing to continue yet
    folder = home / ".claude" / "projects" / str(project).replace("/", "-").replace("_", "-").replace(".", "-")
    folder.mkdir(parents=True)
    (folder / "0b8c3f5e.jsonl").write_text("{}\n")
    assert claude.prepare(make_pane(resume=True)).launch.argv[-1] == "--continue"
    assert "--continue" not in claude.prepare(make_pane()).launch.argv


def test_codex_resumes_its_last_session_in_the_directory(
    bundled: AdapterRegistry, make_pane: Callable[..., PaneToPrepare], home: Path, project: Path
) -> None:
    codex = bundled.get("codex")
    assert codex.prepare(make_pane(resume=True)).launch.argv[1] != "resume"
    day = home / ".codex" / "sessions" / "2026" / "11" / "30"
    day.mkdir(parents=True)
    (day / "rollout-2026-11-30T08-00-00-elsewhere.jsonl").write_text(json.dumps({"payload": {"cwd": "/elsewhere"}}) + "\n")
    assert codex.prepare(make_pane(resume=True)).launch.argv[1] != "resume"
    (day / "rollout-2026-11-30T09-00-00-here.jsonl").write_text(json.dumps({"payload": {"cwd": str(project)}}) + "\n")
    assert codex.prepare(make_pane(resume=True)).launch.argv[1:4] == ("resume", "--last", "--dangerously-bypass-hook-trust")


def test_opencode_continues(bundled: AdapterRegistry, make_pane: Callable[..., PaneToPrepare]) -> None:
    assert bundled.get("opencode").prepare(make_pane(resume=True)).launch.argv[1:] == ("--continue",)


def test_gemini_cli_resumes_its_latest_chat_in_the_directory(
    bundled: AdapterRegistry, make_pane: Callable[..., PaneToPrepare], home: Path, project: Path
) -> None:
    gemini = bundled.get("gemini-cli")
    assert "--resume" not in gemini.prepare(make_pane(resume=True)).launch.argv  # nothing to resume yet
    folder = home / ".gemini"
    (folder / "tmp" / "project" / "chats").mkdir(parents=True)
    (folder / "projects.json").write_text(json.dumps({"projects": {"/elsewhere": "project"}}))
    (folder / "tmp" / "project" / "chats" / "session-2026-12-01T10-00-abc.jsonl").write_text("{}\n")
    assert "--resume" not in gemini.prepare(make_pane(resume=True)).launch.argv  # another folder's chat
    (folder / "projects.json").write_text(json.dumps({"projects": {str(project): "project"}}))
    argv = gemini.prepare(make_pane(resume=True)).launch.argv
    assert argv[argv.index("--resume") + 1] == "latest"
    assert "--resume" not in gemini.prepare(make_pane()).launch.argv


def test_qwen_code_continues_its_latest_chat_in_the_directory(
    bundled: AdapterRegistry, make_pane: Callable[..., PaneToPrepare], home: Path, project: Path
) -> None:
    qwen = bundled.get("qwen-code")
    assert "--continue" not in qwen.prepare(make_pane(resume=True)).launch.argv
    chats = home / ".qwen" / "projects" / str(project).replace("/", "-").replace("_", "-").replace(".", "-") / "chats"
    chats.mkdir(parents=True)
    (chats / "163efbb4-2093-4c4d-a797-e64782487098.jsonl").write_text("{}\n")
    assert "--continue" in qwen.prepare(make_pane(resume=True)).launch.argv
    assert "--continue" not in qwen.prepare(make_pane()).launch.argv
