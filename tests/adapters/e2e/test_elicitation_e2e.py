"""A server's elicitation through the real gateway, for each of the five real CLIs: which of them declare the
``elicitation`` capability in their MCP client's ``initialize`` (as the gateway recorded it for the pane), and
that the question reaches a human either way: the CLI's own answer when it declared the capability (Codex on
a 2025-era session; Claude Code on 2026-07-28, in an input-required round trip), else Polter's window (a
controller following ``/control/events``, as the app does), whose answer the upstream gets.

The upstream is ``support/features_server.py``; its ``elicit`` tool asks the form it is given and answers
what it was told. Each CLI runs non-interactively against the fake model API, which calls that tool.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
import textwrap
from pathlib import Path

import pytest
from support.fake_models import FakeModelServer, Rule
from support.gateway import FEATURES_SERVER
from support.report import report

from polter.adapters import PaneToPrepare, TestMode
from polter.gateway.client import GatewayClient
from polter.gateway.models import ElicitationInfo, ElicitationReply
from polter.gateway.state import read_state

from .agent_pane import run_once
from .conftest import real_cli, seed_opencode_plugin_sdk
from .gateway_process import PolterGateway
from .test_gateway_e2e import CLIS

pytestmark = pytest.mark.e2e

ROLES = {
    "e2e-open": """
        description = "Everything allowed; servers may ask the human"
        [servers]
        default = "allow"
        [tools]
        default = "allow"
        [skills]
        default = "allow"
    """,
}
FEATURES = textwrap.dedent(f"""\
    [servers.features]
    command = {json.dumps(sys.executable)}
    args = [{json.dumps(str(FEATURES_SERVER))}]
    """)
FORM = {"type": "object", "properties": {"name": {"type": "string", "title": "Your name"}}, "required": ["name"]}
DECLARED = {
    "claude-code": ("2026-07-28", ["elicitation", "elicitation.form", "elicitation.url", "roots"]),
    "codex": ("2025-06-18", ["elicitation", "elicitation.form", "elicitation.url"]),
    "gemini-cli": ("2025-06-18", ["roots"]),
    "qwen-code": ("2025-11-25", ["extensions", "roots"]),
    "opencode": ("2025-11-25", ["roots"]),
}
"""What each pinned CLI's MCP client declared to the gateway (protocol version, capabilities), as recorded here."""
ASKED_IN_THE_CLI = {"claude-code", "codex"}
"""The CLIs the gateway hands a server's elicitation to: those that declared it (on a 2025-era session as a
request of its own; on 2026-07-28, Claude Code's, as the call's ``InputRequiredResult``)."""


@pytest.mark.parametrize("name", ["claude-code", "codex", "gemini-cli", "qwen-code", "opencode"])
async def test_a_servers_question_reaches_the_human_through_the_cli_or_polters_window(
    name: str, tmp_path: Path, home: Path, project: Path
) -> None:
    cli, naming = real_cli(name), CLIS[name]
    if name == "opencode":
        seed_opencode_plugin_sdk(home, project)
    with PolterGateway(tmp_path, ROLES, servers=FEATURES) as gateway:
        pane_id, token = gateway.register("e2e-open")
        async with GatewayClient(gateway.url, read_state(gateway.state_dir).admin_token) as admin:
            shown: list[ElicitationInfo] = []

            async def window() -> None:  # Polter's window: shows the form, the human fills it in
                async for event in admin.events():
                    if event.type == "elicitation":
                        form = ElicitationInfo.model_validate(event.data)
                        shown.append(form)
                        reply = ElicitationReply(action="accept", content={"name": "Ada from the window"})
                        await admin.answer_elicitation(form.id, reply)

            follower = asyncio.create_task(window())
            try:
                deadline = asyncio.get_running_loop().time() + 30
                while (await admin.status()).controllers < 1:
                    assert asyncio.get_running_loop().time() < deadline, "the window never followed the events"
                rule = Rule(when="ask for my name", call=naming.tool("features", "elicit"),
                            arguments={"message": "What is your name?", "schema": FORM}, times=1)
                with FakeModelServer([rule]) as model:
                    pane = PaneToPrepare(
                        pane_id="e2e", gateway_url=gateway.url, servers=("features",),
                        runtime_dir=tmp_path / "runtime", cwd=project, token=token, home=home,
                        test_mode=TestMode(model_base_url=model.url), skill_decision=lambda skill: "allow",
                    )
                    _prepared, result = await asyncio.to_thread(
                        run_once, cli.adapter, pane, [*naming.after, "please ask for my name"],
                        before_args=naming.before, home=home, path_dirs=[cli.bin_dir],
                    )
                    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
                    answered = model.wait_for(lambda request: request.tool_result is not None
                                              and '"action"' in request.tool_result, timeout=60)
                info = await admin.pane(pane_id)
            finally:
                follower.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await follower
    clients = [client for client in info.clients if client.endpoint == "features"]
    assert clients, f"{name} opened no session on the features endpoint: {info.clients}"
    declared = sorted({capability for client in clients for capability in client.capabilities})
    protocol = clients[0].protocol
    report(f"{cli.adapter.display_name} {cli.version}: MCP client {clients[0].name} {clients[0].version}, protocol "
           f"{protocol}, declared {', '.join(declared) or 'nothing'}")
    assert (protocol, declared) == DECLARED[name], f"{name} now declares {protocol} {declared}"
    rows = [row for row in gateway.audit(pane_id) if row["layer"] == "elicitation"]
    text = answered.tool_result or ""
    said, _end = json.JSONDecoder().raw_decode(text, text.index('{"action"'))
    if name in ASKED_IN_THE_CLI:  # its own answer (non-interactive, with nobody at its prompt)
        assert shown == [] and rows and "passed to the pane's CLI" in rows[-1]["reason"], rows
        assert said["action"] in ("accept", "decline", "cancel") and rows[-1]["reason"].endswith(said["action"])
        report(f"{cli.adapter.display_name}: the server's question went to the CLI, which answered {said['action']}")
    else:
        assert [form.message for form in shown] == ["What is your name?"] and shown[0].pane == pane_id
        assert said == {"action": "accept", "content": {"name": "Ada from the window"}}, said
        assert rows and "answered in Polter's window" in rows[-1]["reason"], rows
