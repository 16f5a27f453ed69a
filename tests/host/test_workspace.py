"""The workspace against the real gateway process: registration, runtime dirs, restarts, asks, roles.

Most tests share one workspace (a gateway and its upstream take seconds to start on a busy machine);
each opens its own panes. Tests that kill or break the gateway start their own.
"""

from __future__ import annotations

import asyncio
import os
import signal
import stat
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
import tomli_w
from support.gateway import fixture_server, held_fixture_server, time_server, write_roles
from support.processes import process_running
from support.waiting import wait_until

from polter.adapters import Liveness, PaneFile, Skill
from polter.adapters.plugins import find_adapter
from polter.errors import AuthError, GatewayError
from polter.gateway.client import pane_client
from polter.paths import ENV_GATEWAY_URL, ENV_TOKEN
from polter.wire import messages as wire
from polter.host.agents import Agent
from polter.launch.config import PaneSetup
from polter.launch.planning import PanePlan
from polter.host.workspace import AgentChanged, Workspace
from polter.window.notices import servers_report


class Inbox:
    """Stands in for the screen: collects what the workspace posts."""

    def __init__(self) -> None:
        self.messages: list[Any] = []

    def post_message(self, message: Any) -> bool:
        self.messages.append(message)
        return True

    def of(self, kind: type) -> list[Any]:
        return [message for message in self.messages if isinstance(message, kind)]

    def gateway(self, *, up: bool) -> list[wire.GatewayChanged]:
        return [message for message in self.of(wire.GatewayChanged) if message.up == up]


SHELL = find_adapter("shell")


class ColdShell(type(SHELL)):  # type: ignore[misc]
    """A shell that pretends its tools change only on restart (as Codex does)."""

    info = SHELL.info.model_copy(update={"name": "cold-shell", "mcp_liveness": Liveness.COLD})


class AgentShell(type(SHELL)):  # type: ignore[misc]
    """A shell that stands for an AI agent CLI."""

    info = SHELL.info.model_copy(update={"name": "agent-shell", "agent": True})


class SkilledShell(type(SHELL)):  # type: ignore[misc]
    """A shell with a skill, whose skill list (like Claude Code's) changes only on restart; tools are live."""

    info = SHELL.info.model_copy(update={"name": "skilled-shell", "skills_liveness": Liveness.COLD})

    def skills(self, cwd: Path, home: Path | None = None) -> list[Skill]:
        return [Skill(name="write-docs", scope="user")]


def plan(role: str, adapter: Any = SHELL, **setup: Any) -> PanePlan:
    return PanePlan(PaneSetup(role=role, **setup), adapter, "chosen by the test")


pytestmark = pytest.mark.asyncio(loop_scope="module")
Shared = tuple[Workspace, "Inbox"]


@asynccontextmanager
async def workspace(tmp_path: Path, **servers: Any) -> AsyncIterator[tuple[Workspace, Inbox]]:
    inbox = Inbox()
    space = Workspace(
        servers=servers or {"fixture": fixture_server()},
        roles_dirs=[write_roles(tmp_path / "roles")],
        state_dir=tmp_path / "state",
    )
    space.subscribe(inbox.post_message)
    await space.start()
    try:
        yield space, inbox
    finally:
        await space.aclose()


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[tuple[Workspace, Inbox]]:
    root = tmp_path_factory.mktemp("workspace")
    with pytest.MonkeyPatch.context() as env:
        env.setenv("POLTER_CONFIG_DIR", str(root / "config"))
        env.setenv("POLTER_STATE_DIR", str(root / "state"))
        async with workspace(root) as started:
            yield started


async def whoami(agent: Agent, url: str) -> Any:
    async with pane_client("polter", url=url, token=agent.token) as client:
        return (await client.call_tool("whoami", {})).structured_content


async def test_a_pane_is_registered_with_its_own_token_and_a_private_runtime_dir(
    shared: Shared, tmp_path: Path
) -> None:
    space, inbox = shared
    assert inbox.gateway(up=True)[0].restarted is False
    agent, spec = await space.open(plan("reader", title="notes", cwd=tmp_path))
    assert spec.env[ENV_TOKEN] == agent.token and spec.env[ENV_GATEWAY_URL] == space.url
    assert spec.cwd == tmp_path.resolve() and spec.title == "notes"
    assert stat.S_IMODE(agent.runtime.path.stat().st_mode) == 0o700
    assert agent.runtime.path.parent == space.run_dir
    info = {pane.id: pane for pane in await space.client.panes()}[agent.id]
    assert (info.role, info.title) == ("reader", "notes")
    assert (await whoami(agent, space.url))["role"] == "reader"

    await space.close(agent)
    assert not agent.runtime.path.exists()
    assert agent.id not in {pane.id for pane in await space.client.panes()}
    with pytest.raises(AuthError):
        await whoami(agent, space.url)


async def test_a_command_runs_instead_of_the_cli_with_the_panes_environment(shared: Shared, tmp_path: Path) -> None:
    space, _inbox = shared
    _agent, spec = await space.open(plan("open", command=["python3", "-c", "print(1)"]))
    assert spec.argv[-3:] == ("python3", "-c", "print(1)") and ENV_TOKEN in spec.env
    assert spec.argv[0].endswith("bwrap"), "a command agent runs in the pane's sandbox"


async def test_a_shell_pane_opens_while_a_server_is_still_starting_and_an_agent_pane_once_it_runs(
    tmp_path: Path,
) -> None:
    """A plain program's pane does not wait for the servers: its launch needs the role's decisions on skills and
    builtins alone, and its call to a server still starting waits for it. An agent CLI's pane starts once the
    servers run, as the CLI lists their tools when it starts."""
    go = tmp_path / "go"
    async with workspace(tmp_path, fixture=held_fixture_server(go)) as (space, _inbox):
        shell, _spec = await asyncio.wait_for(space.open(plan("open")), 10)  # not the upstream's wait of 20 s
        [fixture] = (await space.client.status()).servers
        assert fixture.state == "starting"

        async def noted() -> str:
            async with pane_client("fixture", url=space.url, token=shell.token) as client:
                return (await client.call_tool("write_note", {"text": "early"})).content[0].text

        opening = asyncio.create_task(space.open(plan("open", AgentShell())))
        call = asyncio.create_task(noted())
        done, _ = await asyncio.wait({opening, call}, timeout=1.0)  # long enough for either, had it not waited
        assert not done, "the agent's pane and the shell's call wait for the server still starting"
        go.touch()
        assert await call == "noted: early"
        agent, _spec = await opening
        assert agent.adapter.info.agent


async def test_a_dead_gateway_comes_back_on_the_same_port_and_knows_the_panes_again(tmp_path: Path) -> None:
    async with workspace(tmp_path) as (space, inbox):
        agent, _spec = await space.open(plan("reader"))
        await space.set_role(agent, "open")  # switched since it opened: the gateway must get it back as is
        url = space.url
        gateway = space.supervisor.current
        assert gateway is not None
        os.kill(gateway.process.pid, signal.SIGKILL)
        await wait_until(lambda: inbox.gateway(up=False), message="the workspace to notice")
        assert "SIGKILL" in inbox.gateway(up=False)[0].text
        await wait_until(
            lambda: any(up.restarted for up in inbox.gateway(up=True)),
            timeout=60,
            message="the gateway to come back",
        )
        assert space.url == url and space.supervisor.starts == 2
        assert (await whoami(agent, url))["pane"] == agent.id  # the same token works with the new gateway
        assert (await whoami(agent, url))["role"] == "open"
        assert gateway.process.pid != space.supervisor.current.process.pid
        assert agent.restart_needed is None


async def test_an_ask_arrives_and_the_answer_goes_to_the_gateway(shared: Shared, tmp_path: Path) -> None:
    space, inbox = shared
    agent, _spec = await space.open(plan("asker", title="writer"))

    async def write(text: str) -> Any:
        async with pane_client("fixture", url=space.url, token=agent.token) as client:
            return await client.call_tool("write_note", {"text": text})

    call = asyncio.create_task(write("hello"))

    def asks() -> list[Any]:
        return [message for message in inbox.of(wire.AskEvent) if message.ask.pane == agent.id]

    await wait_until(asks, message="the ask")
    request = asks()[0]
    assert (request.ask.pane, request.ask.pane_title, request.ask.name) == (agent.id, "writer", "write_note")
    assert request.ask.arguments == {"text": "hello"} and request.ask.id in space.asks.pending
    space.answer(request.ask.id, "allow_once")
    result = await call
    assert not result.is_error
    await wait_until(lambda: request.ask.id not in space.asks.pending, message="the ask to close")
    assert [closed.ask.answer for closed in inbox.of(wire.AskClosedEvent) if closed.ask.id == request.ask.id] == [
        "allow_once"
    ]

    second = asyncio.create_task(write("again"))
    await wait_until(lambda: len(asks()) == 2, message="the second ask")
    other = asks()[1]
    await space.client.answer(other.ask.id, "deny")  # answered elsewhere (polter asks answer)
    assert (await second).is_error
    await wait_until(lambda: other.ask.id not in space.asks.pending, message="the ask to be over here too")
    assert [closed.ask.answered_by for closed in inbox.of(wire.AskClosedEvent) if closed.ask.id == other.ask.id]
    rows = [row for row in space.audit_rows if row.name == "write_note" and row.pane == agent.id]
    assert [row.decision for row in rows if row.layer == "ask"] == ["allow_once", "deny"], rows
    assert inbox.of(wire.AuditEvent)


async def test_a_role_switch_is_live_for_a_hot_cli_and_needs_a_restart_for_a_cold_one(
    shared: Shared, tmp_path: Path
) -> None:
    space, inbox = shared
    hot, _ = await space.open(plan("open"))
    cold, _ = await space.open(plan("open", adapter=ColdShell()))
    await space.set_role(hot, "reader")
    await space.set_role(cold, "reader")
    assert hot.role == cold.role == "reader"
    assert hot.restart_needed is None
    assert cold.restart_needed is not None and "restart to apply" in cold.restart_needed
    assert any(message.agent is cold for message in inbox.of(AgentChanged))
    await space.relaunch(cold)
    assert cold.restart_needed is None and cold.launched_role == "reader"
    await space.set_role(cold, "open")
    await space.set_role(cold, "reader")  # back to what it runs: nothing to apply
    assert cold.restart_needed is None


async def test_a_cli_with_a_cold_skill_list_needs_a_restart_only_when_the_hidden_skills_change(
    shared: Shared, tmp_path: Path
) -> None:
    space, _inbox = shared
    agent, _ = await space.open(plan("open", adapter=SkilledShell()))
    assert agent.skills == ["write-docs"] and agent.hidden_at_launch == frozenset()
    await space.set_role(agent, "asker")  # tools change, live; the same skills stay visible
    assert agent.restart_needed is None
    await space.set_role(agent, "reader")  # reader denies *write*: the CLI still shows the skill
    assert agent.hidden_now == {"write-docs"} and "skills" in (agent.restart_needed or "")
    await space.relaunch(agent)
    assert agent.hidden_at_launch == {"write-docs"} and agent.restart_needed is None


class LayeredShell(type(SHELL)):  # type: ignore[misc]
    """A shell that, like Codex or Claude Code, sets a permission layer of its own from the role's [builtins]."""

    info = SHELL.info.model_copy(update={"name": "layered-shell"})

    def prepare(self, pane: Any) -> Any:
        prepared = super().prepare(pane)
        layer = "read-only" if pane.builtins is not None and pane.builtins.writes_nothing() else "writable"
        return prepared.model_copy(update={"files": {**prepared.files, "layer.txt": PaneFile(text=layer)}})


async def test_a_role_switch_that_changes_the_clis_own_layer_needs_a_restart(tmp_path: Path) -> None:
    roles = write_roles(tmp_path / "roles")
    (roles / "lookout.toml").write_text('description = "reads only"\n[builtins]\ndefault = "allow"\ndeny = ["write"]\n')
    (roles / "scribe.toml").write_text('description = "writes"\n[builtins]\ndefault = "allow"\n')
    (roles / "talker.toml").write_text('description = "writes too"\n[builtins]\ndefault = "allow"\nask = ["web"]\n')
    space = Workspace(servers={"fixture": fixture_server()}, roles_dirs=[roles], state_dir=tmp_path / "state")
    await space.start()
    try:
        agent, _spec = await space.open(plan("lookout", adapter=LayeredShell()))
        assert (agent.runtime.path / "layer.txt").read_text() == "read-only"
        await space.set_role(agent, "scribe")  # the CLI would refuse writes the role now allows
        assert agent.restart_needed is not None and "permission rules" in agent.restart_needed
        await space.relaunch(agent)
        assert agent.restart_needed is None and (agent.runtime.path / "layer.txt").read_text() == "writable"
        await space.set_role(agent, "talker")  # other [builtins], the same layer: nothing to restart for
        assert agent.restart_needed is None
    finally:
        await space.aclose()


async def test_phases_and_typed_lines(shared: Shared, tmp_path: Path) -> None:
    space, _inbox = shared
    agent, _ = await space.open(plan("phased"))
    assert agent.phase == "research"
    await space.set_phase(agent, "action")
    assert agent.phase == "action"
    space.lines.submit(agent, "look at the logs")
    await wait_until(lambda: agent.phase == "research", message="a typed line to start a new research phase")


async def test_the_users_servers_file_is_followed_while_the_app_runs(tmp_path: Path) -> None:
    """The gateway serves the user's servers file plus the app's own servers: a server added to the file
    while the app runs gets its endpoint, a broken file is reported (file:line: field) and changes
    nothing, a removed one goes, and the app's own server stays throughout."""
    user_file = tmp_path / "servers.toml"
    fixture = tomli_w.dumps({"servers": {"fixture": fixture_server().model_dump(exclude_defaults=True)}})
    user_file.write_text(fixture, encoding="utf-8")
    inbox = Inbox()
    space = Workspace(
        servers={"managed": fixture_server()},
        servers_file=user_file,
        state_dir=tmp_path / "state",
        roles_dirs=[write_roles(tmp_path / "roles")],
    )
    space.subscribe(inbox.post_message)
    await space.start()
    try:
        assert sorted(space.server_names) == ["fixture", "managed"]
        agent, _spec = await space.open(plan("open"))

        user_file.write_text(
            fixture + '\n[servers.extra]\ncommand = "%s"\nargs = ["%s"]\n' % (sys.executable, fixture_server().args[0]),
            encoding="utf-8",
        )
        await wait_until(lambda: "extra" in space.server_names, message="extra added while the app runs")
        added = inbox.of(wire.ServersEvent)[-1].report
        assert added.added == ["extra"] and "Restart a pane" in servers_report(added)
        async with pane_client("extra", url=space.url, token=agent.token) as client:
            assert (await client.list_tools()).tools

        user_file.write_text(fixture + '\n[servers.extra]\ncommand = ""\n', encoding="utf-8")
        await wait_until(
            lambda: any(m.report.problems for m in inbox.of(wire.ServersEvent)),
            message="the broken file to be reported",
        )
        broken = inbox.of(wire.ServersEvent)[-1].report
        line = len(fixture.splitlines()) + 3
        assert broken.problems[0].startswith(f"{user_file}:{line}: servers.extra.command: ")
        assert "keep running" in servers_report(broken)
        assert sorted(server.name for server in (await space.client.status()).servers) == [
            "extra",
            "fixture",
            "managed",
        ]

        user_file.write_text(fixture, encoding="utf-8")
        await wait_until(lambda: "extra" not in space.server_names, message="extra removed while the app runs")
        assert sorted(space.server_names) == ["fixture", "managed"]
    finally:
        await space.aclose()


async def test_a_gateway_that_cannot_start_says_why(tmp_path: Path) -> None:
    broken = tmp_path / "servers-bad"
    space = Workspace(
        servers={"fixture": fixture_server()}, state_dir=tmp_path / "state", roles_dirs=[broken]
    )  # a roles dir is fine even when missing; break the servers instead
    space.supervisor.servers_file = tmp_path / "missing.toml"
    with pytest.raises(GatewayError, match="missing.toml"):
        await space.supervisor.start()


async def test_the_egress_proxy_starts_beside_the_gateway_not_after_it(tmp_path: Path) -> None:
    """Neither needs the other to start, so the panes' network is up while the gateway is still on its way (a new
    session's first panes open a few tenths of a second sooner)."""
    space = Workspace(servers={}, roles_dirs=[write_roles(tmp_path / "roles")], state_dir=tmp_path / "state")
    held, start = asyncio.Event(), space.supervisor.start

    async def held_start() -> None:
        await held.wait()
        await start()

    space.supervisor.start = held_start  # type: ignore[method-assign]
    starting = asyncio.create_task(space.start())
    try:
        await wait_until(lambda: space.egress.pid is not None, timeout=30, message="the egress proxy, the gateway held")
        assert space.url is None
        held.set()
        await starting
        assert space.url is not None and space.egress.pid is not None
    finally:
        held.set()
        await asyncio.gather(starting, return_exceptions=True)
        await space.aclose()


async def test_a_gateway_that_cannot_start_leaves_no_egress_proxy_behind(tmp_path: Path) -> None:
    space = Workspace(servers={}, roles_dirs=[write_roles(tmp_path / "roles")], state_dir=tmp_path / "state")
    space.supervisor.servers_file = tmp_path / "missing.toml"
    with pytest.raises(GatewayError, match="missing.toml"):
        await space.start()
    egress = space.egress.pid
    assert egress is not None, "the proxy started beside the gateway"
    await space.aclose()  # what the session host does with a session that could not start
    await wait_until(lambda: not process_running(egress), timeout=30, message="the egress proxy to stop")


async def test_stale_run_dirs_of_dead_apps_are_removed(tmp_path: Path) -> None:
    stale = tmp_path / "state" / "run" / "999999999"
    stale.mkdir(parents=True)
    async with workspace(tmp_path, time=time_server()) as (space, _inbox):
        assert not stale.exists() and space.run_dir.is_dir()
        assert "time" in space.server_names


async def test_a_gateway_never_outlives_its_app_even_when_the_app_is_killed(tmp_path: Path) -> None:
    script = f"""
import asyncio, sys
from pathlib import Path
from polter.wire import messages as wire
from polter.host.workspace import AgentChanged, Workspace
from polter.window.notices import servers_report

async def main():
    space = Workspace(state_dir=Path({str(tmp_path / "state")!r}))
    await space.start()
    print(space.supervisor.current.process.pid, space.egress.pid, flush=True)
    await asyncio.Event().wait()

asyncio.run(main())
"""
    app = await asyncio.create_subprocess_exec(sys.executable, "-c", script, stdout=asyncio.subprocess.PIPE)
    assert app.stdout is not None
    gateway_pid, egress_pid = map(int, (await asyncio.wait_for(app.stdout.readline(), 60)).split())
    assert process_running(gateway_pid) and process_running(egress_pid)
    app.kill()  # no cleanup runs in the app
    await app.wait()
    await wait_until(lambda: not process_running(gateway_pid), timeout=30, message="the orphaned gateway to stop")
    await wait_until(lambda: not process_running(egress_pid), timeout=30, message="the orphaned egress proxy to stop")


async def test_a_restored_pane_continues_its_clis_conversation_and_a_new_one_does_not(
    shared: Shared, tmp_path: Path
) -> None:
    space, _inbox = shared
    opencode = find_adapter("opencode")  # its adapter continues a conversation without looking for one first
    restored, spec = await space.open(plan("open", adapter=opencode, cwd=tmp_path, resume=True))
    assert spec.argv[-1] == "--continue"
    _fresh, spec = await space.open(plan("open", adapter=opencode, cwd=tmp_path))
    assert "--continue" not in spec.argv
    assert "--continue" not in (await space.relaunch(restored)).argv  # a restart starts the CLI afresh


@pytest.mark.e2e
async def test_with_tshock_url_set_the_terraria_backend_is_managed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``polter`` with ``TSHOCK_URL`` (and a token) in its environment: the bundled Terraria server is one
    of the gateway's upstreams, pointed at that TShock (here the simulator), and a pane can use it."""
    from polter.backends.terraria.simulator import SimulatorServer, World
    from polter.cli import build_parser
    from polter.cli.app import plan

    world = World(seed=11)
    async with SimulatorServer(world) as tshock:
        monkeypatch.setenv("TSHOCK_URL", tshock.url)
        monkeypatch.setenv("TSHOCK_TOKEN", tshock.token)
        launch = plan(build_parser().parse_args(["--pane", "shell:terraria-researcher"]))
        space = Workspace(servers=launch.servers, state_dir=tmp_path / "state")
        await space.start()
        try:
            assert "terraria" in space.server_names
            agent, _spec = await space.open(launch.plans[0])
            async with pane_client("terraria", url=space.url, token=agent.token) as client:
                result = await client.call_tool("world_info", {})
                refused = await client.call_tool("world_hardmode", {"enabled": True})
            assert not result.is_error and result.structured_content["name"] == world.world_name
            assert refused.is_error  # the researcher role only reads
        finally:
            await space.aclose()
