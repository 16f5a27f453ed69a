"""The MCP gateway: per-pane tokens, one endpoint per upstream, enforcement, asks, audit.

Runs headless as its own process; it imports nothing of ``polter.ui`` or ``polter.terminal``.
"""
