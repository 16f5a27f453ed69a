"""Palette commands about roles: switch the focused pane's role or any pane's, reload, edit a role file."""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial

from textual.command import SimpleCommand

from polter.window.commands._base import Command, CommandProvider, pane_name

__all__ = ["RoleCommands"]


class RoleCommands(CommandProvider):
    """``Role: <name> for pane N`` for the focused pane (listed first), ``Pane M: role <name>`` for the
    others; reload roles; edit a role's file in ``$EDITOR``."""

    def commands(self) -> Iterator[Command]:
        screen = self.session_screen
        roles = screen.session.roles.roles
        focused = self.focused_pane
        if focused is not None and focused.agent is not None:
            name = pane_name(focused)
            choices = [
                SimpleCommand(f"{role.name}", partial(screen.agents.switch_role, focused, role.name), role.description)
                for role in roles
                if role.name != focused.agent.role
            ]
            yield Command(
                f"Switch the role of {name}…",
                partial(self.app.search_commands, choices, placeholder=f"The new role of {name}…"),
                "the focused pane",
                discover=True,
            )
            for role in roles:
                if role.name != focused.agent.role:
                    yield Command(
                        f"Role {role.name} for {name}",
                        partial(screen.agents.switch_role, focused, role.name),
                        role.description,
                    )
        others = [pane for pane in screen.grid.panes if pane.agent is not None and pane is not focused]
        if others:
            choices = [
                SimpleCommand(
                    f"{pane_name(pane)} → {role.name}",
                    partial(screen.agents.switch_role, pane, role.name),
                    role.description,
                )
                for pane in others
                for role in roles
                if pane.agent is not None and role.name != pane.agent.role
            ]
            yield Command(
                "Switch the role of another pane…",
                partial(self.app.search_commands, choices, placeholder="Pane and new role…"),
                "any pane",
                discover=True,
            )
            for pane in others:
                for role in roles:
                    if pane.agent is not None and role.name != pane.agent.role:
                        yield Command(
                            f"Pane {pane.number}: role {role.name}",
                            partial(screen.agents.switch_role, pane, role.name),
                            f"{pane_name(pane)}; {role.description}",
                        )
        yield Command("Reload roles", screen.agents.reload_roles, "read the role files again now", discover=True)
        editable = [role for role in roles if role.file]
        choices = [
            SimpleCommand(role.name, partial(screen.agents.edit_role, role.name), role.file or "") for role in editable
        ]
        yield Command(
            "Edit a role file…",
            partial(self.app.search_commands, choices, placeholder="Role to edit…"),
            "in $EDITOR; Polter steps aside until you quit it",
            discover=True,
        )
        for role in editable:
            yield Command(f"Edit role {role.name}", partial(screen.agents.edit_role, role.name), role.file or "")
