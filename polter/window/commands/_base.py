"""What Polter's palette providers share: a provider lists its commands, search and discovery follow.

The providers are registered on :class:`~polter.window.session_screen.SessionScreen` (its ``COMMANDS``), so the
screen a provider serves is always that one; the screen's module imports the providers, not the other way."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.markup import escape

from polter.printable import printable
from polter.window.plain_app import plain

if TYPE_CHECKING:
    from polter.window.pane import PaneWidget
    from polter.window.session_screen import SessionScreen

__all__ = ["Command", "CommandProvider"]


@dataclass(frozen=True)
class Command:
    """One palette entry: what it says, what it runs, and whether it shows before anything is typed."""

    title: str
    run: Callable[[], object]
    help: str = ""
    discover: bool = False


class CommandProvider(Provider):
    """A provider of :class:`Command` entries; subclasses implement :meth:`commands`."""

    @property
    def session_screen(self) -> SessionScreen:
        """The session's screen, which the palette was opened over (the only screen these are registered on)."""
        return cast("SessionScreen", self.screen)

    @property
    def focused_pane(self) -> PaneWidget | None:
        return self.session_screen.active_pane

    def commands(self) -> Iterator[Command]:
        raise NotImplementedError

    async def discover(self) -> Hits:
        for command in self.commands():
            if command.discover:
                yield DiscoveryHit(
                    plain(command.title), command.run, text=command.title, help=_plain_help(command.help)
                )

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for command in self.commands():
            score = matcher.match(command.title)
            if score > 0:
                yield Hit(
                    score, matcher.highlight(printable(command.title)), command.run, help=_plain_help(command.help)
                )


def _plain_help(help: str) -> str | None:
    """The palette reads a hit's help as markup: a role's description and a pane's title are the user's or an
    agent's words, never markup."""
    return escape(printable(help)) if help else None


def pane_name(pane: PaneWidget) -> str:
    """``pane 2 (Codex CLI, reviewer)``: how commands name a pane."""
    agent = pane.agent
    if agent is None:
        return f"pane {pane.number}"
    return f"pane {pane.number} ({agent.display_name}, {agent.role})"
