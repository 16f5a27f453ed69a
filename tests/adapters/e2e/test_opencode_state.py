"""opencode's TUI in a real PTY pane, its state read from the screen by the adapter as a turn goes on.

The fake model holds its first answer (working), then asks for a shell command that opencode's permission
dialog stops (waiting), runs it slowly (working), and asks the human a question with opencode's question
tool (waiting). Set ``POLTER_RECORD_SCREENS`` to a folder to save each screen seen here (at 120×40 and 60×30):
that is how ``tests/adapters/screens/opencode-1.18.33/`` was recorded.
"""

from __future__ import annotations

import asyncio
import json
import os
import threading
from pathlib import Path

import pytest
from support.fake_models import FakeModelServer, Rule

from polter.adapters import AgentState, PaneToPrepare, TestMode

from .agent_pane import Agent
from .conftest import real_cli, seed_opencode_plugin_sdk
from .gateway_process import PolterGateway

pytestmark = pytest.mark.e2e

IDLE, WORKING, WAITING = AgentState.IDLE, AgentState.WORKING, AgentState.WAITING
ROLE = {"e2e-any": 'description = "Every server"\n[servers]\ndefault = "allow"\n'}
QUESTION = {"questions": [{"question": "Which colour?", "header": "Colour", "options": [
    {"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}]}]}


@pytest.mark.parametrize(("columns", "lines"), [(120, 40), (60, 30)])
async def test_state_follows_the_turn(columns: int, lines: int, tmp_path: Path, home: Path, project: Path) -> None:
    cli = real_cli("opencode")
    seed_opencode_plugin_sdk(home, project)
    (project / "opencode.json").write_text(json.dumps({"permission": {"bash": "ask"}}))
    held, release = threading.Event(), threading.Event()

    def hold() -> None:  # in the fake model's thread: the answer waits until the test has seen "working"
        held.set()
        release.wait(60)

    rules = [
        Rule(when="take your time", call="bash", arguments={"command": "echo slow", "description": "Echo"}, before_reply=hold),
        Rule(when="run the sleeper", call="bash", arguments={"command": "sleep 3 && echo done", "description": "Sleep"}),
        Rule(when="ask me", call="question", arguments=QUESTION),
    ]
    record = Path(os.environ["POLTER_RECORD_SCREENS"]) / f"{columns}x{lines}" if os.environ.get("POLTER_RECORD_SCREENS") else None

    def seen(agent: Agent, name: str) -> None:
        if record is not None:
            record.mkdir(parents=True, exist_ok=True)
            (record / f"{name}.txt").write_text("\n".join(line.rstrip() for line in agent.screen.display()) + "\n")

    with PolterGateway(tmp_path, ROLE) as gateway, FakeModelServer(rules) as model:
        pane_id, token = gateway.register("e2e-any")
        pane = PaneToPrepare(pane_id=pane_id, gateway_url=gateway.url, servers=("time",), runtime_dir=tmp_path / "runtime",
                    cwd=project, token=token, home=home, test_mode=TestMode(model_base_url=model.url))
        async with Agent(cli.adapter, pane, home=home, path_dirs=[cli.bin_dir], columns=columns, lines=lines) as agent:
            await agent.wait_for("Ask anything", timeout=120)
            await agent.wait_until_quiet(1.0)
            assert cli.adapter.state(agent.screen) == IDLE, agent.text()
            seen(agent, "idle-home")

            await agent.type("take your time please")
            await asyncio.to_thread(held.wait, 60)
            await agent.wait_for_state(WORKING)  # the model has not answered
            seen(agent, "working-model")
            if columns >= 120:  # one esc only arms the interrupt (the wider footer says so)
                agent.press(b"\x1b")
                await agent.wait_for("esc again to interrupt")
                assert cli.adapter.state(agent.screen) == WORKING, agent.text()
                seen(agent, "working-esc-again")
            release.set()

            await agent.wait_for("Permission required")  # the model's bash call, held by opencode's dialog
            assert cli.adapter.state(agent.screen) == WAITING, agent.text()
            seen(agent, "waiting-permission")
            agent.press(b"\r")  # Allow once
            await agent.wait_for("FINAL slow")
            await agent.wait_for_state(IDLE)
            await agent.wait_until_quiet(1.0)
            assert cli.adapter.state(agent.screen) == IDLE, agent.text()
            seen(agent, "idle-session")

            await agent.type("run the sleeper")
            await agent.wait_for("Permission required")
            agent.press(b"\r")
            await agent.wait_for_state(WORKING, timeout=30)  # the command runs for 3 s
            assert "sleep 3" in agent.text(), agent.text()
            seen(agent, "working-tool")
            await agent.wait_for("FINAL done", timeout=30)
            await agent.wait_for_state(IDLE)

            await agent.type("ask me something")
            await agent.wait_for("Which colour?")
            await agent.wait_until_quiet(0.5)
            assert cli.adapter.state(agent.screen) == WAITING, agent.text()
            seen(agent, "waiting-question")
            agent.press(b"\r")  # the first answer
            await agent.wait_for_state(IDLE)
