"""Polter's command-palette providers, one per domain, registered on the session screen."""

from polter.ui.commands.attention import AttentionCommands
from polter.ui.commands.gateway import GatewayCommands
from polter.ui.commands.panes import PaneCommands
from polter.ui.commands.roles import RoleCommands
from polter.ui.commands.worktrees import WorktreeCommands

__all__ = ["AttentionCommands", "GatewayCommands", "PaneCommands", "RoleCommands", "WorktreeCommands"]
