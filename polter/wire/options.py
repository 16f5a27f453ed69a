"""The session's options that both its config file and its protocol name: the layouts, the ways a window tells
its terminal, the most panes a session holds.

Plain values, no models: the command line checks a config and plans a launch with them before it starts the
host, and the protocol's models (a seventh of a second to import) load only after, while the host starts.
"""

from __future__ import annotations

from typing import Final, Literal

__all__ = ["MAX_PANES", "LayoutMode", "TerminalNotification"]

MAX_PANES: Final = 16
"""Panes one session holds at most."""

LayoutMode = Literal["grid", "columns", "rows"]
TerminalNotification = Literal["auto", "osc9", "osc777", "osc99", "bell", "off"]
"""How a window tells its terminal that a pane needs the human (``notify_terminal`` in ``polter.toml``)."""
