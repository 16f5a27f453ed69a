"""Palette commands about what the gateway saw and what the agents sent: pending asks, the audit log, the team."""

from __future__ import annotations

from collections.abc import Iterator

from polter.window.commands._base import Command, CommandProvider

__all__ = ["GatewayCommands"]


class GatewayCommands(CommandProvider):
    def commands(self) -> Iterator[Command]:
        screen = self.session_screen
        pending = len(screen.asks.queue)
        yield Command(
            f"Pending asks ({pending})", screen.asks.show_all, "answer the calls waiting for you", discover=True
        )
        yield Command("Audit log", screen.agents.show_audit, "every decision the gateway made, live", discover=True)
        yield Command("Team view", screen.agents.show_team, "who sent what to whom: the team tools' calls, live")
        yield Command(
            "Send to panes…", screen.agents.send_to_panes, "type one message into several panes, as your words"
        )
