"""Polter: a terminal multiplexer for AI coding agents, with a role per pane.

The package is laid out by process (see ``docs/architecture.md``, "The tree"):

- ``polter.window``: the window (the Textual app, its screen, the pane widget);
- ``polter.host``: the session host (panes on PTYs, windows, attention, the workspace);
- ``polter.wire``: what travels between them (messages, calls, frames, the client, ssh);
- ``polter.gateway``: the MCP gateway (endpoints, upstream pool, control API, audit);
- ``polter.sandbox``: the kernel sandbox every pane runs in, and the egress proxy;
- ``polter.cli``, ``polter.launch``: the command line, the config file and launch planning;
- shared and pure: ``polter.terminal`` (the screen engine), ``polter.roles`` (the decision engine),
  ``polter.worktrees``, ``polter.adapters`` (the adapter-plugin API);
- ``polter.backends.terraria``: the bundled TShock admin MCP server and its simulator.
"""

from polter.errors import PolterError

__all__ = ["PolterError", "__version__"]

__version__ = "0.1.0"
