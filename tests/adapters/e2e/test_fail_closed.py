"""The real CLIs, configured by their adapters, against a stand-in MCP endpoint that has no ``/hook``: each
reaches every endpoint (the MCP servers and the veto hook's ``/hook/<adapter>/payload``) with the pane's token and no
MCP server the project configures itself, hides the denied skill, and, when its veto hook cannot get a verdict,
refuses the call before it reaches the server (the execution layer fails closed).

Non-interactive modes (``claude -p``, ``codex exec``, ``gemini -p``, ``qwen -p``, ``opencode run``) keep this quick; the TUIs run in
``test_gateway_e2e.py``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.fake_models import FakeModelServer, Rule
from support.tiny_mcp import TinyMcp

from polter.adapters import Pane, TestMode

from .agent_pane import run_once
from .conftest import real_cli, seed_opencode_plugin_sdk, write_test_skills
from .offers import offered_skills

pytestmark = pytest.mark.e2e

TOKEN = "tok-e2e-fail-closed"
NON_INTERACTIVE = {
    "claude-code": ([], ["-p", "please echo hi"]),
    "codex": (["exec"], ["--skip-git-repo-check", "please echo hi"]),
    "gemini-cli": ([], ["-p", "please echo hi"]),
    "qwen-code": ([], ["-p", "please echo hi"]),
    "opencode": ([], ["run", "please echo hi"]),
}
TOOL_NAMES = {"claude-code": "mcp__time__echo", "codex": "mcp__time__echo", "gemini-cli": "mcp_time_echo",
              "qwen-code": "mcp__time__echo", "opencode": "time_echo"}

NO_VERDICT = {name: "Polter: the gateway answered HTTP 404" for name in NON_INTERACTIVE} | {
    "claude-code": 'failed; blocking because onFailure is "block"\nHTTP 404 from '
}
"""What the model is told when the hook gets no verdict: the hook client's (or opencode plugin's) reason; Claude Code
posts its HTTP hook itself and, with ``onFailure: block``, refuses the call with its own words."""


def configure_project_server(project: Path, url: str) -> None:
    """The project's own MCP server, in each CLI's project config: it must not reach the pane."""
    (project / ".mcp.json").write_text(json.dumps({"mcpServers": {"leak": {"type": "http", "url": url}}}))
    (project / ".codex").mkdir()
    (project / ".codex" / "config.toml").write_text(f'[mcp_servers.leak]\nurl = "{url}"\n')
    for folder in (".gemini", ".qwen"):
        (project / folder).mkdir(exist_ok=True)
        (project / folder / "settings.json").write_text(json.dumps({"mcpServers": {"leak": {"httpUrl": url}}}))
    (project / "opencode.json").write_text(json.dumps({"mcp": {"leak": {"type": "remote", "url": url}}}))


@pytest.mark.parametrize("name", ["claude-code", "codex", "gemini-cli", "qwen-code", "opencode"])
def test_without_a_verdict_the_call_is_refused(name: str, tmp_path: Path, home: Path, project: Path) -> None:
    cli = real_cli(name)
    write_test_skills(project)
    if name == "opencode":
        seed_opencode_plugin_sdk(home, project)
    rules = [Rule(when="please echo", call=r"(mcp_+)?time_+echo", arguments={"text": "hi"})]
    with FakeModelServer(rules) as model, TinyMcp(TOKEN, ["time", "polter", "leak"]) as mcp:
        configure_project_server(project, f"{mcp.url}/mcp/leak")
        pane = Pane(pane_id="p1", gateway_url=mcp.url, servers=("time",), runtime_dir=tmp_path / "runtime",
                    cwd=project, token=TOKEN, test_mode=TestMode(model_base_url=model.url), home=home,
                    skill_decision=lambda skill: "deny" if skill == "secret-skill" else "allow")
        before, after = NON_INTERACTIVE[name]
        prepared, result = run_once(cli.adapter, pane, after, before_args=before, home=home, path_dirs=[cli.bin_dir])
        assert result.returncode == 0, result.stdout + result.stderr

        # It reached both endpoints, the veto hook and its state hooks (issue 14), always with the pane's token,
        # and nothing else of the gateway's.
        assert mcp.authorized_paths() == {"/mcp/time", "/mcp/polter", f"/hook/{name}/payload", f"/hook/{name}/state"}
        assert all(auth == f"Bearer {TOKEN}" for _method, _path, auth in mcp.seen)
        assert "/mcp/leak" not in {path for _method, path, _auth in mcp.seen}, "the project's own server stays out"

        first = model.wait_for(lambda request: "please echo hi" in request.prompt and bool(request.tools))
        assert {TOOL_NAMES[name], TOOL_NAMES[name].replace("time", "polter")} <= set(first.tools), first.tools
        assert first.reply == f'call {TOOL_NAMES[name]} {{"text": "hi"}}'
        assert not [tool for tool in first.tools if "leak" in tool]

        # The hook found no verdict (the stand-in answers /hook/<adapter>/payload with 404), so the call never ran;
        # the model is told why.
        result_request = model.wait_for(lambda request: request.tool_result is not None)
        assert NO_VERDICT[name] in (result_request.tool_result or ""), result_request.tool_result
        assert mcp.calls == [], "a refused call must not reach the server"

        # The denied skill is not offered; the allowed one is (Codex lists .agents skills, the others theirs;
        # opencode run 1.18.33 lists only its built-in skill).
        skills = offered_skills(first)
        assert "secret-skill" not in skills and ("ok-skill" in skills) is (name != "opencode"), skills
        assert prepared.hidden_skills == ("secret-skill",)
    assert not pane.runtime_dir.exists(), "the pane's runtime dir is removed when it ends"
