"""The app as its users drive it, against the real gateway process: headers, typed lines, the palette,
asks, the audit, capabilities and help screens, quitting and restoring."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from pathlib import Path
from typing import Any

from support.dialogs import confirm_shown
from support.gateway import fixture_server
from support.privates import notification_messages
from support.waiting import wait_until
from support.workspace_app import (
    agent_of,
    badges,
    palette,
    panes,
    run_in,
    screen,
    session_pane,
    shell_plans,
    workspace_app,
    workspace_of,
)

from polter.adapters import Liveness
from polter.adapters.plugins import discover
from polter.gateway.client import pane_client
from polter.paths import bundled_dir, config_dir
from polter.launch.config import load_session
from polter.cli.app import plan
from polter.window.ask_screen import AskScreen
from polter.window.confirm import ConfirmScreen
from polter.window.audit_screen import AuditScreen
from polter.window.capabilities_screen import CapabilitiesScreen
from polter.window.help_screen import HelpScreen
from polter.window.session_screen import SessionScreen

SHELL = discover(entry_points=False).get("shell")


class ColdShell(type(SHELL)):  # type: ignore[misc]
    """A shell that says its CLI applies role changes only on restart and can resume (as Codex does);
    it records whether each launch was asked to continue the conversation."""

    info = SHELL.info.model_copy(
        update={"name": "cold-shell", "display_name": "Cold shell", "mcp_liveness": Liveness.COLD, "resume": True}
    )

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.resumes: list[bool] = []

    def prepare(self, pane: Any) -> Any:
        self.resumes.append(pane.resume)
        return super().prepare(pane)


async def gateway_pane(app: Any, index: int) -> Any:
    pane_id = screen(app).grid.panes[index].remote.id
    return {pane.id: pane for pane in await workspace_of(app).client.panes()}[pane_id]


async def test_panes_are_registered_and_their_headers_say_what_runs_under_which_role(monkeypatch: Any) -> None:
    async with workspace_app(monkeypatch, shell_plans("open", "phased"), servers={"fixture": fixture_server()}) as (
        app,
        pilot,
    ):
        one, two = panes(app)
        assert badges(one)["adapter"] == "Shell" and badges(one)["role"] == "open" and "phase" not in badges(one)
        assert badges(two)["role"] == "phased" and badges(two)["phase"] == "research"
        assert (await gateway_pane(app, 0)).title == "open shell"
        text = await run_in(pilot, one, "polter tools", "fixture/write_note")
        assert 'pane p1 "open shell": role open' in text
        # A line typed in the phased pane starts a new research phase; escalating is a palette command.
        two.terminal.focus()
        await palette(pilot, ("escalate", "Escalate pane 2"))
        await wait_until(lambda: badges(two).get("phase") == "action", message="the action phase in the header")
        await run_in(pilot, two, "echo next request", "next request")
        await wait_until(lambda: badges(two).get("phase") == "research", message="a typed line resets the phase")
        assert (await gateway_pane(app, 1)).last_input_at is not None
        await wait_until(lambda: badges(one).get("state") == "idle", message="the idle shell")


async def test_the_palette_switches_a_role_live_and_a_cold_cli_is_offered_a_restart(monkeypatch: Any) -> None:
    cold_shell = ColdShell()
    plans = [*shell_plans("open"), *shell_plans("open", adapter=cold_shell)]
    async with workspace_app(monkeypatch, plans, servers={"fixture": fixture_server()}) as (app, pilot):
        hot, cold = panes(app)
        hot.terminal.focus()
        await palette(pilot, ("switch the role of pane 1", "Switch the role of pane 1"), ("reader", "reader"))
        await wait_until(lambda: badges(hot)["role"] == "reader", message="the new role in the header")
        assert (await gateway_pane(app, 0)).role == "reader" and "restart" not in badges(hot)
        text = await run_in(pilot, hot, "clear; polter tools", "fixture/write_note")
        assert (
            "role reader" in text
            and decision_of(text, "fixture/write_note") == "deny"
            and decision_of(text, "fixture/read_notes") == "allow"
        )

        await palette(pilot, ("pane 2: role reader", "Pane 2: role reader"))
        await wait_until(lambda: badges(cold).get("restart") == "restart to apply", message="restart to apply")
        assert cold.agent is not None and cold.agent.restart_needed
        assert any(
            "Restart pane 2 from the command palette (^b :)." in message for message in notification_messages(app)
        )

        async def restart(*step: tuple[str, str]) -> None:
            process = session_pane(app, cold).terminal.process
            await palette(pilot, *step)
            await wait_until(lambda: confirm_shown(app), message="the restart confirmation")
            await pilot.press("y")
            await wait_until(
                lambda: session_pane(app, cold).terminal.process is not process and cold.terminal.running,
                message="restart",
            )

        # Applying the role keeps the conversation (the CLI can resume one); a plain restart starts afresh.
        await restart(("restart pane 2 to apply", "restart to apply (its conversation continues)"))
        await wait_until(lambda: "restart" not in badges(cold), message="the badge to go after the restart")
        assert agent_of(app, cold).launched_role == "reader" and cold_shell.resumes == [False, True]
        await restart(("restart pane 2", "Restart pane 2"))
        assert cold_shell.resumes == [False, True, False]


async def test_an_ask_opens_over_the_pane_that_asked_and_is_answered_there(monkeypatch: Any) -> None:
    async with workspace_app(monkeypatch, shell_plans("open", "asker"), servers={"fixture": fixture_server()}) as (
        app,
        pilot,
    ):
        one, two = panes(app)
        one.terminal.focus()
        agent = agent_of(app, two)

        async def write(text: str) -> Any:
            async with pane_client("fixture", url=workspace_of(app).url, token=agent.token) as client:
                return await client.call_tool("write_note", {"text": text})

        first = asyncio.create_task(write("first"))
        await wait_until(lambda: isinstance(app.screen, AskScreen), message="the ask modal")
        modal = app.screen
        assert isinstance(modal, AskScreen) and modal.ask.name == "write_note"
        assert modal.pane_region == two.region  # over the pane that asked, not the focused one
        assert badges(two)["asks"] == "ask" and badges(two)["state"] == "waiting for you"
        assert modal.pane_label.startswith("Pane 2 ")  # the modal names the pane; no toast says it again
        assert not any("asks to use" in message for message in notification_messages(app))
        second = asyncio.create_task(write("second"))
        await wait_until(lambda: len(screen(app).asks.queue) == 2, message="the second ask to queue")
        assert badges(two)["asks"] == "2 asks"

        await wait_until(lambda: modal.armed, message="the quiet period to pass")  # (tested with a fake clock)
        await pilot.press("a")
        assert not (await first).is_error
        await wait_until(
            lambda: isinstance(app.screen, AskScreen) and app.screen is not modal and app.screen.armed,
            message="the next ask",
        )
        await pilot.press("escape")  # later: it stays pending
        await wait_until(lambda: not isinstance(app.screen, AskScreen), message="the modal to go")
        assert len(screen(app).asks.queue) == 1 and badges(two)["asks"] == "ask"
        await palette(pilot, ("pending asks", "Pending asks (1)"))
        await wait_until(lambda: isinstance(app.screen, AskScreen) and app.screen.armed, message="the put-off ask")
        await pilot.press("d")
        assert (await second).is_error
        await wait_until(lambda: "asks" not in badges(two), message="no pending ask in the header")

        third = asyncio.create_task(write("third"))
        await wait_until(lambda: isinstance(app.screen, AskScreen), message="the third ask")
        ask = app.screen.ask  # type: ignore[attr-defined]
        await workspace_of(app).client.answer(ask.id, "allow_once")  # answered elsewhere (polter asks answer)
        await wait_until(lambda: not isinstance(app.screen, AskScreen), message="the modal withdrawn")
        assert not (await third).is_error

        # answered elsewhere while another dialog is over it, with a next ask queued: that dialog stays where it
        # is (Textual's dismiss would have taken it off instead), the answered ask hides, the next shows once
        fourth = asyncio.create_task(write("fourth"))
        await wait_until(lambda: isinstance(app.screen, AskScreen), message="the fourth ask")
        fifth = asyncio.create_task(write("fifth"))
        await wait_until(lambda: len(screen(app).asks.queue) == 2, message="the fifth ask queued")
        answered = app.screen
        assert isinstance(answered, AskScreen)
        over = ConfirmScreen("Run the setup command?")
        app.push_screen(over)
        await workspace_of(app).client.answer(answered.ask.id, "allow_once")
        assert not (await fourth).is_error
        await wait_until(
            lambda: isinstance(app.screen, AskScreen) and app.screen is not answered, message="the fifth ask"
        )
        asks = [each for each in app.screen_stack if isinstance(each, AskScreen)]
        assert over in app.screen_stack and asks == [answered, app.screen] and answered.withdrawn, app.screen_stack
        await workspace_of(app).client.answer(app.screen.ask.id, "deny")  # type: ignore[attr-defined]
        assert (await fifth).is_error
        await wait_until(lambda: app.screen is over, message="the dialog under the fifth ask")
        over.dismiss(False)
        await wait_until(lambda: isinstance(app.screen, SessionScreen), message=lambda: f"{app.screen_stack}")


async def test_the_audit_screen_follows_the_log_and_the_capabilities_and_help_screens(monkeypatch: Any) -> None:
    async with workspace_app(monkeypatch, shell_plans("reader"), servers={"fixture": fixture_server()}) as (app, pilot):
        [pane] = panes(app)
        await run_in(pilot, pane, 'polter call fixture/write_note \'{"text": "x"}\'', "Polter refused")
        await palette(pilot, ("audit log", "Audit log"))
        await wait_until(lambda: isinstance(app.screen, AuditScreen), message="the audit screen")
        audit = app.screen
        assert isinstance(audit, AuditScreen)
        from textual.widgets import DataTable

        table = audit.query_one(DataTable)
        await wait_until(
            lambda: any("write_note" in str(table.get_row_at(i)) for i in range(table.row_count)),
            message="the refused call in the audit",
        )
        before = table.row_count
        agent = agent_of(app, pane)
        async with pane_client("fixture", url=workspace_of(app).url, token=agent.token) as client:
            await client.call_tool("read_notes", {})
        await wait_until(lambda: table.row_count == before + 1, message="the new decision, live")
        from textual.widgets import Select

        audit.query_one("#filter-decision", Select).value = "deny"
        await wait_until(lambda: table.row_count < before + 1, message="the filter to apply")
        assert table.row_count >= 1 and all("deny" in str(table.get_row_at(i)) for i in range(table.row_count))
        await pilot.press("escape")
        await wait_until(lambda: app.screen is screen(app), message="back to the panes")

        pane.terminal.focus()
        await palette(pilot, ("capabilities", "Capabilities of pane 1"))
        await wait_until(
            lambda: isinstance(app.screen, CapabilitiesScreen) and app.screen.capabilities is not None,
            message="the capabilities",
        )
        capabilities = app.screen.capabilities  # type: ignore[attr-defined]
        fixture = next(server for server in capabilities.servers if server.name == "fixture")
        assert {tool.name: tool.decision for tool in fixture.tools}["write_note"] == "deny"
        await pilot.press("escape")
        await pilot.press("ctrl+b", "question_mark")
        await wait_until(lambda: isinstance(app.screen, HelpScreen), message="the help screen")
        await pilot.press("escape")


async def test_the_session_is_saved_as_it_changes_and_restore_reopens_it(monkeypatch: Any, tmp_path: Path) -> None:
    async with workspace_app(monkeypatch, shell_plans("open", "reader")) as (app, pilot):
        one, _two = panes(app)
        await run_in(pilot, one, f"cd {tmp_path}", "$ ")
        await wait_until(
            lambda: session_pane(app, one).terminal.working_directory() == tmp_path,
            message="the shell to change directory",
        )
        await pilot.press("ctrl+b", "space")  # columns: saved at once, as every change is
        await wait_until(lambda: _saved_layout() == "columns", message="the session to be saved")
        await pilot.press("ctrl+b", "q")
        await pilot.press("e")
        await wait_until(lambda: not app.is_running, message="the session to end")
    session = load_session()
    assert session.layout == "columns"
    assert [(pane.adapter, pane.role, pane.title) for pane in session.panes] == [
        ("shell", "open", "open shell"),
        ("shell", "reader", "reader shell"),
    ]
    assert session.panes[0].cwd == tmp_path
    from polter.cli import build_parser

    launch = plan(build_parser().parse_args(["--restore"]))
    assert [plan.setup.role for plan in launch.plans] == ["open", "reader"] and launch.layout == "columns"
    assert all(plan.setup.resume for plan in launch.plans) and launch.plans[0].setup.cwd == tmp_path


def _saved_layout() -> str | None:
    from polter.errors import ConfigError

    try:
        return load_session().layout
    except ConfigError:
        return None


async def test_a_dead_gateway_is_restarted_and_the_panes_keep_working(monkeypatch: Any) -> None:
    async with workspace_app(monkeypatch, shell_plans("open", "asker"), servers={"fixture": fixture_server()}) as (
        app,
        pilot,
    ):
        one, two = panes(app)
        agent = agent_of(app, two)

        async def write() -> Any:
            async with pane_client("fixture", url=workspace_of(app).url, token=agent.token) as client:
                return await client.call_tool("write_note", {"text": "never"})

        waiting = asyncio.create_task(write())  # an ask is open when the gateway dies
        await wait_until(lambda: isinstance(app.screen, AskScreen), message="the ask modal")
        gateway = workspace_of(app).supervisor.current
        assert gateway is not None
        os.kill(gateway.process.pid, signal.SIGKILL)
        await wait_until(
            lambda: any("The gateway is back" in message for message in notification_messages(app)),
            timeout=60,
            message="the gateway to come back",
        )
        assert any("killed by SIGKILL" in message for message in notification_messages(app))
        await wait_until(lambda: not isinstance(app.screen, AskScreen), message="the dead gateway's ask to go")
        await wait_until(lambda: "asks" not in badges(two), message="no pending ask in the header")
        with contextlib.suppress(Exception):
            await asyncio.wait_for(waiting, 30)  # its connection died with the gateway
        assert workspace_of(app).supervisor.current.process.pid != gateway.process.pid
        for pane, role in ((one, "open"), (two, "asker")):  # the same tokens and URL, the same roles
            text = await run_in(pilot, pane, "clear; polter tools", f"role {role}")
            assert "AuthError" not in text


def decision_of(text: str, tool: str) -> str:
    """The DECISION column of ``tool``'s row in ``polter tools`` output."""
    line = next(line for line in text.splitlines() if line.strip().startswith(tool))
    return line.split()[1]


async def test_editing_a_bundled_role_edits_a_copy_in_the_users_roles(monkeypatch: Any, tmp_path: Path) -> None:
    editor = tmp_path / "editor"
    editor.write_text(
        "#!/bin/sh\n"  # writes only inside the test's config dir, whatever path it is given
        'case "$1" in "$POLTER_CONFIG_DIR"/*) echo "# edited" >> "$1";; esac\n'
        'echo "$1" > "$(dirname "$0")/edited"\n'
    )
    editor.chmod(0o755)
    monkeypatch.setenv("EDITOR", str(editor))
    monkeypatch.delenv("VISUAL", raising=False)
    async with workspace_app(monkeypatch, shell_plans("open")) as (app, pilot):
        monkeypatch.setattr(app, "suspend", contextlib.nullcontext)  # headless: no terminal to hand over
        await palette(pilot, ("edit role ops", "Edit role ops"))
        await wait_until(lambda: (tmp_path / "edited").exists(), message="the editor to run")
        copy = config_dir() / "roles" / "ops.toml"
        assert (tmp_path / "edited").read_text().strip() == str(copy)
        assert copy.read_text().endswith("# edited\n") and "[gates]" in copy.read_text()
        assert not (bundled_dir("roles") / "ops.toml").read_text().endswith("# edited\n")
        await wait_until(
            lambda: any("roles loaded" in message for message in notification_messages(app)), message="a reload"
        )
        summary = next(role for role in workspace_of(app).roles.roles if role.name == "ops")
        assert summary.file == str(copy)  # the user's copy is now the ops role in force


async def test_a_role_file_that_breaks_keeps_its_last_good_version_and_the_ui_says_so(monkeypatch: Any) -> None:
    mine = config_dir() / "roles" / "mine.toml"
    mine.parent.mkdir(parents=True, exist_ok=True)
    mine.write_text('description = "mine"\n')
    async with workspace_app(monkeypatch, shell_plans("open")) as (app, pilot):
        mine.write_text("[tools\n")
        screen(app).agents.reload_roles()
        await wait_until(
            lambda: any("roles loaded" in message for message in notification_messages(app)), message="a reload"
        )
        said = "\n".join(notification_messages(app))
        assert "role mine: its file is invalid; the last good version stays in force" in said
        assert f"{mine}:1: invalid TOML" in said and "mine" in workspace_of(app).roles.names


async def test_words_typed_while_the_gateway_restarts_still_count(monkeypatch: Any) -> None:
    async with workspace_app(monkeypatch, shell_plans("gated"), servers={"fixture": fixture_server()}) as (app, pilot):
        [pane] = panes(app)
        agent = agent_of(app, pane)
        supervisor = workspace_of(app).supervisor
        may_restart = asyncio.Event()
        restart = supervisor._restart

        async def held_restart() -> Any:  # the gateway stays down until the test has typed
            await may_restart.wait()
            return await restart()

        monkeypatch.setattr(supervisor, "_restart", held_restart)
        gateway = supervisor.current
        assert gateway is not None
        os.kill(gateway.process.pid, signal.SIGKILL)
        await wait_until(lambda: supervisor.current is None, timeout=30, message="the gateway to be down")
        await run_in(pilot, pane, "echo wipe", "wipe")  # the human's word, while there is no gateway
        await pilot.pause()
        assert app.is_running
        may_restart.set()
        await wait_until(
            lambda: any("The gateway is back" in message for message in notification_messages(app)),
            timeout=60,
            message="the gateway to come back",
        )
        async with pane_client("fixture", url=workspace_of(app).url, token=agent.token) as client:
            result = await client.call_tool("delete_all", {})
        assert not result.is_error, result  # the gate opened on the word typed while the gateway was down
