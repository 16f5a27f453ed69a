"""Every command of Polter's palette providers, chosen through the palette against the real gateway.

(The role switches of the focused pane and of another pane, "restart to apply", escalate, capabilities,
edit a role, pending asks and the audit log are driven in ``test_workspace_screen.py``; this file does
the rest and what the palette lists before anything is typed.)
"""

from __future__ import annotations

import textwrap
from typing import Any

from support.dialogs import confirm_shown
from support.gateway import fixture_server
from support.privates import notification_messages
from support.waiting import wait_until
from support.workspace_app import (
    agent_of,
    badges,
    host_of,
    palette,
    panes,
    session_pane,
    shell_plans,
    workspace_app,
    workspace_of,
)
from textual.command import CommandList, CommandPalette

from polter.paths import config_dir


async def gateway_panes(app: Any) -> dict[str, Any]:
    return {pane.id: pane for pane in await workspace_of(app).client.panes()}


async def discovered(app: Any, pilot: Any, expected: set[str]) -> list[str]:
    """Open the palette with nothing typed and return what it lists once ``expected`` are all there."""
    app.action_command_palette()  # not the key: which key opens it is the multiplexer's business
    await wait_until(
        lambda: isinstance(app.screen, CommandPalette) and app.screen.query(CommandList), message="the palette"
    )
    hits = app.screen.query_one(CommandList)

    def prompts() -> list[str]:
        return [str(hits.get_option_at_index(index).prompt).split("\n")[0] for index in range(hits.option_count)]

    await wait_until(lambda: expected <= set(prompts()), message=lambda: f"{expected} in {prompts()}")
    listed = prompts()
    await pilot.press("escape")
    await wait_until(lambda: not isinstance(app.screen, CommandPalette), message="the palette to close")
    return listed


async def confirm(app: Any, pilot: Any) -> None:
    await wait_until(lambda: confirm_shown(app), message="the confirmation")
    await pilot.press("y")


async def test_the_palette_lists_the_main_commands_before_anything_is_typed(monkeypatch: Any) -> None:
    async with workspace_app(monkeypatch, shell_plans("open", "phased")) as (app, pilot):
        one, _two = panes(app)
        one.terminal.focus()
        listed = await discovered(
            app,
            pilot,
            {
                "Switch the role of pane 1 (Shell, open)…",
                "Switch the role of another pane…",
                "Capabilities of pane 1 (Shell, open)",
                "New pane (same CLI and role)",
                "Reload roles",
                "Edit a role file…",
                "Pending asks (0)",
                "Audit log",
                "Keys and help",
            },
        )
        assert not any(title.startswith("Escalate") for title in listed)  # pane 1's role has no phases
        assert not any(title.startswith("Restart") and "apply" in title for title in listed)


async def test_phases_other_panes_new_restart_close_and_reload_from_the_palette(monkeypatch: Any) -> None:
    async with workspace_app(monkeypatch, shell_plans("open", "phased"), servers={"fixture": fixture_server()}) as (
        app,
        pilot,
    ):
        one, two = panes(app)

        # Escalate, then reset the focused pane's phase.
        two.terminal.focus()
        await palette(pilot, ("escalate", "Escalate pane 2"))
        await wait_until(lambda: badges(two).get("phase") == "action", message="the action phase")
        await palette(pilot, ("reset pane 2", "Reset pane 2 (Shell, phased) to the research phase"))
        await wait_until(lambda: badges(two).get("phase") == "research", message="the research phase again")
        assert (await gateway_panes(app))[two.remote.id].phase == "research"

        # Another pane's role, through the sub-palette of panes and roles.
        await palette(
            pilot,
            ("switch the role of another pane", "Switch the role of another pane…"),
            ("pane 1 reader", "pane 1 (Shell, open) → reader"),
        )
        await wait_until(lambda: badges(one)["role"] == "reader", message="pane 1 under reader")
        assert (await gateway_panes(app))[one.remote.id].role == "reader" and two.agent.role == "phased"

        # A new pane of a chosen CLI and role: registered under that role, with its own token.
        await palette(pilot, ("new pane: shell as asker", "New pane: Shell as asker"))
        await wait_until(lambda: len(panes(app)) == 3 and panes(app)[2].running, message="the third pane")
        three = panes(app)[2]
        assert three.agent is not None and badges(three)["role"] == "asker"
        assert agent_of(app, three).token not in (agent_of(app, one).token, agent_of(app, two).token)
        assert (await gateway_panes(app))[three.remote.id].role == "asker"

        # Restart it: a new process, the same registration.
        process = session_pane(app, three).terminal.process
        three.terminal.focus()
        await palette(pilot, ("restart pane 3", "Restart pane 3 (Shell, asker)"))
        await confirm(app, pilot)
        await wait_until(
            lambda: session_pane(app, three).terminal.process is not process and three.running, message="the restart"
        )
        assert three.remote.id in await gateway_panes(app)

        # Close it: the pane goes and the gateway forgets its token.
        agent = agent_of(app, three)
        await palette(pilot, ("close pane 3", "Close pane 3 (Shell, asker)"))
        await confirm(app, pilot)
        await wait_until(lambda: len(panes(app)) == 2, message="the pane to close")
        assert agent.closed and agent.id not in await gateway_panes(app) and not agent.runtime.path.exists()

        # Reload roles: a role written just now is there, and the palette offers it.
        (config_dir() / "roles" / "late.toml").write_text(
            textwrap.dedent("""
            description = "Written while Polter runs"
            [servers]
            default = "allow"
        """),
            encoding="utf-8",
        )
        await palette(pilot, ("reload roles", "Reload roles"))
        await wait_until(
            lambda: any("roles loaded" in message for message in notification_messages(app)),
            message="the reload's notification",
        )
        assert "late" in workspace_of(app).roles.names
        one.terminal.focus()
        await palette(pilot, ("role late for pane 1", "Role late for pane 1"))
        await wait_until(lambda: badges(one)["role"] == "late", message="pane 1 under the new role")


async def test_a_role_switch_from_the_palette_tells_the_panes_mcp_sessions(monkeypatch: Any) -> None:
    """What a hot CLI hears: ``notifications/tools/list_changed`` on its session, and the new surface."""
    import httpx2
    import mcp_types as types
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async with workspace_app(monkeypatch, shell_plans("reader"), servers={"fixture": fixture_server()}) as (app, pilot):
        [pane] = panes(app)
        agent = agent_of(app, pane)
        heard: list[Any] = []

        async def on_message(message: Any) -> None:
            heard.append(message)

        http = httpx2.AsyncClient(
            headers={"Authorization": f"Bearer {agent.token}"}, timeout=httpx2.Timeout(30, read=None)
        )
        async with (
            http,
            Client(
                streamable_http_client(f"{workspace_of(app).url}/mcp/fixture", http_client=http),
                mode="legacy",
                message_handler=on_message,
            ) as client,
        ):  # type: ignore[arg-type]
            before = {tool.name for tool in (await client.list_tools()).tools}
            pane.terminal.focus()
            await palette(pilot, ("role open for pane 1", "Role open for pane 1"))
            await wait_until(
                lambda: any(isinstance(m, types.ToolListChangedNotification) for m in heard),
                message="list_changed on the pane's session",
            )
            after = {tool.name for tool in (await client.list_tools()).tools}
        assert before < after and "write_note" in after - before
        assert any("its CLI was told (list_changed)" in message for message in notification_messages(app))
        assert "restart" not in badges(pane)


async def test_what_the_prefix_keys_do_is_in_the_palette_and_textuals_quit_keys_and_maximize_are_not(
    monkeypatch: Any,
) -> None:
    """Zoom, scrolling back, the layout, leaving and detaching, each saying its key; Textual's own Quit (Polter's
    leave dialog replaces it), Keys (a panel of Textual's bindings) and Maximize (restored by Escape, which belongs
    to the pane's program) are not offered."""
    from polter.window.leave_screen import LeaveScreen

    async with workspace_app(monkeypatch, shell_plans("open", "open")) as (app, pilot):
        one, _two = panes(app)
        one.terminal.focus()
        listed = await discovered(app, pilot, {"Keys and help", "Theme", "Screenshot"})
        assert not {"Quit", "Keys", "Maximize", "Minimize"} & set(listed)
        grid = app.session_screen.grid

        await palette(pilot, ("zoom pane 1", "Zoom pane 1 (Shell, open)"))
        await wait_until(lambda: grid.zoomed is one, message="pane 1 zoomed")
        await palette(pilot, ("unzoom pane 1", "Unzoom pane 1 (Shell, open)"))
        await wait_until(lambda: grid.zoomed is None, message="every pane again")
        await palette(pilot, ("next layout", "Next layout: columns"))
        await wait_until(lambda: grid.layout_mode == "columns", message="the columns")
        await palette(pilot, ("scroll back", "Scroll back in pane 1 (Shell, open)"))
        await wait_until(lambda: one.terminal.scroll.mode, message="pane 1 in scroll mode")
        await pilot.press("q")
        await wait_until(lambda: not one.terminal.scroll.mode, message="out of scroll mode")

        await palette(pilot, ("leave", "Leave…"))
        await wait_until(lambda: isinstance(app.screen, LeaveScreen), message="the leave dialog")
        await pilot.press("escape")
        await palette(pilot, ("detach", "Detach"))
        await wait_until(lambda: not app.is_running, message="the window gone")
        host = host_of(app)
        assert all(pane.terminal.running for pane in host.panes) and not host.ended.is_set()
