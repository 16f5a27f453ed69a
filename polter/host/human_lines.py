"""The lines the human types into agent panes, on their way to the gateway: its evidence for gates and phases.

While the gateway restarts, the newest lines wait here and go to it once the panes are registered again: the
human's words count all the same. A line that cannot reach the gateway is logged, never retried forever.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Callable
from typing import Final

from polter.errors import GatewayError
from polter.gateway.client import GatewayClient
from polter.host.agents import Agent
from polter.tasks import BackgroundTasks

__all__ = ["HELD_LINES", "HumanLines"]

logger = logging.getLogger(__name__)

HELD_LINES: Final = 100
"""Typed lines kept for a restarting gateway (the newest; a gate looks at recent input only)."""


class HumanLines:
    """Passes each typed line to the gateway of the moment (``client()``), holding them while it is down."""

    def __init__(self, *, client: Callable[[], GatewayClient], tasks: BackgroundTasks) -> None:
        self._client = client
        self._tasks = tasks
        self.down = True
        """Set while there is no gateway to take the lines (at start, and while it restarts)."""
        self._held: deque[tuple[Agent, str]] = deque(maxlen=HELD_LINES)

    def submit(self, agent: Agent, text: str) -> None:
        if self.down:
            self._held.append((agent, text))
            return
        self._tasks.run(self._send(self._client(), agent, text), f"passing a typed line of {agent.id} to the gateway")

    async def gateway_up(self, client: GatewayClient) -> None:
        """The gateway is back and knows the panes again: the held lines go to it, in order."""
        self.down = False
        while self._held:
            agent, text = self._held.popleft()
            if not agent.closed:
                await self._send(client, agent, text)

    @staticmethod
    async def _send(client: GatewayClient, agent: Agent, text: str) -> None:
        try:
            await client.input(agent.id, text)
        except GatewayError as exc:
            logger.warning("a line typed in %s did not reach the gateway: %s", agent.id, exc)
