"""Agent state read from the screens the real CLIs drew (recorded streams, replayed into a screen model).

Each offset is a point in the recording where the screen shows one state: the empty prompt, a spinner
while the fake model answers, the tool-approval dialog, and the idle screen just before the quit command.
"""

from __future__ import annotations

import pytest

from polter.adapters import AdapterRegistry, AgentState
from support.screens import replay

IDLE, WORKING, WAITING = AgentState.IDLE, AgentState.WORKING, AgentState.WAITING

CASES = [
    ("claude-code", "claude-code-2.1.332-120x40-classic", 896, IDLE),  # empty prompt box
    ("claude-code", "claude-code-2.1.332-120x40-classic", 4224, WORKING),  # "✶ Ionizing…", "esc to interrupt"
    ("claude-code", "claude-code-2.1.332-120x40-classic", 9152, WAITING),  # "Waiting for permission…"
    ("claude-code", "claude-code-2.1.332-120x40-classic", 11712, WAITING),  # "Do you want to proceed?"
    ("claude-code", "claude-code-2.1.332-120x40-classic", 13632, WORKING),  # after approval
    ("claude-code", "claude-code-2.1.332-120x40-classic", 14858, IDLE),  # before /exit
    ("claude-code", "claude-code-2.1.332-120x40", 960, IDLE),  # fullscreen renderer
    ("claude-code", "claude-code-2.1.332-120x40", 3264, WORKING),
    ("claude-code", "claude-code-2.1.332-120x40", 6144, WAITING),
    ("claude-code", "claude-code-2.1.332-120x40", 9830, IDLE),
    ("codex", "codex-0.171.0-120x40", 5120, IDLE),  # "› Ask Codex to do anything"
    ("codex", "codex-0.171.0-120x40", 16320, WORKING),  # "• Working (0s • esc to interrupt)"
    ("codex", "codex-0.171.0-120x40", 17024, WAITING),  # "Allow the polter MCP server to run tool"
    ("codex", "codex-0.171.0-120x40", 19200, WORKING),
    ("codex", "codex-0.171.0-120x40", 20637, IDLE),
    ("gemini-cli", "gemini-cli-0.61.0-120x40", 5632, IDLE),  # "? for shortcuts" under the input box
    ("gemini-cli", "gemini-cli-0.61.0-120x40", 73472, WORKING),  # "⠋ Thinking... (esc to cancel, 0s)"
    ("gemini-cli", "gemini-cli-0.61.0-120x40", 182744, IDLE),
]


@pytest.mark.parametrize(("adapter", "stream", "offset", "expected"), CASES, ids=[f"{c[1]}@{c[2]}" for c in CASES])
def test_state_from_recorded_screens(bundled: AdapterRegistry, adapter: str, stream: str, offset: int, expected: AgentState) -> None:
    screen = replay(stream, offset)
    assert bundled.get(adapter).state(screen) == expected, "\n".join(line.rstrip() for line in screen.display() if line.strip())


def test_an_unknown_screen_is_no_state(bundled: AdapterRegistry) -> None:
    screen = replay("codex-0.171.0-120x40", 256)  # the startup warning, before any UI
    for name in ("claude-code", "codex", "gemini-cli"):
        assert bundled.get(name).state(screen) is None
    assert bundled.get("shell").state(screen) is None
