"""Polter's command-palette providers, one per domain, registered on the session screen."""

from polter.window.commands.attention import AttentionCommands
from polter.window.commands.gateway import GatewayCommands
from polter.window.commands.panes import PaneCommands
from polter.window.commands.roles import RoleCommands
from polter.window.commands.session import SessionCommands
from polter.window.commands.worktrees import WorktreeCommands

__all__ = [
    "AttentionCommands",
    "GatewayCommands",
    "PaneCommands",
    "RoleCommands",
    "SessionCommands",
    "WorktreeCommands",
]
