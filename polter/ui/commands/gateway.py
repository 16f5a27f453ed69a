"""Palette commands about what the gateway saw: the audit log, pending asks, and the keys."""

from __future__ import annotations

from collections.abc import Iterator

from polter.ui.commands._base import Command, CommandProvider

__all__ = ["GatewayCommands"]


class GatewayCommands(CommandProvider):
    def commands(self) -> Iterator[Command]:
        screen = self.workspace_screen
        if screen is None:
            return
        pending = len(screen.asks)
        yield Command(f"Pending asks ({pending})", screen.show_asks, "answer the calls waiting for you", discover=True)
        yield Command("Audit log", screen.show_audit, "every decision the gateway made, live", discover=True)
        yield Command("Keys and help", screen.action_help, "every key Polter uses", discover=True)
