"""How a window tells its terminal that a pane needs the human: the decision table (terminal → sequence), the
sequences themselves, tmux's passthrough (asked of a real tmux server), and the one Textual internal it needs."""

from __future__ import annotations

import os
import shutil
import subprocess
from importlib.metadata import version
from pathlib import Path

import pytest
from textual.app import App
from textual.driver import Driver

from polter.window.outer_terminal import Delivery, TerminalNotifier, choose_delivery, notification_sequence, write_raw


def never(env: object) -> bool:
    raise AssertionError("tmux is not asked outside tmux")


@pytest.mark.parametrize(
    ("env", "method"),
    [
        ({"TERM_PROGRAM": "iTerm.app", "TERM": "xterm-256color"}, "osc9"),
        ({"LC_TERMINAL": "iTerm2", "TERM": "xterm-256color"}, "osc9"),  # iTerm2 over SSH
        ({"TERM": "xterm-kitty"}, "osc99"),
        ({"KITTY_WINDOW_ID": "3", "TERM": "xterm-256color"}, "osc99"),
        ({"TERM_PROGRAM": "WezTerm", "TERM": "xterm-256color"}, "osc777"),
        ({"WEZTERM_PANE": "0", "TERM": "xterm-256color"}, "osc777"),
        ({"TERM_PROGRAM": "ghostty", "TERM": "xterm-ghostty"}, "osc777"),
        ({"TERM": "foot"}, "osc777"),
        ({"WT_SESSION": "x", "TERM": "xterm-256color"}, "bell"),
        ({"ConEmuPID": "7", "TERM_PROGRAM": "iTerm.app"}, "bell"),  # ConEmu's OSC 9 means its own commands
        ({"TERM_PROGRAM": "vscode", "TERM": "xterm-256color"}, "bell"),
        ({"TERM_PROGRAM": "Apple_Terminal", "TERM": "xterm-256color"}, "bell"),
        ({"TERM": "xterm-256color"}, "bell"),
        ({}, "bell"),
    ],
)
def test_the_terminal_is_recognised_from_its_environment(env: dict[str, str], method: str) -> None:
    assert choose_delivery("auto", env, passthrough=never).method == method


def test_inside_tmux_the_outer_terminal_decides_and_tmux_must_pass_it_on() -> None:
    kitty_in_tmux = {"TMUX": "/tmp/tmux-0/default,1,0", "TERM": "tmux-256color", "TERM_PROGRAM": "tmux",
                     "KITTY_WINDOW_ID": "1"}  # fmt: skip
    assert choose_delivery("auto", kitty_in_tmux, passthrough=lambda env: True) == Delivery(
        "osc99", True, "kitty outside tmux, through tmux's passthrough"
    )
    refused = choose_delivery("auto", kitty_in_tmux, passthrough=lambda env: False)
    assert (refused.method, refused.tmux) == ("bell", False) and "allow-passthrough is off" in refused.why
    unknown = {"TMUX": "/tmp/tmux-0/default,1,0", "TERM": "tmux-256color", "TERM_PROGRAM": "tmux"}
    assert choose_delivery("auto", unknown, passthrough=never).method == "bell"
    forced = choose_delivery("osc9", unknown, passthrough=never)
    assert (forced.method, forced.tmux) == ("osc9", True)
    assert choose_delivery("off", {"TERM_PROGRAM": "iTerm.app"}, passthrough=never).method == "off"


def test_the_sequences() -> None:
    assert notification_sequence("osc9", "Polter: pane 2 waits", "asks to use Bash") == (
        "\x1b]9;Polter: pane 2 waits: asks to use Bash\x07"
    )
    assert notification_sequence("osc777", "Polter; pane 2", "done") == "\x1b]777;notify;Polter, pane 2;done\x07"
    assert notification_sequence("osc777", "Polter: pane 2 is done") == (
        "\x1b]777;notify;Polter: pane 2 is done;Polter: pane 2 is done\x07"
    )
    assert notification_sequence("osc99", "T", "b") == "\x1b]99;;T: b\x1b\\"
    assert notification_sequence("bell", "T", "b") == notification_sequence("off", "T") == ""
    evil = notification_sequence("osc9", "T", "\x1b]52;c;cm0gLXJmIH4=\x07 and\nmore")
    assert evil.count("\x1b") == 1 and evil.count("\x07") == 1, "what an agent said cannot smuggle a sequence out"
    assert len(notification_sequence("osc9", "T", "x" * 1000)) < 260
    wrapped = notification_sequence("osc9", "T", tmux=True)
    assert wrapped == "\x1bPtmux;\x1b\x1b]9;T\x07\x1b\\"


@pytest.fixture
def tmux_server(tmp_path: Path) -> dict[str, str]:
    """A private tmux server; the environment a program inside one of its panes would have."""
    tmux = shutil.which("tmux")
    assert tmux is not None, "tmux is missing: make system-tools installs it"
    socket = tmp_path / "tmux.sock"
    subprocess.run([tmux, "-S", str(socket), "-f", "/dev/null", "new-session", "-d", "-s", "t"], check=True, timeout=20)
    pid = subprocess.run([tmux, "-S", str(socket), "display", "-p", "#{pid}"], check=True, capture_output=True,
                         text=True, timeout=20).stdout.strip()  # fmt: skip
    env = {**os.environ, "TMUX": f"{socket},{pid},0", "TERM": "tmux-256color", "TERM_PROGRAM": "tmux"}
    yield env
    subprocess.run([tmux, "-S", str(socket), "kill-server"], timeout=20, check=False)


def test_tmux_passthrough_is_read_from_the_running_tmux(tmux_server: dict[str, str]) -> None:
    from polter.window.outer_terminal import tmux_passthrough

    env = {**tmux_server, "WEZTERM_PANE": "1"}
    assert not tmux_passthrough(env)
    assert choose_delivery("auto", env).method == "bell"
    subprocess.run(["tmux", "set-option", "-g", "allow-passthrough", "on"], env=env, check=True, timeout=20)
    assert tmux_passthrough(env)
    assert choose_delivery("auto", env) == Delivery("osc777", True, "WezTerm outside tmux, through tmux's passthrough")


async def test_the_one_textual_internal_a_window_writes_through() -> None:
    """``App._driver.write``: Textual has no public way to write a sequence (``App.bell`` uses the same). If this
    fails, Textual changed it: adapt ``polter/window/outer_terminal.py:write_raw``."""
    textual = version("textual")
    app = App[None]()
    assert hasattr(app, "_driver"), f"Textual {textual}: App._driver is gone (polter/window/outer_terminal.py)"
    async with app.run_test():
        driver = app._driver
        assert isinstance(driver, Driver) and callable(driver.write), f"Textual {textual}: App._driver.write changed"
        assert write_raw(app, "\x1b]9;x\x07") is False, "a headless app has no terminal to write to"
        written: list[str] = []
        notifier = TerminalNotifier(Delivery("osc9"), write=lambda _app, data: written.append(data))
        assert notifier.notify(app, "Polter: pane 1 is done") == "osc9" and written == [
            "\x1b]9;Polter: pane 1 is done\x07"
        ]
        assert TerminalNotifier(Delivery("bell")).notify(app, "x") == "bell"
