"""Palette commands about the agents that need you: the panes that wait (oldest first, with why), and muting a
pane's notifications."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from functools import partial

from polter.window.commands._base import Command, CommandProvider, pane_name
from polter.wire.messages import Handoffs

__all__ = ["AttentionCommands", "waited"]

_HANDOFFS: tuple[tuple[Handoffs, str, str], ...] = (
    ("on", "Allow hand-offs", "other agents may send to it and it to them (its role decides, docs/team.md)"),
    ("muted", "Mute hand-offs", "what other agents send it waits until you unmute it"),
    ("forbidden", "Forbid hand-offs", "no agent sends to it, and it sends to none"),
)


def waited(since: datetime, now: datetime | None = None) -> str:
    """``for 40 s``, ``for 3 min``, ``for 2 h``."""
    seconds = max(0, int(((now or datetime.now(UTC)) - since).total_seconds()))
    if seconds < 60:
        return f"for {seconds} s"
    if seconds < 3600:
        return f"for {seconds // 60} min"
    return f"for {seconds // 3600} h"


class AttentionCommands(CommandProvider):
    """``Waiting: pane N (...): why`` for each pane that waits, oldest first; mute and unmute."""

    def commands(self) -> Iterator[Command]:
        screen = self.session_screen
        waiting = screen.pane_focus.waiting_panes()
        for pane in waiting:
            agent = pane.agent
            since = pane.waiting_since
            if agent is None or since is None:
                continue
            why = agent.state_why or "waits for you"
            yield Command(
                f"Waiting: {pane_name(pane)}: {why}",
                partial(screen.pane_focus.go_to, pane),
                f"waiting {waited(since)}; prefix then n goes to the pane waiting longest",
                discover=True,
            )
        if waiting:
            yield Command(
                f"Next pane that waits for you ({len(waiting)} waiting)",
                screen.pane_focus.next_waiting,
                "the one waiting longest first (prefix then n)",
                discover=True,
            )
        focused = self.focused_pane
        for pane in screen.grid.panes:
            agent = pane.agent
            if agent is None:
                continue
            if agent.muted:
                title, help_text = f"Unmute {pane_name(pane)}", "notify again when it waits for you or is done"
            else:
                title, help_text = f"Mute {pane_name(pane)}", "no notifications when it waits for you or is done"
            yield Command(
                title, partial(screen.agents.set_muted, pane, not agent.muted), help_text, discover=pane is focused
            )
            for mode, verb, why in _HANDOFFS:
                if agent.handoffs != mode:
                    yield Command(f"{verb} of {pane_name(pane)}", partial(screen.agents.set_handoffs, pane, mode), why)
