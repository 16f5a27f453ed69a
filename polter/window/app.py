"""The Polter app: a window on a session. It connects to the session's host and shows its screen."""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Callable, Iterable
from typing import ClassVar

from textual import events
from textual.actions import SkipAction
from textual.app import SystemCommand
from textual.binding import Binding, BindingType
from textual.screen import Screen

from polter.errors import SessionError
from polter.window.echo_screen import EchoScreen
from polter.window.full_collections import FullCollections
from polter.window.plain_app import PlainApp
from polter.window.remote import RemoteSession, SessionTarget
from polter.window.session_screen import SessionScreen
from polter.wire import messages as wire
from polter.wire.client import SessionClient
from polter.wire.ssh import RelayLink, SshTarget, spawn_window_link

__all__ = ["PolterApp"]


AttentionHook = Callable[[str, wire.AttentionNotice, bool], object]
"""What else a window does when a pane of a session on another host needs the human (given the session's
``HOST:NAME``, and whether the terminal raises notifications itself): the command line runs this machine's
desktop notification and ``notify_command``."""


class PolterApp(PlainApp, inherit_bindings=False):
    """A window on the session ``target`` names (here, or on another host): its panes live in the session host,
    which keeps them running when this window closes (prefix then ``d`` detaches; ``polter attach`` brings them
    back).

    Textual's own ``ctrl+q``/``ctrl+c``/``ctrl+p`` bindings are not inherited: those keys belong to the
    programs in the panes (``ctrl+q`` also resumes a terminal paused by ``ctrl+s``, ``ctrl+p`` is the
    shell's previous command). Leave with the prefix key then ``q`` (detach, or end the programs); open
    the command palette with the prefix key then ``:`` or ``p``, or with the session's ``palette_key``."""

    TITLE = "Polter"
    ENABLE_COMMAND_PALETTE = False  # no ctrl+p binding from Textual; the palette itself stays usable (__init__)
    BINDINGS: ClassVar[list[BindingType]] = [
        # Textual's key for the palette, inert unless palette_key is set (the keymap moves it there).
        Binding("ctrl+p", "palette_key", "Commands", id="polter.palette", show=False, priority=True),
    ]

    def __init__(
        self,
        target: SessionTarget,
        *,
        on_remote_attention: AttentionHook | None = None,
        client: SessionClient | None = None,
    ) -> None:
        super().__init__()
        self.use_command_palette = True
        self.target = target
        self._client = client
        """A connection made before the window started (over ssh: the login may have asked for a password)."""
        self._link: RelayLink | None = None
        """The ssh to a session on another host, started as the window loads (:meth:`on_load`)."""
        self.on_remote_attention = on_remote_attention
        self.session: RemoteSession | None = None
        self.palette_key: str | None = None
        """A key that opens the command palette directly (``None``: only the prefix key then ``:``/``p``)."""
        self._session_screen: SessionScreen | None = None
        self._typed_ahead: list[events.Key | events.Paste] | None = []
        """Keys and pastes that came before the session's screen showed (typed as ``polter`` started), held for
        the pane it focuses; ``None`` once it shows."""
        self.garbage = FullCollections()
        """Full garbage collections when the human does not wait for an echo (polter/window/full_collections.py)."""

    @property
    def session_screen(self) -> SessionScreen:
        """The session's screen (once connected)."""
        if self._session_screen is None:
            raise RuntimeError("the window is not connected to its session yet")
        return self._session_screen

    async def on_load(self) -> None:
        """A session on another host: start its ssh now, before the window's driver and screens, which then start
        while ssh connects and the relay starts there."""
        if isinstance(self.target, SshTarget) and self._client is None:
            with contextlib.suppress(SessionError):  # (connecting again on mount says why, and ends the window)
                self._link = await spawn_window_link(self.target)

    async def on_mount(self) -> None:
        """Attach to the session and show it; once the panes are built, ``gc.freeze()`` the app's
        long-lived objects (DOM, CSS, caches) so that a full collection during a flood of output scans
        only what changed since (docs/terminal.md has the figures), and run full collections when the human
        does not wait for an echo (:class:`FullCollections`)."""
        try:
            self.session = await RemoteSession.connect(self.target, self._client, link=self._link)
        except SessionError as exc:
            self.exit(return_code=1, message=f"polter: {exc}")
            return
        state = self.session.client.state
        self.palette_key = state.palette_key
        if self.palette_key is not None:
            self.update_keymap({"polter.palette": self.palette_key})
        self._session_screen = SessionScreen(
            self.session, layout_mode=state.layout, prefix=state.prefix, active=state.active, zoomed=state.zoomed
        )
        await self.push_screen(self._session_screen)
        self.call_after_refresh(gc.freeze)
        self.garbage.start()
        self.set_interval(1.0, self.garbage.tick, name="full garbage collections")

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key):
            self.garbage.typed()
        if isinstance(event, events.Key | events.Paste) and self._typed_ahead is not None and self._holds_keys():
            event.stop()
            self._typed_ahead.append(
                events.Key(event.key, event.character) if isinstance(event, events.Key) else events.Paste(event.text)
            )
            return
        await super().on_event(event)

    def _holds_keys(self) -> bool:
        """Keys typed ahead are held while no pane has the keyboard, but a question asked before any pane showed
        (a worktree's setup command) takes its answer."""
        return self._session_screen is None or self.screen_stack[-1:] == [self._session_screen]

    async def on_session_screen_shown(self) -> None:
        """The session's screen is on top with a pane focused: what was typed before goes there, in order (handled
        here and now: posted, it would come after keys already queued behind this message)."""
        held, self._typed_ahead = self._typed_ahead or [], None
        for event in held:
            await super().on_event(event)

    def on_echo_screen_echo_drawn(self, _message: EchoScreen.EchoDrawn) -> None:
        self.garbage.echo_drawn()

    def on_app_focus(self) -> None:
        """The terminal has the focus again (terminals that report focus): the focused pane is looked at."""
        if self._session_screen is not None:
            self._session_screen.pane_focus.report_looking(True)

    def on_app_blur(self) -> None:
        """The terminal went to the background: every pane may need a notification now."""
        if self._session_screen is not None:
            self._session_screen.pane_focus.report_looking(False)

    def action_palette_key(self) -> None:
        """The direct palette key: opens the palette if one is configured, else the key goes on to
        the focused pane (``SkipAction``), so ``ctrl+p`` reaches the program by default."""
        if self.palette_key is None:
            raise SkipAction()
        self.action_command_palette()

    def get_system_commands(self, screen: Screen[object]) -> Iterable[SystemCommand]:
        """Textual's theme and screenshot commands, not its others: Polter's own "Leave…", "Keys and help" and
        "Zoom" replace its Quit, Keys (a panel of Textual's bindings) and Maximize, which would also take Escape
        from the pane's program to restore the pane."""
        yield SystemCommand("Theme", "Change the current theme", self.action_change_theme)
        yield SystemCommand(
            "Screenshot",
            "Save an SVG 'screenshot' of the current screen",
            lambda: self.set_timer(0.1, self.deliver_screenshot),
        )

    async def action_quit(self) -> None:
        """Quit (prefix then ``q``, or the palette's "Leave…"): detach or end the session, as the human chooses."""
        if self._session_screen is not None:
            self._session_screen.action_quit()
        else:
            self.exit()

    async def on_unmount(self) -> None:
        if self.session is not None and not self.session.client.closed.is_set():
            await self.session.detach()  # the window goes; the session stays
        gc.unfreeze()  # the objects become collectable again (matters when apps run one after another)
        self.garbage.stop()
