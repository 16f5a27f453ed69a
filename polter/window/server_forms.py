"""Servers' forms (MCP elicitations the pane's CLI could not show), each over the pane whose call asked until it
is answered here, answered in another window, or nobody answered in time."""

from __future__ import annotations

from typing import TYPE_CHECKING

from polter.gateway.models import ElicitationInfo, ElicitationReply
from polter.window.elicitation_screen import ElicitationScreen

if TYPE_CHECKING:
    from polter.window.session_screen import SessionScreen

__all__ = ["ServerForms"]


class ServerForms:
    """The forms shown on ``screen``, by elicitation id."""

    def __init__(self, screen: SessionScreen) -> None:
        self.screen = screen
        self._shown: dict[str, ElicitationScreen] = {}

    def asked(self, info: ElicitationInfo) -> None:
        pane = self.screen.grid.pane_of(info.pane)
        label = f"Pane {pane.number} {pane.agent.title}" if pane is not None and pane.agent else None
        region = pane.region if pane is not None and pane.display else None
        form = ElicitationScreen(info, pane_label=label, region=region)
        self._shown[info.id] = form

        def answered(reply: ElicitationReply | None) -> None:
            if self._shown.pop(info.id, None) is not None and reply is not None:
                self.screen.session.answer_elicitation(info.id, reply)

        self.screen.app.push_screen(form, answered)

    def closed(self, info: ElicitationInfo) -> None:
        """Answered elsewhere, or not in time: the form goes (an answer from here would count for nothing)."""
        form = self._shown.pop(info.id, None)
        if form is not None and form.is_attached:
            form.withdraw(None)
            self.screen.notify(f"{info.server}'s question is over ({info.answered_by}).")
