"""The shell adapter in a real PTY pane: `polter tools` and `polter call` typed by hand reach the real
gateway as this pane, with its role."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from polter.adapters import PaneToPrepare
from polter.adapters.plugins import discover

from .agent_pane import Agent
from .gateway_process import PolterGateway
from .test_gateway_e2e import ROLES

pytestmark = pytest.mark.e2e


async def test_polter_tools_and_call_work_by_hand_in_a_shell_pane(tmp_path: Path, home: Path, project: Path) -> None:
    shell = type(discover(entry_points=False).get("shell"))(executable="/bin/bash")
    with PolterGateway(tmp_path, ROLES) as gateway:
        pane_id, token = gateway.register("e2e-reader")
        pane = PaneToPrepare(pane_id="sh", gateway_url=gateway.url, servers=("time", "everything"),
                    runtime_dir=tmp_path / "runtime", cwd=project, token=token, home=home)
        async with Agent(shell, pane, home=home, path_dirs=[Path(sys.executable).parent]) as agent:
            await agent.type("PS1='$ '")  # the test's folder made a prompt of 90 columns: the typed lines wrapped
            await agent.type("polter tools | grep everything/echo")  # piped, a row is one line (its reason unwrapped)
            await agent.wait_for("The role e2e-reader denies everything/echo", timeout=60)
            await agent.type("polter call everything/echo '{\"message\": \"by hand\"}'; echo exit=$?")
            screen = await agent.wait_for("exit=1", timeout=60)
            assert "Polter refused everything/echo" in screen
            await agent.type("polter call time/get_current_time '{\"timezone\": \"UTC\"}'; echo exit=$?")
            screen = await agent.wait_for("exit=0", timeout=60)
            assert '"timezone": "UTC"' in screen
        calls = [(row["server"], row["name"], row["decision"]) for row in gateway.audit(pane_id)
                 if row["layer"] == "call" and row["server"] != "polter"]
        assert calls == [("everything", "echo", "deny"), ("time", "get_current_time", "allow")]
