"""What adapters need to hear the CLI's own hooks about its agent's state: a turn began, a permission dialog
opened, the turn ended. Screen reading stays the fallback; a CLI's own word is read first while it is fresh.

A state hook is not a veto: the gateway's ``/hook/<adapter>/state`` answers every report the same way (an HTTP
200 with an empty JSON object, which no CLI reads as a decision), and the command form
(``hook_client.py --state``) prints nothing and exits 0 whatever happens, so a report can neither allow nor
refuse anything, and a gateway that is gone never blocks the CLI (a Stop hook that exits 2 would make Claude
Code and Codex carry on with the turn).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, Final
from urllib.parse import quote

from polter.adapters._contract import PaneToPrepare
from polter.adapters._veto import hook_client_program
from polter.protocol import AgentState, StateReport

__all__ = [
    "STATE_HOOK_TIMEOUT_SECONDS",
    "claude_style_state",
    "one_line",
    "state_hook_argv",
    "state_hook_url",
]

STATE_HOOK_TIMEOUT_SECONDS: Final = 10
"""How long a CLI waits for a state report to be taken (the gateway answers at once)."""

EXCERPT_LIMIT: Final = 200
"""Characters of the CLI's words kept in a report (one line for a notification)."""


def state_hook_argv(pane: PaneToPrepare, adapter: str) -> tuple[str, ...]:
    """The command a CLI without HTTP hooks runs to report its state: the stdlib forwarder in its ``--state`` mode
    (``python -I -S``, so it starts in milliseconds), which never vetoes."""
    return (sys.executable, "-I", "-S", str(hook_client_program()), "--state", adapter)


def state_hook_url(pane: PaneToPrepare, adapter: str) -> str:
    """The gateway URL an HTTP hook (or a plugin) posts the CLI's state payload to."""
    return f"{pane.gateway_url}/hook/{quote(adapter, safe='')}/state"


def one_line(text: Any, limit: int = EXCERPT_LIMIT) -> str:
    """``text`` as one line of at most ``limit`` characters: whitespace runs become one space, control
    characters go (a notification must not carry escape sequences), a cut ends with an ellipsis."""
    if not isinstance(text, str):
        return ""
    words = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return words if len(words) <= limit else words[: limit - 1].rstrip() + "…"


_CLAUDE_WAITING_NOTICES = frozenset({"permission_prompt", "elicitation_dialog", "agent_needs_input"})
"""Claude Code's (and Qwen Code's) Notification types that mean a dialog waits for the human."""


def claude_style_state(payload: Mapping[str, Any], *, cli: str) -> StateReport | None:
    """A report from the hook payloads Claude Code defines and Qwen Code and Codex copy (``hook_event_name``):

    - ``UserPromptSubmit``, ``PostToolUse``: working (a turn began; a tool ran, so a dialog before it was answered);
    - ``PermissionRequest``: waiting (the CLI's approval dialog opens), naming the tool;
    - ``Notification``: waiting for a permission prompt, an elicitation or input; other notices are not states;
    - ``Stop``: idle, the turn over (``last_assistant_message`` is what it said last); ``StopFailure`` the same,
      with the error; ``Interrupt`` (Codex): idle, the human stopped it.

    None for any other event (Polter only listens to these)."""
    event = str(payload.get("hook_event_name") or "")
    if event in ("UserPromptSubmit", "PostToolUse"):
        return StateReport(state=AgentState.WORKING, event=event)
    if event == "PermissionRequest":
        tool = one_line(payload.get("tool_name"), 80) or "a tool"
        return StateReport(state=AgentState.WAITING, event=event, message=f"{cli} asks permission to use {tool}")
    if event == "Notification":
        kind = str(payload.get("notification_type") or "")
        if kind not in _CLAUDE_WAITING_NOTICES:
            return None
        message = one_line(payload.get("message")) or f"{cli} waits for you"
        return StateReport(state=AgentState.WAITING, event=f"{event}:{kind}", message=message)
    if event == "Stop":
        said = one_line(payload.get("last_assistant_message"))
        return StateReport(state=AgentState.IDLE, event=event, message=said, turn_ended=True)
    if event == "StopFailure":
        error = one_line(payload.get("error") or payload.get("message"))
        message = f"the turn failed: {error}" if error else "the turn failed"
        return StateReport(state=AgentState.IDLE, event=event, message=message, turn_ended=True)
    if event == "Interrupt":
        return StateReport(state=AgentState.IDLE, event=event, message="interrupted")
    return None
