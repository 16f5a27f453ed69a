"""MCP servers that ship with Polter. Each is an ordinary MCP server: it imports nothing of Polter's policy or UI."""
