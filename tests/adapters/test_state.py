"""Agent state read from the screens the real CLIs drew (recorded streams, replayed into a screen model).

Each offset is a point in the recording where the screen shows one state: the empty prompt, a spinner
while the fake model answers, the tool-approval dialog, and the idle screen just before the quit command.
opencode's screens are saved as text (``screens/opencode-<version>/<columns>x<lines>/<state>-<what>.txt``,
recorded in a PTY pane by ``e2e/test_opencode_state.py``); each file's name starts with the state it shows.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.screens import replay

from polter.adapters import AgentState
from polter.adapters.plugins import AdapterRegistry

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
    ("qwen-code", "qwen-code-0.24.4-120x40", 74432, IDLE),  # ">   Type your message" between the input box's rules
    ("qwen-code", "qwen-code-0.24.4-120x40", 353536, WORKING),  # "⠋ Polishing the chrome... (0s · esc to cancel)"
    ("qwen-code", "qwen-code-0.24.4-120x40", 786496, WORKING),  # "(0s · ↑ 1 tokens · esc to cancel)"
    ("qwen-code", "qwen-code-0.24.4-120x40", 388992, IDLE),  # the answer drawn, the input box under it
]


@pytest.mark.parametrize(("adapter", "stream", "offset", "expected"), CASES, ids=[f"{c[1]}@{c[2]}" for c in CASES])
def test_state_from_recorded_screens(bundled: AdapterRegistry, adapter: str, stream: str, offset: int, expected: AgentState) -> None:
    screen = replay(stream, offset)
    assert bundled.get(adapter).state(screen) == expected, "\n".join(line.rstrip() for line in screen.display() if line.strip())


class TextScreen:
    def __init__(self, text: str, *, bracketed_paste: bool = False) -> None:
        self.rows = text.splitlines()
        self.bracketed_paste = bracketed_paste

    def display(self) -> list[str]:
        return self.rows


OPENCODE_SCREENS = sorted((Path(__file__).parent / "screens").glob("opencode-*/*/*.txt"))


def test_opencode_screens_cover_every_state() -> None:
    shown = {path.stem.split("-")[0] for path in OPENCODE_SCREENS}
    assert shown == {"idle", "working", "waiting"}, OPENCODE_SCREENS


@pytest.mark.parametrize("path", OPENCODE_SCREENS, ids=[f"{p.parent.parent.name}/{p.parent.name}/{p.stem}" for p in OPENCODE_SCREENS])
def test_opencode_state_from_recorded_screens(bundled: AdapterRegistry, path: Path) -> None:
    expected = {"idle": IDLE, "working": WORKING, "waiting": WAITING}[path.stem.split("-")[0]]
    text = path.read_text(encoding="utf-8")
    assert bundled.get("opencode").state(TextScreen(text)) == expected, text


def test_an_unknown_screen_is_no_state(bundled: AdapterRegistry) -> None:
    screen = replay("codex-0.171.0-120x40", 256)  # the startup warning, before any UI
    for name in ("claude-code", "codex", "gemini-cli", "opencode"):
        assert bundled.get(name).state(screen) is None
    assert bundled.get("shell").state(screen) is None
    assert bundled.get("opencode").state(TextScreen("\n" * 39)) is None  # before opencode draws


def test_a_recording_missing_from_the_repository_fails_the_test_instead_of_skipping_it() -> None:
    with pytest.raises(FileNotFoundError, match=r"tests/fixtures/streams/no-such-cli-0\.0\.0\.bin is missing"):
        replay("no-such-cli-0.0.0")


def test_codex_takes_a_prompt_once_its_composer_is_drawn_and_it_asked_for_bracketed_paste(
    bundled: AdapterRegistry,
) -> None:
    codex = bundled.get("codex")
    assert not codex.ready_for_prompt(replay("codex-0.171.0-120x40", 0))  # its TUI does not have the terminal yet
    warning = replay("codex-0.171.0-120x40", 256)  # bracketed paste asked for, no composer drawn yet
    assert warning.bracketed_paste and not codex.ready_for_prompt(warning)
    assert codex.ready_for_prompt(replay("codex-0.171.0-120x40", 5120))  # "› Ask Codex to do anything"
    assert codex.ready_for_prompt(replay("codex-0.171.0-120x40", 16320))  # working: the composer is under it
    # What the tty's line discipline echoes of a message typed before Codex started, and a composer-like line
    # drawn with bracketed paste off (a message typed now would be typed keys, not a paste).
    echoed = TextScreen("[from pane 1 · coder] Look over the change and answer")
    assert codex.state(echoed) is None and not codex.ready_for_prompt(echoed)
    assert not codex.ready_for_prompt(TextScreen("› Ask Codex to do anything\n  ? for shortcuts"))
    assert bundled.get("shell").ready_for_prompt(replay("codex-0.171.0-120x40", 0)) is None  # its state decides


CLASSIC = "claude-code-2.1.332-120x40-classic"
GEMINI, QWEN, OPENCODE = "gemini-cli-0.61.0-120x40", "qwen-code-0.24.4-120x40", "opencode-1.18.33-120x40"
READY = [
    ("claude-code", CLASSIC, 0, False),  # it does not have the terminal yet
    ("claude-code", CLASSIC, 32, False),  # bracketed paste asked for, nothing drawn yet
    ("claude-code", CLASSIC, 896, True),  # the empty prompt box
    ("claude-code", CLASSIC, 4224, True),  # working: the box under the spinner
    ("claude-code", CLASSIC, 11712, False),  # "Do you want to proceed?" in place of the box
    ("claude-code", "claude-code-2.1.332-120x40", 960, True),  # the fullscreen renderer's box
    ("gemini-cli", GEMINI, 0, False),
    ("gemini-cli", GEMINI, 1408, False),  # its first frame, input box included, before it asked for bracketed paste
    ("gemini-cli", GEMINI, 2304, False),  # bracketed paste asked for, its screen cleared to draw again
    ("gemini-cli", GEMINI, 6912, True),  # " >   Type your message" in the input box
    ("gemini-cli", GEMINI, 164000, True),  # working: the input box under the spinner, the prompts sent above it
    ("qwen-code", QWEN, 0, False),
    ("qwen-code", QWEN, 6336, False),  # bracketed paste asked for, "Initializing..." with no input box yet
    ("qwen-code", QWEN, 74432, True),  # ">   Type your message" between the input box's rules
    ("qwen-code", QWEN, 354272, True),  # working: the input box under the spinner
    ("opencode", OPENCODE, 0, False),
    ("opencode", OPENCODE, 240, False),  # bracketed paste asked for as it takes the terminal, nothing drawn
    ("opencode", OPENCODE, 8000, False),  # still a blank screen
    ("opencode", OPENCODE, 16560, True),  # the prompt box on its home screen
    ("opencode", OPENCODE, 24704, True),  # working: the prompt box above "esc interrupt"
]


@pytest.mark.parametrize(("adapter", "stream", "offset", "ready"), READY, ids=[f"{c[1]}@{c[2]}" for c in READY])
def test_a_cli_takes_a_prompt_once_its_input_box_is_drawn_and_it_asked_for_bracketed_paste(
    bundled: AdapterRegistry, adapter: str, stream: str, offset: int, ready: bool
) -> None:
    screen = replay(stream, offset)
    text = "\n".join(line.rstrip() for line in screen.display() if line.strip())
    assert bundled.get(adapter).ready_for_prompt(screen) is ready, f"bracketed paste: {screen.bracketed_paste}\n{text}"


RULE, TOP, BOTTOM = "─" * 120, "▄" * 120, "▀" * 120
LOOKALIKES = [
    ("claude-code", TextScreen(f"{RULE}\n❯\n{RULE}\n  ? for shortcuts")),  # its box drawn with bracketed paste off
    ("claude-code", TextScreen("[from pane 1 · coder] ❯ Look over the change ? for shortcuts")),  # the tty's echo
    ("claude-code", TextScreen("❯ What is a terminal multiplexer?\n\n● Hello", bracketed_paste=True)),  # a prompt sent
    ("claude-code", TextScreen(f"{RULE}\n! ls\n{RULE}\n  ! for bash mode", bracketed_paste=True)),  # a command
    ("gemini-cli", TextScreen("Type your message or @path/to/file? for shortcuts", bracketed_paste=True)),
    ("gemini-cli", TextScreen(f"{TOP}\n > What is a terminal multiplexer?\n{BOTTOM}\n✦ Hello\n{RULE}\n{TOP}\n"
                              f" !   Type your shell command\n{BOTTOM}", bracketed_paste=True)),  # shell mode
    ("qwen-code", TextScreen("  > What is a terminal multiplexer?\n\n  ◆︎ Hello", bracketed_paste=True)),  # one sent
    ("qwen-code", TextScreen(f"{RULE}\n>   Type your message or @path/to/file\n{RULE}")),  # bracketed paste off
    ("qwen-code", TextScreen(f"{RULE}\n!   Type your shell command\n{RULE}", bracketed_paste=True)),  # shell mode
    ("opencode", TextScreen("  ┃\n  ┃  What is a terminal multiplexer?\n  ┃\n\n     Hello", bracketed_paste=True)),
    ("opencode", TextScreen((Path(__file__).parent / "screens/opencode-1.18.33/120x40/waiting-permission.txt")
                            .read_text(encoding="utf-8"), bracketed_paste=True)),  # the dialog in place of the box
    ("opencode", TextScreen((Path(__file__).parent / "screens/opencode-1.18.33/120x40/idle-session.txt")
                            .read_text(encoding="utf-8"))),  # its box drawn with bracketed paste off
]


@pytest.mark.parametrize(("adapter", "screen"), LOOKALIKES, ids=[f"{c[0]}-{i}" for i, c in enumerate(LOOKALIKES)])
def test_what_only_looks_like_an_input_box_takes_no_prompt(
    bundled: AdapterRegistry, adapter: str, screen: TextScreen
) -> None:
    """The tty's echo of a message typed before the CLI had the terminal, a box drawn with bracketed paste off (a
    message would be typed keys), a prompt the conversation shows as sent, a dialog, and a shell mode's box (a
    message would run as a command)."""
    assert not bundled.get(adapter).ready_for_prompt(screen), "\n".join(screen.display())
