"""The CLIs' own OS sandboxes, set from a role that writes nothing, end to end: the real CLIs behind the real gateway,
driven by the fake model APIs, running ``python3 -c`` through their shell tool.

A shell rule is a seatbelt: the role below allows ``python3``, so the hook lets the command run, and only the CLI's
own sandbox (Claude Code's, Codex's) keeps it from writing. Gemini CLI 0.61.0 and Qwen Code 0.24.4 have no sandbox
Polter can set for such a role; two tests pin why (see ``docs/adapters.md``), so that a version that changes it
fails here and gets its sandbox set from the role too.
"""

from __future__ import annotations

import asyncio
import json
import shlex
from pathlib import Path
from typing import Any

import pytest
from support.fake_models import FakeModelServer, Rule

from polter.adapters import Adapter, PaneToPrepare, PreparedPane

from .agent_pane import Agent, run_once
from .gateway_process import PolterGateway
from .test_builtins_e2e import ROLES, Run

pytestmark = pytest.mark.e2e

ANALYST = """\
extends = "researcher"

[builtins]
allow = ["shell(python3:*)"]
"""
"""The bundled researcher (writes nothing), allowed to run python3 too."""
ESCAPE = "escaped.txt"
SCRIPT = """\
import sys
for path in sys.argv[1:]:
    try:
        open(path, "w").write("x")
        print("wrote", path)
    except OSError as error:
        print("refused", path, error)"""


def escape_rule(cli: str, *targets: Path) -> Rule:
    """The model runs python3, which writes each of ``targets``, through the CLI's shell tool."""
    command = shlex.join(["python3", "-c", SCRIPT, *map(str, targets)])
    shell = {"claude-code": "Bash", "codex": "exec_command"}.get(cli, "run_shell_command")
    return Rule(when="run the script", call=shell, arguments={"cmd" if cli == "codex" else "command": command})


def ran_python(row: dict[str, Any]) -> bool:
    return (row.get("target") or "").startswith("python3 -c") and row["decision"] == "allow"


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> PolterGateway:
    """One gateway for the module's tests (a start costs seconds): each test registers its own panes and reads
    only their audit rows, so no test sees another's."""
    with PolterGateway(tmp_path_factory.mktemp("sandbox-e2e"), {**ROLES, "analyst": ANALYST}) as running:
        yield running


@pytest.mark.parametrize("name", ["claude-code", "codex"])
def test_a_role_that_writes_nothing_cannot_write_through_an_allowed_program(
    name: str, gateway: PolterGateway, tmp_path: Path, home: Path, project: Path
) -> None:
    """The hook lets ``python3 -c ...`` run (the role allows python3), and the sandbox the adapter set from the role
    keeps it from writing the project or the home. Under ``coder`` (no such sandbox) the same command writes."""
    run = Run(name, gateway, tmp_path, home, project)
    in_project, in_home = project / ESCAPE, home / ESCAPE
    with FakeModelServer([escape_rule(name, in_project, in_home)]) as model:
        pane_id, token = gateway.register("analyst")
        result = run.ask(run.pane("analyst", token, model), "please run the script", model)
        gateway.wait_for_audit(pane_id, ran_python)
        assert result is not None and f"refused {in_project}" in result, result
        assert not in_project.exists() and not in_home.exists(), f"the sandbox let python3 write: {result}"

        coder_id, coder_token = gateway.register("coder")
        written = run.ask(run.pane("coder", coder_token, model), "please run the script", model)
        gateway.wait_for_audit(coder_id, ran_python)
        assert in_project.exists(), f"under coder the same command writes: {written}"


def with_settings(adapter: Adapter, extra: dict[str, dict[str, Any]]) -> Adapter:
    """``adapter``, its pane's settings.json given ``extra`` (section by section) on top of what it writes."""

    class Adjusted(type(adapter)):  # type: ignore[misc]
        def prepare(self, pane: PaneToPrepare) -> PreparedPane:
            prepared = super().prepare(pane)
            name = next(name for name in prepared.files if name.endswith("settings.json"))
            text = prepared.files[name].text
            assert text is not None
            settings = json.loads(text)
            for section, values in extra.items():
                settings[section] = {**settings.get(section, {}), **values}
            files = {**prepared.files, name: prepared.files[name].model_copy(update={"text": json.dumps(settings)})}
            return prepared.model_copy(update={"files": files})

    return Adjusted(executable=adapter.executable())


async def test_gemini_clis_tool_sandbox_would_leave_the_project_writable(
    gateway: PolterGateway, tmp_path: Path, home: Path, project: Path
) -> None:
    """Why Polter sets no sandbox for Gemini CLI 0.61.0: with its tool sandbox on (``security.toolSandboxing``), in
    the TUI's default approval mode a pane starts in, python3 cannot write the home (its bwrap gives commands a
    throwaway /tmp, where the tests' home lies) but writes the project, and Gemini CLI itself creates .gitignore and
    .geminiignore there."""
    run = Run("gemini-cli", gateway, tmp_path, home, project)
    in_project, in_home = project / ESCAPE, home / ESCAPE
    adapter = with_settings(run.cli.adapter, {"security": {"toolSandboxing": True}})
    with FakeModelServer([escape_rule("gemini-cli", in_project, in_home)]) as model:
        pane_id, token = gateway.register("analyst")
        pane = run.pane("analyst", token, model)
        async with Agent(adapter, pane, home=home, path_dirs=[run.cli.bin_dir]) as agent:
            await agent.wait_for("Type your message", timeout=120)
            await agent.wait_until_quiet(1.0)
            await agent.type("please run the script")
            await agent.wait_for("Allow execution", timeout=60)  # Gemini CLI's own confirmation, after the hook
            agent.press(b"\r")  # 1. Allow once
            answer = await asyncio.to_thread(
                model.wait_for, lambda request: request.tool_result is not None, timeout=60
            )
    await asyncio.to_thread(gateway.wait_for_audit, pane_id, ran_python)
    result = answer.tool_result or ""
    assert f"wrote {in_home}" in result and not in_home.exists(), f"the tool sandbox was not on: {result}"
    assert in_project.exists(), f"Gemini CLI's tool sandbox kept the project read-only: set it from the role ({result})"
    assert {".gitignore", ".geminiignore"} <= {path.name for path in project.iterdir()}


def test_qwen_codes_execution_sandbox_would_refuse_the_gateway(
    gateway: PolterGateway, tmp_path: Path, home: Path, project: Path
) -> None:
    """Why Polter sets no sandbox for Qwen Code 0.24.4: with its bwrap sandbox on (``tools.executionSandbox``
    read-only), it refuses to start with MCP servers configured (the gateway's), and it would turn hooks off."""
    run = Run("qwen-code", gateway, tmp_path, home, project)
    sandbox = {"executionSandbox": {"backend": "bwrap", "filesystem": "read-only", "network": "open"}}
    with FakeModelServer([]) as model:
        _pane_id, token = gateway.register("analyst")
        _prepared, result = run_once(
            with_settings(run.cli.adapter, {"tools": sandbox}),
            run.pane("analyst", token, model),
            ["-p", "hello"],
            home=home,
            path_dirs=[run.cli.bin_dir],
        )
    assert result.returncode != 0, result.stdout[-2000:]
    assert "Tool execution sandbox does not support" in result.stderr and "MCP" in result.stderr, result.stderr[-2000:]
