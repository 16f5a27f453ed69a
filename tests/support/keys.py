"""Typing into a Textual app as a person's keys arrive: a burst of key events, then one wait for the app.

``Pilot.press`` waits for the whole process to go idle after every key (at least 40 ms a key, up to two seconds
when the process is busy, as a pane's program and its screen engine keep it): typing a shell command through it
took seconds, and most of a window test's time. Here the keys go to the app's message queue one after another,
as its driver puts them there, and are handled in order; one wait for the app to be idle follows.
"""

from __future__ import annotations

from typing import Any

from support.privates import key_for_character
from textual import events
from textual.pilot import Pilot

__all__ = ["type_keys"]


async def type_keys(pilot: Pilot[Any], text: str, *, enter: bool = False) -> None:
    """``text`` typed (and Enter after it, with ``enter``), each character as the key Textual names it."""
    app = pilot.app
    for character in text:
        key = character if character.isalnum() else key_for_character(character)
        app.post_message(events.Key(key, character))
    if enter:
        app.post_message(events.Key("enter", "\r"))
    await pilot.pause()
