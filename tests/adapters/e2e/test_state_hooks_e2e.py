"""The real Claude Code in a session reports its agent's state through its own hooks, and the session tells the
human: a turn that ends (Stop: ``done``, with what it said last) and a permission request (PermissionRequest:
``waiting``, naming the tool). No window is attached, so the host itself runs ``notify_command``.

Claude Code runs against the fake model API (scripted to call Bash) behind the real gateway, in a pane of a
real session host; its state hooks post to the gateway's ``/hook/claude-code/state``, the gateway passes the
report on to the host, which prefers it to reading the screen while it is fresh.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from support.fake_models import FakeModelServer, Rule
from support.gateway import write_roles
from support.session import hosted
from support.waiting import wait_until

from polter.adapters import TestMode
from polter.adapters.plugins import discover
from polter.paths import config_dir
from polter.protocol import AgentState
from polter.launch.config import NotifySettings, PaneSetup
from polter.host.session_host import SessionHost
from polter.launch.planning import Launch, PanePlan
from polter.host.panes import HostPane

from .agent_pane import OFFLINE
from .conftest import real_cli

pytestmark = pytest.mark.e2e

ROLE = {
    "attentive": """
        description = "Everything allowed, the CLI's own tools too"
        [servers]
        default = "allow"
        [tools]
        default = "allow"
        [skills]
        default = "allow"
        [builtins]
        default = "allow"
    """
}

NOTIFIED = """\
import json, os, sys
with open(sys.argv[1], "a") as log:
    log.write(json.dumps({"args": sys.argv[2:], "env": {k: v for k, v in os.environ.items() if k.startswith("POLTER_")}}) + "\\n")
print("notified", sys.argv[2:])
"""


def notifications(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def screen_of(pane: HostPane) -> str:
    screen = pane.terminal.screen
    return "\n".join(line.rstrip() for line in screen.display()) if screen is not None else ""


async def type_line(pane: HostPane, text: str) -> None:
    pane.terminal.send(text.encode())
    await wait_until(lambda: text[-20:] in screen_of(pane), timeout=30, message=lambda: screen_of(pane))
    pane.terminal.send(b"\r")


@pytest.fixture
def offline(home: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh home (the session's programs inherit the test's environment) with no way out to the internet."""
    for name, value in OFFLINE.items():
        monkeypatch.setenv(name, value)
    return home


async def test_claude_code_reports_a_finished_turn_and_a_permission_request_through_its_hooks(
    tmp_path: Path, offline: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cli = real_cli("claude-code")
    monkeypatch.setenv("PATH", f"{cli.bin_dir}:{Path(sys.executable).parent}:/usr/bin:/bin")
    (project / ".claude").mkdir()
    # Claude Code asks before `touch` whatever the hook says (an ask rule beats a hook's allow): its own dialog.
    (project / ".claude" / "settings.json").write_text(json.dumps({"permissions": {"ask": ["Bash(touch:*)"]}}))
    write_roles(config_dir() / "roles", ROLE)
    log = tmp_path / "notified.jsonl"
    script = tmp_path / "notified.py"
    script.write_text(NOTIFIED)
    rules = [
        Rule(when="take a nap", call="Bash", arguments={"command": "sleep 2", "description": "nap"}),
        Rule(when="make the file", call="Bash", arguments={"command": "touch made.txt", "description": "make"}),
    ]
    with FakeModelServer(rules) as model:
        plan = PanePlan(PaneSetup(adapter="claude-code", role="attentive", cwd=project, title="claude"), cli.adapter,
                        "chosen by the test")  # fmt: skip
        launch = Launch(
            [plan],
            discover(entry_points=False),
            test_mode=TestMode(model_base_url=model.url),
            notify=NotifySettings(command=[sys.executable, str(script), str(log)], desktop=False),
        )
        async with hosted(launch=launch) as host:
            await wait_until(lambda: host.ready, timeout=60, message="the session's pane")
            [pane] = host.panes
            pane.resize(120, 40)  # the size a window gave it before it detached: the CLI starts
            assert not [window for window in host.windows if window.attached]
            await wait_until(lambda: "? for shortcuts" in screen_of(pane), timeout=120, message=lambda: screen_of(pane))

            # A turn that works for a while (Bash sleeps 2 s), then ends: Stop says so, with its last words.
            await type_line(pane, "take a nap")
            await wait_until(lambda: pane.reading.source == "cli" and pane.reading.event == "Stop", timeout=90,
                             message=lambda: f"a Stop report, not {pane.reading}\n{screen_of(pane)}")  # fmt: skip
            assert pane.reading.state is AgentState.IDLE and "FINAL" in pane.reading.why
            await wait_until(lambda: [n["args"][3] for n in notifications(log)] == ["done"], timeout=30,
                             message=lambda: f"one 'done' notification, not {notifications(log)}")  # fmt: skip
            [done] = notifications(log)
            assert done["args"][:4] == ["1", "claude", "attentive", "done"] and "FINAL" in done["args"][4]
            assert done["env"]["POLTER_EVENT"] == "done" and done["env"]["POLTER_PANE_TITLE"] == "claude"
            assert done["env"]["POLTER_ADAPTER"] == "claude-code" and done["env"]["POLTER_EXCERPT"] == done["args"][4]
            assert pane.state().agent is not None and pane.state().agent.state_source == "cli"

            # Claude Code's own permission dialog: PermissionRequest says it waits, naming the tool.
            await type_line(pane, "make the file")
            await wait_until(lambda: pane.reading.event == "PermissionRequest", timeout=90,
                             message=lambda: f"a PermissionRequest report, not {pane.reading}\n{screen_of(pane)}")  # fmt: skip
            assert pane.reading.state is AgentState.WAITING and pane.reading.source == "cli"
            await wait_until(lambda: len(notifications(log)) == 2, timeout=30, message=lambda: str(notifications(log)))
            waiting = notifications(log)[1]
            assert waiting["args"][:4] == ["1", "claude", "attentive", "waiting"]
            assert waiting["args"][4] == "Claude Code asks permission to use Bash"
            assert pane.state().agent is not None and pane.state().agent.waiting_since is not None
            await wait_until(lambda: "Do you want to" in screen_of(pane), timeout=30, message=lambda: screen_of(pane))

            pane.terminal.send(b"\r")  # yes: the answer makes the report stale, and the turn goes on to its end
            await wait_until(lambda: (project / "made.txt").exists(), timeout=60, message=lambda: screen_of(pane))
            await wait_until(lambda: [n["args"][3] for n in notifications(log)] == ["done", "waiting", "done"],
                             timeout=60, message=lambda: str(notifications(log)))  # fmt: skip
            assert pane.state().agent is not None and pane.state().agent.waiting_since is None
            assert_no_veto(host)


def assert_no_veto(host: SessionHost) -> None:
    """Every call the model made was decided by the veto hook and allowed (the state hooks decided nothing)."""
    rows = [row for row in host.workspace.audit_rows if row.layer == "hook"]
    assert rows and all(row.decision == "allow" for row in rows), rows
