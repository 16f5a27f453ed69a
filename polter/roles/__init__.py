"""Roles: what the agent in a pane may use. Models, loading, and the pure decision engine.

This package imports no transport, screen or PTY code: it is pure and testable alone.
"""
