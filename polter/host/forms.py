"""Servers' forms (MCP elicitations) waiting for the human in Polter's window.

A form arrives from the gateway's event stream (or its list, after a restart) and stays here until the gateway
says it is over (answered in some window, timed out, cancelled); a window that attaches later shows the ones
still waiting. The answer goes straight to the gateway: the first one counts. A form whose gateway died is over
with it.
"""

from __future__ import annotations

from collections.abc import Callable

from polter.gateway.client import GatewayClient
from polter.gateway.models import ElicitationInfo, ElicitationReply
from polter.host.asks import unless_over

__all__ = ["Forms"]


class Forms:
    """The waiting forms by id. ``on_asked(info)`` tells of a new one, ``on_over(info)`` that one is over;
    ``client()`` is the gateway's client of the moment."""

    def __init__(
        self,
        *,
        client: Callable[[], GatewayClient],
        on_asked: Callable[[ElicitationInfo], None],
        on_over: Callable[[ElicitationInfo], None],
    ) -> None:
        self._client = client
        self._on_asked = on_asked
        self._on_over = on_over
        self.waiting: dict[str, ElicitationInfo] = {}

    def arrived(self, info: ElicitationInfo) -> None:
        if info.id not in self.waiting:
            self.waiting[info.id] = info
            self._on_asked(info)

    def over(self, info: ElicitationInfo) -> None:
        if self.waiting.pop(info.id, None) is not None:
            self._on_over(info)

    def gateway_gone(self) -> None:
        """The gateway that held the forms died: they are cancelled with it."""
        for info in list(self.waiting.values()):
            self.over(info.model_copy(update={"action": "cancel", "answered_by": "the gateway restarted"}))

    async def answer(self, elicitation_id: str, reply: ElicitationReply) -> None:
        """Answer a form (the first answer counts; a later one finds it over)."""
        await unless_over(self._client().answer_elicitation(elicitation_id, reply))
