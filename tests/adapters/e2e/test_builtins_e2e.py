"""Roles over the CLIs' own tools, end to end: the real Claude Code, Codex and Gemini CLI behind the real gateway,
driven by the fake model APIs to call their built-in tools.

For each CLI, under the bundled ``researcher``: its file-writing tool (Write / apply_patch / write_file) is refused
and the file does not exist afterwards; ``git push`` hidden in a chain is refused; ``ls`` runs. Under the bundled
``coder`` the same write succeeds. With the veto hook switched off, the CLI's own layer (set from the role by the
adapter: Claude Code's permissions.deny, Codex's read-only sandbox, Gemini CLI's excluded tools) still refuses the
researcher's write.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from support.fake_models import FakeModelServer, Rule

from polter.adapters import PaneToPrepare, TestMode
from polter.gateway.builtin_calls import builtins_policy
from polter.paths import bundled_dir
from polter.roles import RoleLibrary

from .agent_pane import run_once
from .conftest import real_cli
from .gateway_process import PolterGateway
from .unhooked import adjusted

pytestmark = pytest.mark.e2e

ROLES = {name: (bundled_dir("roles") / f"{name}.toml").read_text() for name in ("researcher", "coder")}
WRITTEN = "written-by-the-agent.txt"
PATCH = f"*** Begin Patch\n*** Add File: {WRITTEN}\n+hello from the agent\n*** End Patch\n"


def calls(cli: str, project: Path) -> dict[str, Rule]:
    """The fake model's tool calls, in each CLI's own tool names and arguments."""
    target = str(project / WRITTEN)
    if cli == "claude-code":
        write = Rule(when="write the file", call="Write", arguments={"file_path": target, "content": "hello"})
        shell = "Bash"
        command = "command"
    elif cli == "codex":
        write = Rule(when="write the file", call="apply_patch", arguments={"input": PATCH})
        shell = "exec_command"
        command = "cmd"
    else:
        write = Rule(when="write the file", call="write_file", arguments={"file_path": WRITTEN, "content": "hello"})
        shell = "run_shell_command"
        command = "command"
    push, listing = {command: "ls && git push origin main"}, {command: "ls"}
    return {
        "write": write,
        # After the first refusal (the write's), a push behind an allowed command; after the push's refusal, ls.
        "then push": Rule(when="", after="Polter", call=shell, arguments=push, times=1),
        "then ls": Rule(when="", after="git push origin main", call=shell, arguments=listing, times=1),
    }


ARGS = {
    "claude-code": ([], ["-p"]),
    "codex": (["exec"], ["--skip-git-repo-check"]),
    "gemini-cli": ([], ["--approval-mode", "yolo", "-p"]),
}
"""Non-interactive runs. Gemini CLI offers its writing tools in -p only outside the default approval mode; Polter's
hook is what decides them."""


class Run:
    def __init__(self, name: str, gateway: PolterGateway, tmp_path: Path, home: Path, project: Path) -> None:
        self.name, self.gateway, self.tmp_path, self.home, self.project = name, gateway, tmp_path, home, project
        self.cli = real_cli(name)

    def pane(self, role: str, token: str, model: FakeModelServer, *, native: bool = True) -> PaneToPrepare:
        """A pane under ``role``; ``native=False`` leaves the CLI's own layer unset, so the hook alone decides."""
        compiled = RoleLibrary.load([self.gateway.roles_dir]).get(role)
        assert compiled is not None
        return PaneToPrepare(
            pane_id="e2e",
            gateway_url=self.gateway.url,
            servers=("time",),
            runtime_dir=self.tmp_path / "runtime",
            cwd=self.project,
            token=token,
            home=self.home,
            test_mode=TestMode(model_base_url=model.url, model="gpt-5.5" if self.name == "codex" else None),
            builtins=builtins_policy(compiled, ()) if native else None,
            skill_decision=self.gateway.skill_policy(role),
        )

    def ask(self, pane: PaneToPrepare, prompt: str, model: FakeModelServer, *, hooks: bool = True) -> str | None:
        """Run one prompt; the tool result the CLI sent back to the model (None: the tool was not offered)."""
        before, after = ARGS[self.name]
        adapter = _for_test(self.cli.adapter, hooks=hooks)
        start = len(model.requests)
        _prepared, result = run_once(
            adapter, pane, [*after, prompt], before_args=before, home=self.home, path_dirs=[self.cli.bin_dir]
        )
        assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
        asked = model.wait_for(lambda request: prompt in request.prompt and bool(request.tools), start=start)
        if not asked.reply.startswith("call "):
            return None
        answer = model.wait_for(lambda request: request.tool_result is not None, start=start, timeout=30)
        return answer.tool_result or ""

    @staticmethod
    def result_containing(text: str, model: FakeModelServer, start: int) -> str:
        """The first tool result since request ``start`` that contains ``text`` (a later call of the same turn)."""
        answer = model.wait_for(lambda request: text in (request.tool_result or ""), start=start, timeout=30)
        return answer.tool_result or ""


def _for_test(adapter: Any, *, hooks: bool) -> Any:
    """The adapter, with Claude Code's tool search off (its file tools would hide behind ToolSearch from the fake
    model) and, with ``hooks=False``, its veto hook taken out of the files it writes (the CLI's own layer stays)."""
    return adjusted(adapter, hook=hooks, env={"ENABLE_TOOL_SEARCH": "false"})


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> PolterGateway:
    """One gateway for the module's tests (a start costs seconds): each test registers its own panes and reads
    only their audit rows, so no test sees another's."""
    with PolterGateway(tmp_path_factory.mktemp("builtins-e2e"), ROLES) as running:
        yield running


@pytest.mark.parametrize("name", ["claude-code", "codex", "gemini-cli"])
def test_the_role_governs_the_clis_own_tools(
    name: str, gateway: PolterGateway, tmp_path: Path, home: Path, project: Path
) -> None:
    run = Run(name, gateway, tmp_path, home, project)
    (project / "visible.txt").write_text("x")
    with FakeModelServer(list(calls(name, project).values())) as model:
        pane_id, token = gateway.register("researcher")
        researcher = run.pane("researcher", token, model, native=False)  # the hook alone decides

        # One turn, three calls: the write (refused), a push behind an allowed command (refused), then ls.
        start = len(model.requests)
        refused = run.ask(researcher, "please write the file", model)
        assert refused is not None and not (project / WRITTEN).exists(), refused
        assert "Polter" in refused and "write" in refused.lower(), refused
        gateway.wait_for_audit(
            pane_id, lambda row: row["layer"] == "hook" and row.get("builtin") == "write" and row["decision"] == "deny"
        )

        pushed = run.result_containing("git push origin main", model, start)
        assert "Polter" in pushed, pushed
        gateway.wait_for_audit(
            pane_id, lambda row: row.get("target") == "ls && git push origin main" and row["decision"] != "allow"
        )

        listed = run.result_containing("visible.txt", model, start)
        assert "Polter" not in listed, listed
        gateway.wait_for_audit(pane_id, lambda row: row.get("target") == "ls" and row["decision"] == "allow")

        # The hook switched off: the CLI's own layer, set from the role, refuses the write (or never offers the tool).
        unhooked = run.ask(run.pane("researcher", token, model), "please write the file", model, hooks=False)
        assert not (project / WRITTEN).exists(), f"the CLI's own layer let the write through: {unhooked}"

        coder_id, coder_token = gateway.register("coder")
        written = run.ask(run.pane("coder", coder_token, model), "please write the file", model)
        assert (project / WRITTEN).exists(), f"the coder's write should have gone through: {written}"
        gateway.wait_for_audit(coder_id, lambda row: row.get("builtin") == "write" and row["decision"] == "allow")
