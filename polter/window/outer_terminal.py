"""Telling the terminal Polter runs in that a pane needs the human: a notification sequence the terminal turns
into a desktop notification (OSC 9, OSC 777, OSC 99), else the bell.

How a window decides (``notify_terminal = "auto"`` in ``polter.toml``; any other value forces one way), from
its environment, first match wins:

======================================================  =====================================================
the terminal, recognised by                             what the window writes
======================================================  =====================================================
kitty: ``$KITTY_WINDOW_ID``, ``TERM=xterm-kitty``       OSC 99 (kitty's notification protocol)
iTerm2: ``TERM_PROGRAM=iTerm.app``, ``$ITERM_SESSION_ID``,  OSC 9
``LC_TERMINAL=iTerm2`` (SSH passes ``LC_*`` on)
WezTerm: ``TERM_PROGRAM=WezTerm``, ``$WEZTERM_PANE``,     OSC 777 (``notify;title;body``)
``TERM=wezterm``
Ghostty: ``TERM_PROGRAM=ghostty``, ``TERM=xterm-ghostty``,  OSC 777
``$GHOSTTY_RESOURCES_DIR``
foot: ``TERM=foot``, ``foot-extra``                     OSC 777
Windows Terminal (``$WT_SESSION``), ConEmu              the bell: their OSC 9 means something else (progress,
(``$ConEmuPID``)                                        ConEmu's own commands)
anything else (VS Code, Apple Terminal, GNOME Terminal,  the bell (each terminal shows it its way: a sound, a
Konsole, xterm, Alacritty, an unknown SSH client...)     flash, an urgent window, a badge)
======================================================  =====================================================

Inside tmux (``$TMUX``) ``TERM`` and ``TERM_PROGRAM`` are tmux's; the terminal outside is recognised by the
other variables above (tmux keeps the environment it was started with), and the sequence goes through tmux's
DCS passthrough (``ESC P tmux; ... ESC \\``) when tmux allows it (``set -g allow-passthrough on``, tmux 3.3+);
otherwise the bell, which tmux passes on to the outer terminal (or shows, per its ``bell-action``).

Textual has no public API for writing raw sequences beyond :meth:`App.bell`: :func:`write_raw` is the one place
Polter writes to the driver (``App._driver.write``), and ``tests/window/test_outer_terminal.py`` fails naming the
Textual version if that changes.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal

from textual.app import App

from polter.wire.options import TerminalNotification

__all__ = ["Delivery", "Method", "TerminalNotifier", "choose_delivery", "notification_sequence", "write_raw"]

Method = Literal["osc9", "osc777", "osc99", "bell", "off"]

TEXT_LIMIT: Final = 240
"""Characters of a notification's text (terminals cut or drop longer ones)."""


@dataclass(frozen=True)
class Delivery:
    """How to tell the terminal: ``method``, wrapped for tmux's passthrough when ``tmux``; ``why`` in words."""

    method: Method
    tmux: bool = False
    why: str = ""


def _terminal_method(env: Mapping[str, str], *, own_term: bool) -> tuple[Method, str]:
    """The method for the terminal the environment names (``own_term``: TERM and TERM_PROGRAM are its own)."""
    term = env.get("TERM", "") if own_term else ""
    program = env.get("TERM_PROGRAM", "") if own_term else ""
    if env.get("WT_SESSION") or env.get("ConEmuPID"):
        return "bell", "Windows Terminal or ConEmu (their OSC 9 means progress or commands)"
    if env.get("KITTY_WINDOW_ID") or term == "xterm-kitty":
        return "osc99", "kitty"
    if program == "iTerm.app" or env.get("ITERM_SESSION_ID") or env.get("LC_TERMINAL") == "iTerm2":
        return "osc9", "iTerm2"
    if program == "WezTerm" or env.get("WEZTERM_PANE") or term == "wezterm":
        return "osc777", "WezTerm"
    if program == "ghostty" or term == "xterm-ghostty" or env.get("GHOSTTY_RESOURCES_DIR"):
        return "osc777", "Ghostty"
    if term in ("foot", "foot-extra"):
        return "osc777", "foot"
    return "bell", f"no notification sequence known for {program or term or 'this terminal'}"


def tmux_passthrough(env: Mapping[str, str]) -> bool:
    """Whether the tmux this runs in passes escape sequences on to its terminal (``allow-passthrough``)."""
    try:
        result = subprocess.run(
            ["tmux", "show-options", "-gqv", "allow-passthrough"],
            capture_output=True,
            text=True,
            timeout=3,
            env=dict(env),
            stdin=subprocess.DEVNULL,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return result.returncode == 0 and result.stdout.strip() in ("on", "all")


def choose_delivery(
    setting: TerminalNotification = "auto",
    environ: Mapping[str, str] | None = None,
    *,
    passthrough: Callable[[Mapping[str, str]], bool] = tmux_passthrough,
) -> Delivery:
    """How this window tells its terminal (see the module's table); ``setting`` other than auto forces it."""
    env = os.environ if environ is None else environ
    in_tmux = bool(env.get("TMUX"))
    if setting != "auto":
        tmux = in_tmux and setting not in ("bell", "off")
        return Delivery(setting, tmux, "notify_terminal in polter.toml")
    method, why = _terminal_method(env, own_term=not in_tmux)
    if not in_tmux or method == "bell":
        return Delivery(method, False, why + (" (inside tmux)" if in_tmux else ""))
    if passthrough(env):
        return Delivery(method, True, f"{why} outside tmux, through tmux's passthrough")
    return Delivery("bell", False, f"{why} outside tmux, but tmux's allow-passthrough is off")


def _clean(text: str) -> str:
    words = " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())
    return words if len(words) <= TEXT_LIMIT else words[: TEXT_LIMIT - 1] + "…"


def notification_sequence(method: Method, title: str, body: str = "", *, tmux: bool = False) -> str:
    """The escape sequence that asks the terminal for a notification (``""`` for the bell and off: those are not
    sequences of their own)."""
    title, body = _clean(title), _clean(body)
    text = f"{title}: {body}" if body else title
    if method == "osc9":
        sequence = f"\x1b]9;{text}\x07"
    elif method == "osc777":
        sequence = f"\x1b]777;notify;{title.replace(';', ',')};{body or title}\x07"
    elif method == "osc99":
        sequence = f"\x1b]99;;{text}\x1b\\"
    else:
        return ""
    if tmux:
        sequence = "\x1bPtmux;" + sequence.replace("\x1b", "\x1b\x1b") + "\x1b\\"
    return sequence


def write_raw(app: App[Any], data: str) -> bool:
    """Write ``data`` to the app's terminal as it is; whether it went anywhere (a headless app has no terminal).
    Textual 8.2 has no public API for this (``App.bell`` writes BEL the same way)."""
    driver = app._driver
    if app.is_headless or driver is None:
        return False
    driver.write(data)
    return True


class TerminalNotifier:
    """Tells one window's terminal about a pane that needs the human, the way :func:`choose_delivery` decided.
    ``write`` puts a sequence on the terminal (:func:`write_raw`; a test can hold on to what is written)."""

    def __init__(self, delivery: Delivery, write: Callable[[App[Any], str], object] = write_raw) -> None:
        self.delivery = delivery
        self.write = write

    def notify(self, app: App[Any], title: str, body: str = "") -> Method:
        """Send it; the method used."""
        method = self.delivery.method
        if method == "off":
            return method
        if method == "bell":
            app.bell()
            return method
        self.write(app, notification_sequence(method, title, body, tmux=self.delivery.tmux))
        return method
