"""Palette commands about panes: new (adapter × role), restart, close, phases, capabilities."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from polter.window.commands._base import Command, CommandProvider, pane_name

__all__ = ["PaneCommands"]


class PaneCommands(CommandProvider):
    """Commands on the focused pane, restarts of panes whose role waits for one, and new panes."""

    def commands(self) -> Iterator[Command]:
        screen = self.session_screen
        focused = self.focused_pane
        for pane in screen.grid.panes:
            agent = pane.agent
            if agent is not None and agent.restart_needed:
                keeps = " (its conversation continues)" if agent.resumes else ""
                yield Command(
                    f"Restart {pane_name(pane)} to apply its role",
                    partial(screen.pane_actions.restart, pane),
                    agent.restart_needed + keeps,
                    discover=True,
                )
        if focused is not None:
            name = pane_name(focused)
            agent = focused.agent
            if agent is not None:
                yield Command(
                    f"Capabilities of {name}",
                    partial(screen.agents.show_capabilities, focused),
                    "what its agent may use and why (the same facts as its whoami)",
                    discover=True,
                )
                if agent.phase == "research":
                    yield Command(
                        f"Escalate {name} to the action phase",
                        partial(screen.agents.set_phase, focused, "action"),
                        "let it use every tool its role allows, until you type a new line",
                        discover=True,
                    )
                elif agent.phase == "action":
                    yield Command(
                        f"Reset {name} to the research phase",
                        partial(screen.agents.set_phase, focused, "research"),
                        "read-only tools only again",
                        discover=True,
                    )
            if agent is None or not agent.restart_needed:
                yield Command(
                    f"Restart {name}",
                    partial(screen.pane_actions.restart, focused),
                    "end its program and start it again",
                )
            yield Command(
                f"Close {name}", partial(screen.pane_actions.close, focused), "end its program and remove the pane"
            )
        yield Command(
            "New pane (same CLI and role)",
            screen.pane_actions.new_like_focused,
            "in the focused pane's directory",
            discover=True,
        )
        roles = [role.name for role in screen.session.roles.roles]
        for adapter in screen.session.adapters:
            for role in roles:
                yield Command(
                    f"New pane: {adapter.display_name} as {role}",
                    partial(screen.pane_actions.new, adapter.name, role),
                    adapter.description,
                )
