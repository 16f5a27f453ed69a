"""Who hears a session's messages in the window: the screens that subscribed, in order; what arrives before the
first one subscribed (the session's screen is made after the connection) waits for it."""

from __future__ import annotations

import contextlib

from textual.message import Message
from textual.message_pump import MessagePump

__all__ = ["SessionMessages"]


class SessionMessages:
    """The screens a :class:`~polter.window.remote.RemoteSession` posts to. Messages only one screen must act on (an
    ask, a host's question: one dialog each) go to the first subscriber only."""

    def __init__(self) -> None:
        self._targets: list[MessagePump] = []
        self._early: list[Message] = []

    def subscribe(self, target: MessagePump) -> None:
        """Post this session's messages to ``target`` too; the first subscriber also gets what arrived before it."""
        if target in self._targets:
            return
        self._targets.append(target)
        early, self._early = self._early, []
        for message in early:
            target.post_message(message)

    def unsubscribe(self, target: MessagePump) -> None:
        with contextlib.suppress(ValueError):
            self._targets.remove(target)

    def post(self, message: Message, *, first_only: bool = False) -> None:
        if not self._targets:
            self._early.append(message)
            return
        for target in self._targets[:1] if first_only else list(self._targets):
            target.post_message(message)
