"""Desktop notifications and ``notify_command`` from the session host when no window is attached: a real D-Bus
session bus (``dbus-daemon``) with a notification service on it (``org.freedesktop.Notifications``, served here
with dbus-fast, as a desktop's notification daemon serves it), reached through desktop-notifier; and nothing
breaks where there is no bus or no service."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from dbus_fast.aio import MessageBus
from dbus_fast.service import ServiceInterface, method, signal
from support.gateway import write_roles
from support.session import hosted
from support.waiting import wait_until
from support.workspace_app import shell_plans

from polter.adapters.plugins import discover
from polter.paths import config_dir
from polter.launch.config import NotifySettings
from polter.wire.methods import LookingParams
from polter.host.desktop import DesktopNotifications, has_session_bus
from polter.launch.planning import Launch


class Notifications(ServiceInterface):
    """What a desktop's notification daemon serves on the session bus (the parts desktop-notifier uses)."""

    def __init__(self) -> None:
        super().__init__("org.freedesktop.Notifications")
        self.received: list[tuple[str, str, str]] = []

    @method()
    def Notify(  # noqa: N802 - the D-Bus method's name
        self,
        app_name: "s",
        replaces_id: "u",
        app_icon: "s",
        summary: "s",
        body: "s",
        actions: "as",  # noqa: F821
        hints: "a{sv}",
        expire_timeout: "i",  # noqa: F821
    ) -> "u":  # noqa: F821
        self.received.append((app_name, summary, body))
        return len(self.received)

    @method()
    def GetCapabilities(self) -> "as":  # noqa: N802, F821
        return ["body"]

    @method()
    def GetServerInformation(self) -> "ssss":  # noqa: N802, F821
        return ["polter-test", "polter", "1", "1.2"]

    @method()
    def CloseNotification(self, identifier: "u"):  # type: ignore[no-untyped-def]  # noqa: N802, F821
        return None

    @signal()
    def NotificationClosed(self) -> "uu":  # noqa: N802, F821
        return [0, 0]

    @signal()
    def ActionInvoked(self) -> "us":  # noqa: N802, F821
        return [0, ""]


@pytest_asyncio.fixture
async def session_bus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[str]:
    """A private D-Bus session bus; ``DBUS_SESSION_BUS_ADDRESS`` points at it."""
    daemon = shutil.which("dbus-daemon")
    assert daemon is not None, "dbus-daemon is missing: make system-tools installs it (Debian's dbus-daemon)"
    address = f"unix:path={tmp_path / 'bus'}"
    process = subprocess.Popen([daemon, "--session", "--nofork", f"--address={address}", "--print-address"],
                               stdout=subprocess.PIPE, text=True)  # fmt: skip
    assert process.stdout is not None and process.stdout.readline().startswith("unix:")
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
    try:
        yield address
    finally:
        process.terminate()
        process.wait(timeout=20)


@pytest_asyncio.fixture
async def notification_service(session_bus: str) -> AsyncIterator[Notifications]:
    bus = await MessageBus(bus_address=session_bus).connect()
    service = Notifications()
    bus.export("/org/freedesktop/Notifications", service)
    await bus.request_name("org.freedesktop.Notifications")
    try:
        yield service
    finally:
        bus.disconnect()


async def test_a_desktop_notification_reaches_the_notification_service(notification_service: Notifications) -> None:
    desktop = DesktopNotifications()
    assert desktop.available
    assert await desktop.send("Polter: pane 2 (reviewer) waits for you", "asks to use Bash")
    assert notification_service.received == [("Polter", "Polter: pane 2 (reviewer) waits for you", "asks to use Bash")]


async def test_an_agents_words_are_not_markup_in_the_notification(notification_service: Notifications) -> None:
    """The body is markup to most notification daemons: what the CLI said goes escaped, the summary as it is."""
    said = 'waits: <a href="https://example.invalid">approve</a> <img src="/etc/passwd"/> & <b>now</b>'
    assert await DesktopNotifications().send("Polter: pane 2 <b>", said)
    [(_, summary, body)] = notification_service.received
    assert summary == "Polter: pane 2 <b>"
    assert body == (
        'waits: &lt;a href="https://example.invalid"&gt;approve&lt;/a&gt; &lt;img src="/etc/passwd"/&gt; &amp; '
        "&lt;b&gt;now&lt;/b&gt;"
    )


async def test_no_bus_or_no_service_breaks_nothing(
    session_bus: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level("INFO", logger="polter.host.desktop")
    desktop = DesktopNotifications()
    assert not await desktop.send("t", "no notification daemon on this bus")
    assert not await desktop.send("t", "again")
    assert sum("desktop notification" in record.getMessage() for record in caplog.records) == 1, "logged once"
    monkeypatch.delenv("DBUS_SESSION_BUS_ADDRESS")
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(Path(session_bus.removeprefix("unix:path=")).parent / "nowhere"))
    assert not has_session_bus() and not DesktopNotifications().available
    assert not await DesktopNotifications().send("t", "an SSH login: no bus at all")


NOTIFIED = """\
import json, os, sys
with open(sys.argv[1], "a") as log:
    log.write(json.dumps({"args": sys.argv[2:], "env": {k: v for k, v in os.environ.items() if k.startswith("POLTER_")}}) + "\\n")
print("told the phone")
"""


async def test_with_no_window_attached_the_host_notifies_the_desktop_and_runs_notify_command(
    notification_service: Notifications,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A pane whose agent works, then is done, while nobody is attached (the session outlives its windows)."""
    monkeypatch.setenv("PS1", "$ ")
    write_roles(config_dir() / "roles", {"coder": '[servers]\ndefault = "allow"\n[tools]\ndefault = "allow"\n'
                                                  '[skills]\ndefault = "allow"\n'})  # fmt: skip
    log, script = tmp_path / "notified.jsonl", tmp_path / "notified.py"
    script.write_text(NOTIFIED)
    notify = NotifySettings(command=[sys.executable, str(script), str(log)], quiet=0.5)
    launch = Launch(shell_plans("coder"), discover(entry_points=False), notify=notify)
    caplog.set_level("INFO", logger="polter.host.notify_command")
    async with hosted(launch=launch) as host:
        await wait_until(lambda: host.ready, timeout=60, message="the pane")
        [pane] = host.panes
        pane.resize(100, 30)  # the size its window gave it before it detached
        await wait_until(lambda: pane.terminal.running, message="the shell")
        assert not [window for window in host.windows if window.attached]
        pane.terminal.send(b"for i in 1 2 3 4 5 6 7 8; do echo tick $i; sleep 0.25; done; echo $((40+2))\r")

        def runs() -> list[dict[str, Any]]:
            return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

        await wait_until(lambda: runs() and notification_service.received, timeout=30,
                         message=lambda: f"{runs()} {notification_service.received}")  # fmt: skip
        [run] = runs()
        assert run["args"] == ["1", "coder shell", "coder", "done", ""]
        told = {name: value for name, value in run["env"].items() if name in NOTIFY_VARIABLES}
        assert told == {
            "POLTER_SESSION": "test", "POLTER_PANE": "1", "POLTER_PANE_ID": pane.id, "POLTER_PANE_TITLE": "coder shell",
            "POLTER_ROLE": "coder", "POLTER_ADAPTER": "shell", "POLTER_EVENT": "done", "POLTER_EXCERPT": "",
        }  # fmt: skip
        assert notification_service.received == [("Polter", "Polter: pane 1 (coder shell, coder) is done", "")]
        await wait_until(lambda: any("notify_command: told the phone" in r.getMessage() for r in caplog.records),
                         message="the command's output in the host's log")  # fmt: skip


NOTIFY_VARIABLES = frozenset({"POLTER_SESSION", "POLTER_PANE", "POLTER_PANE_ID", "POLTER_PANE_TITLE", "POLTER_ROLE",
                              "POLTER_ADAPTER", "POLTER_EVENT", "POLTER_EXCERPT"})  # fmt: skip


async def test_an_attached_window_in_the_background_gets_the_desktop_notification_only_if_its_terminal_cannot(
    notification_service: Notifications, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A terminal that shows OSC 9/777/99 raises the desktop notification itself: the host sends none while it
    is attached. A terminal that only rings the bell, in the background, gets the desktop's."""
    from polter.wire import messages as wire
    from polter.wire.client import SessionClient

    monkeypatch.setenv("PS1", "$ ")
    write_roles(config_dir() / "roles", {"coder": '[servers]\ndefault = "allow"\n[tools]\ndefault = "allow"\n'
                                                  '[skills]\ndefault = "allow"\n'})  # fmt: skip
    log, script = tmp_path / "notified.jsonl", tmp_path / "notified.py"
    script.write_text(NOTIFIED)
    notify = NotifySettings(command=[sys.executable, str(script), str(log)], quiet=0.5)
    launch = Launch(shell_plans("coder"), discover(entry_points=False), notify=notify)
    work = b"for i in 1 2 3 4 5 6; do echo tick $i; sleep 0.25; done; echo $((40+2))\r"

    def runs() -> int:
        return len(log.read_text().splitlines()) if log.exists() else 0

    async with hosted(launch=launch) as host:
        await wait_until(lambda: host.ready, timeout=60, message="the pane")
        [pane] = host.panes
        pane.resize(100, 30)
        await wait_until(lambda: pane.terminal.running, message="the shell")
        for notifies, told in ((True, 0), (False, 1)):  # a window whose terminal shows OSC 9, then one that rings
            window = await SessionClient.connect(host.files, on_event=lambda event: None)
            try:
                await window.call(LookingParams(pane=None, focused=False, notifies=notifies))
                before = runs()
                window.send(wire.PasteInput(pane=pane.id, text=work.decode().rstrip("\r")))
                window.send(wire.KeyInput(pane=pane.id, key="enter"))
                await wait_until(lambda: runs() > before, timeout=30, message="notify_command")  # noqa: B023
            finally:
                await window.aclose()
            if told:
                await wait_until(lambda: notification_service.received, message="the desktop notification")
        assert len(notification_service.received) == 1
        pane.terminal.send(work)  # nobody attached: the desktop again, after the one before (the bus keeps order)
        await wait_until(lambda: len(notification_service.received) == 2, timeout=30, message="the desktop again")
