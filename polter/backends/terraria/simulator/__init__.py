"""A faithful TShock 5.2 REST simulator for tests and demos (``polter terraria sim``).

In-process use (tests)::

    world = World(seed=7)
    async with SimulatorServer(world) as sim:
        ...  # sim.url, sim.token; then inspect ``world``
"""

from __future__ import annotations

from polter.backends.terraria.localhttp import LocalHttpServer
from polter.backends.terraria.simulator.rest import create_app
from polter.backends.terraria.simulator.world import ServerConfig, World

__all__ = ["ServerConfig", "SimulatorServer", "World", "create_app"]


class SimulatorServer(LocalHttpServer):
    """Serves a :class:`World` on 127.0.0.1 inside the running event loop."""

    def __init__(self, world: World, *, port: int = 0, handle_signals: bool = False) -> None:
        super().__init__(create_app(world), port=port, handle_signals=handle_signals)
        self.world = world

    @property
    def url(self) -> str:
        return self.base_url

    @property
    def token(self) -> str:
        """The application REST token (``ApplicationRestTokens`` in TShock's config): superadmin."""
        return self.world.application_token

    async def __aenter__(self) -> SimulatorServer:
        await self.start()
        return self
