"""Knowing when an agent needs you, as a user lives it in a window: a pane that starts waiting while another is
focused is told once (one terminal notification sequence, one ``notify_command`` run with the pane's number,
title, role, the event and why), the focused pane is not, a muted pane is not, the waiting pane's header stands
out, the palette lists it with why, and prefix then ``n`` goes to it.

The panes are shells under a role that asks before ``fixture/write_note`` (the real gateway, the real ask): a
pane whose call waits for your answer is a pane that waits for you. The window's terminal is headless here, so
its notifier writes into a list (the real terminal path is tested through a PTY in ``tests/host``).
"""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from support.gateway import fixture_server
from support.waiting import wait_until
from support.workspace_app import agent_of, badges, host_of, palette, panes, screen, shell_plans, workspace_app
from textual import events

from polter.gateway.client import pane_client
from polter.launch.config import NotifySettings, load_session
from polter.window.ask_screen import AskScreen
from polter.window.outer_terminal import Delivery, TerminalNotifier
from polter.window.pane import PaneWidget

NOTIFIED = """\
import json, os, sys
with open(sys.argv[1], "a") as log:
    log.write(json.dumps({"args": sys.argv[2:], "env": {k: v for k, v in os.environ.items() if k.startswith("POLTER_")}}) + "\\n")
"""


def runs(log: Path) -> list[list[str]]:
    return [json.loads(line)["args"] for line in log.read_text().splitlines()] if log.exists() else []


async def test_a_waiting_pane_is_told_once_to_whoever_does_not_look_at_it(monkeypatch: Any, tmp_path: Path) -> None:
    log, script = tmp_path / "notified.jsonl", tmp_path / "notified.py"
    script.write_text(NOTIFIED)
    notify = NotifySettings(command=[sys.executable, str(script), str(log)], desktop=False, quiet=0.5)
    servers = {"fixture": fixture_server()}
    async with workspace_app(monkeypatch, shell_plans("asker", "asker"), servers=servers, notify=notify) as (
        app,
        pilot,
    ):
        one, two = panes(app)
        host = host_of(app)
        sent: list[str] = []
        screen(app).notices.terminal_notifier = TerminalNotifier(Delivery("osc9"), write=lambda _app, data: sent.append(data))
        calls: list[asyncio.Task[Any]] = []

        async def looking_at(pane: PaneWidget) -> None:
            pane.terminal.focus()
            await wait_until(lambda: [w.looking_at for w in host.windows if w.attached] == [pane.remote.id],
                             message="the host to know where the human looks")  # fmt: skip

        async def ask_from(pane: PaneWidget, text: str) -> None:
            """The pane's agent calls a tool its role asks about; the modal is put off (escape): it stays pending."""
            token = agent_of(app, pane).token

            async def call() -> Any:
                async with pane_client("fixture", url=host.workspace.url, token=token) as client:
                    return await client.call_tool("write_note", {"text": text})

            calls.append(asyncio.create_task(call()))
            await wait_until(lambda: isinstance(app.screen, AskScreen) and app.screen.armed, message="the ask modal")
            await pilot.press("escape")
            await wait_until(lambda: not isinstance(app.screen, AskScreen), message="the modal put off")
            await wait_until(lambda: pane.waiting_since is not None, message="the pane's wait to settle")

        async def deny_asks_of(pane: PaneWidget) -> None:
            for ask in list(host.workspace.asks.pending.values()):
                if ask.pane == pane.remote.id:
                    await host.workspace.client.answer(ask.id, "deny")
            await wait_until(lambda: pane.waiting_since is None, message="the pane's wait to end")

        await looking_at(one)
        await ask_from(two, "first")  # pane 2 waits while pane 1 is focused: told, once
        await wait_until(lambda: len(runs(log)) == 1, message=lambda: f"one notify_command run, not {runs(log)}")
        assert runs(log) == [["2", "asker shell", "asker", "waiting", "asks to use fixture/write_note"]]
        assert sent == ["\x1b]9;Polter: pane 2 (asker shell, asker) waits for you: asks to use fixture/write_note\x07"]
        assert two.has_class("-waiting") and not one.has_class("-waiting")
        assert badges(two)["state"] == "waiting for you"

        await palette(pilot, ("waiting: pane 2", "Waiting: pane 2 (Shell, asker): asks to use fixture/write_note"))
        assert screen(app).active_pane is two, "the palette's waiting list goes to the pane"
        await looking_at(one)
        await pilot.press("ctrl+b", "n")  # prefix then n: the pane that waits, and its ask put off shows again
        await wait_until(lambda: screen(app).active_pane is two, message="prefix n to focus pane 2")
        await wait_until(lambda: isinstance(app.screen, AskScreen) and app.screen.armed, message="pane 2's ask again")
        assert app.screen.ask.pane == two.remote.id
        await pilot.press("escape")
        await wait_until(lambda: not isinstance(app.screen, AskScreen), message="the modal put off again")
        await wait_until(lambda: [w.looking_at for w in host.windows] == [two.remote.id], message="looking at 2")

        await deny_asks_of(two)
        await ask_from(two, "second")  # a new wait of the focused pane in a focused window: nobody is told
        await palette(pilot, ("mute pane 1", "Mute pane 1 (Shell, asker)"))
        await wait_until(lambda: badges(one).get("muted") == "muted", message="pane 1 muted")
        assert [pane.notify for pane in load_session().panes] == [False, True], "--restore keeps it muted"
        await ask_from(one, "third")  # muted: nobody is told
        await looking_at(one)
        await ask_from(two, "fourth")  # pane 2 has waited all along: no second notice for the same wait

        # The terminal goes to the background: now even the focused pane is told (once pane 1 is unmuted).
        await palette(pilot, ("unmute pane 1", "Unmute pane 1 (Shell, asker)"))
        await wait_until(lambda: "muted" not in badges(one), message="pane 1 unmuted")
        await deny_asks_of(one)
        app.post_message(events.AppBlur())
        await wait_until(lambda: [w.app_focused for w in host.windows] == [False], message="the terminal in the back")
        await ask_from(one, "fifth")
        await wait_until(lambda: len(runs(log)) == 2, message=lambda: f"a second run, not {runs(log)}")
        assert [run[:4] for run in runs(log)] == [
            ["2", "asker shell", "asker", "waiting"],
            ["1", "asker shell", "asker", "waiting"],
        ]
        assert len(sent) == 2 and sent[1].startswith("\x1b]9;Polter: pane 1 (asker shell, asker) waits for you")
        await deny_asks_of(one)
        await deny_asks_of(two)
        await asyncio.gather(*calls, return_exceptions=True)
