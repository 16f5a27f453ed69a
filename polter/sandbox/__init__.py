"""A pane's OS sandbox, compiled from its role, and the egress proxy that is the only way out of its network."""
