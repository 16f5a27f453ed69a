"""What the agent in a pane is doing: its adapter reads it from the screen, else screen activity tells.

Pure functions on times and flags, so the rules are testable without a terminal.
"""

from __future__ import annotations

from typing import Final

from polter.protocol import AgentState

__all__ = ["ACTIVE_SECONDS", "ECHO_SECONDS", "screen_activity"]

ACTIVE_SECONDS: Final = 1.5
"""Output within this long counts as the program working."""
ECHO_SECONDS: Final = 0.3
"""Output this soon after a key is the echo of the human's typing, and this soon after a resize the program's
redraw for the new size: not the program working."""


def screen_activity(
    now: float, last_output: float, last_input: float, *, foreground_job: bool, last_resize: float = 0.0
) -> AgentState:
    """``working`` while the program draws by itself (or a job it started runs in the foreground),
    else ``idle``. Waiting-for-input cannot be told from activity alone: only an adapter reading the
    CLI's screen can see a question on it."""
    if foreground_job:
        return AgentState.WORKING
    drawing = now - last_output < ACTIVE_SECONDS
    # drawn a while after the last key and resize: not their echo, nor what it drew before them (the echo of a
    # message's paste is no work once its Enter follows)
    by_itself = last_output - max(last_input, last_resize) >= ECHO_SECONDS
    return AgentState.WORKING if drawing and by_itself else AgentState.IDLE
