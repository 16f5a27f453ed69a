"""Polter: a terminal multiplexer for AI coding agents, with a role per pane.

The package is laid out by architecture (see ``docs/architecture.md``):

- ``polter.terminal``: PTY processes, the screen model and the pane widget;
- ``polter.roles``: role models, the pure decision engine and role loading;
- ``polter.gateway``: the MCP gateway (endpoints, upstream pool, control API, audit);
- ``polter.adapters``: the adapter-plugin contract and discovery;
- ``polter.ui``: the Textual app, screens, palette providers and modals;
- ``polter.backends.terraria``: the bundled TShock admin MCP server and its simulator.
"""

from polter.errors import PolterError

__all__ = ["PolterError", "__version__"]

__version__ = "0.1.0"
