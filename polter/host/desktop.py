"""Desktop notifications from the session host, through the machine's notification service: desktop-notifier
(D-Bus ``org.freedesktop.Notifications`` on Linux and the BSDs, the Notification Center on macOS, WinRT on
Windows). Where there is no service (an SSH login has no D-Bus session bus; a container has no daemon), nothing
is sent and nothing breaks: the first failure is logged once and the rest quietly."""

from __future__ import annotations

import html
import logging
import os
import sys
from pathlib import Path
from typing import Any

__all__ = ["DesktopNotifications", "has_session_bus"]

logger = logging.getLogger(__name__)

APP_NAME = "Polter"


def has_session_bus(environ: dict[str, str] | None = None) -> bool:
    """Whether a D-Bus session bus can be reached (Linux, the BSDs): its address, or the user's bus socket."""
    env = os.environ if environ is None else environ
    if env.get("DBUS_SESSION_BUS_ADDRESS"):
        return True
    runtime = env.get("XDG_RUNTIME_DIR")
    return runtime is not None and runtime != "" and Path(runtime, "bus").is_socket()


class DesktopNotifications:
    """Sends desktop notifications; :meth:`send` says whether the service took one. A failure is logged once per
    run of failures, in one line (desktop-notifier's own warning, with its traceback, is not wanted in the log of a
    host that may fail this way every few minutes)."""

    def __init__(self) -> None:
        self._notifier: Any = None
        self._warned = False

    @property
    def available(self) -> bool:
        if sys.platform in ("darwin", "win32"):
            return True
        return has_session_bus()

    async def send(self, title: str, message: str) -> bool:
        """``message`` is often the CLI's own words (why it waits): a D-Bus notification's body is markup to the
        daemons that read it so (GNOME's, KDE's, dunst, mako), where an agent's ``<a href=...>`` would be a link
        and ``<img src=...>`` a file read, so it goes escaped there (the summary is plain text by the spec)."""
        if not self.available:
            self._note("no desktop notification service here (no D-Bus session bus)")
            return False
        dispatched: list[bool] = []
        try:
            if self._notifier is None:
                # lazy: the host's memory until a desktop notification is sent
                from desktop_notifier import DesktopNotifier

                logging.getLogger("desktop_notifier").setLevel(logging.ERROR)
                self._notifier = DesktopNotifier(app_name=APP_NAME)
            body = message if sys.platform in ("darwin", "win32") else html.escape(message, quote=False)
            await self._notifier.send(title=title, message=body, on_dispatched=lambda: dispatched.append(True))
        except Exception as exc:  # noqa: BLE001 - a missing or broken service must not harm the session
            self._note(f"the desktop notification could not be sent: {exc}")
            return False
        if not dispatched:
            self._note("the desktop notification service did not take the notification")
            return False
        self._warned = False
        return True

    def _note(self, text: str) -> None:
        if not self._warned:
            self._warned = True
            logger.info("%s (until one goes out again, further failures are not logged)", text)
