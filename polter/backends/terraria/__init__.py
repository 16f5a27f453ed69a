"""The Terraria (TShock) admin MCP server, its TShock REST client and a faithful TShock simulator."""
