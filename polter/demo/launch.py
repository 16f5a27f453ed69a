"""``polter --demo``'s launch: the whole story with no game server and no API key.

The TShock simulator runs inside the app, the bundled Terraria MCP server is the gateway's
``terraria`` upstream pointed at it, and four panes run under the Terraria roles: three scripted
agents (:mod:`polter.demo.agent`, no model) as admin, moderator and researcher, and a shell as
researcher for ``polter tools`` and ``polter call``. Typing "make it rain" in the admin pane shows
a keyword gate refusing the agent's uninvited hardmode; "turn on hardmode" then brings up an ask.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import AsyncIterator

from polter.adapters.plugins import AdapterRegistry
from polter.launch.config import PaneSetup
from polter.launch.planning import Launch, choose_shell, plan_panes, terraria_server
from polter.servers import ServerConfig

__all__ = ["DEMO_HINT", "demo_launch", "simulator"]

DEMO_HINT = (
    "Demo: in pane 1 (terraria-admin) type  make it rain  — the rain comes, the agent's uninvited hardmode is "
    "refused by the keyword gate. Then type  turn on hardmode  and answer the ask. Try the same words in "
    "panes 2 and 3, and  polter tools  in pane 4. ctrl+b then : shows every command."
)

AGENT = [sys.executable, "-m", "polter.demo.agent"]


@contextlib.asynccontextmanager
async def simulator(seed: int = 7) -> AsyncIterator[dict[str, ServerConfig]]:
    """A TShock simulator on 127.0.0.1 for the app's lifetime, and the Terraria server pointed at it."""
    # lazy: every host plans with the demo at hand; only the demo's loads the simulator
    from polter.backends.terraria.simulator import SimulatorServer, World

    async with SimulatorServer(World(seed=seed)) as server:
        yield {"terraria": terraria_server({"TSHOCK_URL": server.url, "TSHOCK_TOKEN": server.token})}


def demo_launch(registry: AdapterRegistry) -> Launch:
    shell = choose_shell(registry)
    setups = [
        PaneSetup(adapter=shell.name, role="terraria-admin", title="admin agent", command=AGENT),
        PaneSetup(adapter=shell.name, role="terraria-moderator", title="moderator agent", command=AGENT),
        PaneSetup(adapter=shell.name, role="terraria-researcher", title="researcher agent", command=AGENT),
        PaneSetup(adapter=shell.name, role="terraria-researcher", title="your shell"),
    ]
    plans = plan_panes(setups, registry, source="the demo's scripted agent (no AI model)", where=lambda index: {})
    return Launch(plans, registry, backends=[simulator], demo=True, hint=DEMO_HINT)
