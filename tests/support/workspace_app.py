"""A session with agent panes (the real gateway process, shell panes under the test roles) and a window
on it under Pilot; helpers reach the host's side (the workspace, an agent pane's token) where a test
needs what only the host knows."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator
from typing import Any

from textual.pilot import Pilot

from polter.adapters import Adapter, AgentState
from polter.adapters.plugins import discover
from polter.paths import config_dir
from polter.servers import ServerConfig
from polter.host.agents import Agent
from polter.launch.config import PaneSetup
from polter.host.session_host import SessionHost
from polter.launch.planning import Launch, PanePlan
from polter.host.panes import HostPane
from polter.host.workspace import Workspace
from polter.window.app import PolterApp
from polter.window.pane import PaneWidget
from polter.window.session_screen import SessionScreen
from support.keys import type_keys
from support.gateway import ROLES, write_roles
from support.panes import BASH, screen_text, wait_for_text
from support.session import hosted, window
from support.waiting import wait_until

QUIET_BASH = [BASH, "--norc", "--noprofile"]
"""The shell adapter's environment, but bash without rc files (prompt ``$ `` from ``PS1`` in the env)."""

_HOSTS: dict[int, SessionHost] = {}


SCRIPTED_AGENT = [sys.executable, "-m", "polter.demo.agent"]
"""The bundled scripted agent (its prompt ``you>``): what an agent may send messages to, as it reads prompts."""


def shell_plans(*roles: str, adapter: Adapter | None = None, command: list[str] = QUIET_BASH) -> list[PanePlan]:
    shell = adapter or discover(entry_points=False).get("shell")
    return [
        PanePlan(PaneSetup(adapter=shell.name, role=role, title=f"{role} shell", command=command), shell,
                 "chosen by the test")
        for role in roles
    ]  # fmt: skip


@contextlib.asynccontextmanager
async def workspace_app(
    monkeypatch: Any,
    plans: list[PanePlan],
    *,
    servers: dict[str, ServerConfig] | None = None,
    roles: dict[str, str] = ROLES,
    size: tuple[int, int] = (160, 44),
    **launch: Any,
) -> AsyncIterator[tuple[PolterApp, Pilot[None]]]:
    """A session with ``plans`` opened and a window on it, every pane at its prompt; the test roles are
    the user's roles."""
    monkeypatch.setenv("PS1", "$ ")
    write_roles(config_dir() / "roles", roles)
    session = Launch(plans, discover(entry_points=False), servers=servers or {}, **launch)
    async with hosted(launch=session) as host, window(host, size=size) as (app, pilot):
        _HOSTS[id(app)] = host
        try:
            for pane, plan in zip(panes(app), plans, strict=False):
                await wait_for_text(pane.terminal, "you>" if plan.setup.command == SCRIPTED_AGENT else "$")
            yield app, pilot
        finally:
            _HOSTS.pop(id(app), None)


def host_of(app: PolterApp) -> SessionHost:
    """The host of ``app``'s session: a :class:`~support.session.HostedApp`'s own, or ``workspace_app``'s."""
    return getattr(app, "host", None) or _HOSTS[id(app)]


def workspace_of(app: PolterApp) -> Workspace:
    """The session's workspace (in the host): its gateway, its client, the agent panes' registrations."""
    return host_of(app).workspace


def session_pane(app: PolterApp, pane: PaneWidget) -> HostPane:
    return host_of(app).pane(pane.remote.id)


def agent_of(app: PolterApp, pane: PaneWidget) -> Agent:
    """The host's record of an agent pane (its token, its launched role)."""
    agent = session_pane(app, pane).agent
    assert agent is not None, f"pane {pane.number} runs no agent"
    return agent


def screen(app: PolterApp) -> SessionScreen:
    return app.session_screen


def panes(app: PolterApp) -> list[PaneWidget]:
    return screen(app).grid.panes


async def wait_until_settled(app: PolterApp, *, timeout: float = 30) -> None:
    """Until every pane's agent is idle by a fresh reading in the host, its frame has gone out, and the
    window shows it: the state is read only every half second, so a shown "idle" can predate the prompt."""

    def settled(pane: PaneWidget) -> bool:
        hosted_pane = session_pane(app, pane)
        if hosted_pane.update_agent_state():
            host_of(app).panes.changed(hosted_pane)
        agent = pane.agent
        return (
            hosted_pane.agent_state is AgentState.IDLE
            and not hosted_pane.terminal.frame_pending
            and agent is not None
            and agent.state is AgentState.IDLE
            and badges(pane).get("state", "").partition(" · ")[0] == "idle"  # "idle · hook": the CLI's own hooks said so
        )

    await wait_until(
        lambda: all([settled(pane) for pane in panes(app)]),
        timeout=timeout,
        message=lambda: f"every agent idle and painted: {[badges(pane) for pane in panes(app)]}",
    )


def badges(pane: PaneWidget) -> dict[str, str]:
    """The header's badges by key (adapter, role, phase, state, asks, restart)."""
    return {str(label.id).removeprefix("badge-"): str(label.content) for label in pane.header.query(".badge")}


async def run_in(pilot: Pilot[None], pane: PaneWidget, command: str, expect: str, *, timeout: float = 30) -> str:
    """Focus ``pane``, type ``command`` and Enter, and wait until ``expect`` shows on its screen after the
    command (not in what an earlier command printed: the echo of ``clear; ...`` comes before the clear)."""
    pane.terminal.focus()
    await pilot.pause()
    await type_keys(pilot, command, enter=True)

    def after_command() -> str:
        """The screen from the line where the command was echoed on (all of it once the command cleared it)."""
        text = screen_text(pane.terminal)
        echoed = text.rfind(command)
        return text[text.rfind("\n", 0, echoed) + 1 :] if echoed >= 0 else text

    await wait_until(lambda: expect in after_command(), timeout=timeout,
                     message=lambda: f"{expect!r} after {command!r}:\n{screen_text(pane.terminal)}")
    return screen_text(pane.terminal)


async def palette(pilot: Pilot[None], *steps: tuple[str, str]) -> None:
    """Open the command palette; for each ``(typed, expected)`` step, type, wait until the search for what
    was typed is over and its best hit reads ``expected``, and choose that hit (a step may open a
    sub-palette for the next one). Waiting for the search to end matters: the hits of an earlier
    keystroke's search can read ``expected`` while the last one still streams in hits that sort before it;
    and a settled list has its best hit highlighted already, so the next one is a key "down" away."""
    from textual.command import CommandList, CommandPalette

    await pilot.press("ctrl+b", "colon")  # prefix then ':' (ctrl+p belongs to the pane's program)
    for typed, expected in steps:
        await wait_until(lambda: isinstance(pilot.app.screen, CommandPalette), message="the palette")
        palette_screen = pilot.app.screen
        hits = palette_screen.query_one(CommandList)
        await type_keys(pilot, typed)

        def best() -> str:
            return str(hits.get_option_at_index(0).prompt) if hits.option_count else ""

        def searching() -> bool:
            return any(worker.node is palette_screen and not worker.is_finished for worker in pilot.app.workers)  # noqa: B023

        await wait_until(
            lambda: not searching() and expected in best(),
            message=lambda: f"{expected!r} as the best hit, not {best()!r}",  # noqa: B023
        )
        hits.highlighted = 0  # the best hit (once the list settled it is highlighted; "down" would pass it)
        await pilot.press("enter")
        await wait_until(lambda: pilot.app.screen is not palette_screen, message="the palette to close")  # noqa: B023
