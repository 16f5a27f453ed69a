"""The MCP gateway: per-pane tokens, one endpoint per upstream, enforcement, asks, audit.

Runs headless as its own process; it imports nothing of ``polter.window`` or ``polter.terminal``. This
``__init__`` imports nothing, so ``polter.gateway.client`` and ``polter.gateway.models`` stay cheap for
the app and the admin commands. The layout:

- :mod:`~polter.gateway.app`: ``create_gateway(config) -> Starlette`` and its lifespan;
  :mod:`~polter.gateway.serve`: running it on loopback; :mod:`~polter.gateway.state`: ``gateway.json``;
- :mod:`~polter.gateway.security`: Host/Origin checks and bearer tokens (pane or admin);
- :mod:`~polter.gateway.endpoints`: the MCP servers (``/mcp/<server>``, ``/mcp/polter``) and
  :mod:`~polter.gateway.floor`: ``whoami`` and ``escalate``;
- :mod:`~polter.gateway.core`: the state and the operations every surface shares;
  :mod:`~polter.gateway.policy`: the one door to the roles engine (listing open, execution closed);
- :mod:`~polter.gateway.upstreams`: the supervised upstream pool (the servers file's format is
  :mod:`polter.servers`, shared with the session host and ``polter servers``); :mod:`~polter.gateway.importers`:
  taking over the CLIs' servers;
- :mod:`~polter.gateway.asks`, :mod:`~polter.gateway.events`, :mod:`~polter.gateway.audit`,
  :mod:`~polter.gateway.channels` (``list_changed`` per pane), :mod:`~polter.gateway.panes`;
- :mod:`~polter.gateway.control`: the admin API and ``/hook``; :mod:`~polter.gateway.models` its wire
  models and :mod:`~polter.gateway.client` the typed async client.
"""
