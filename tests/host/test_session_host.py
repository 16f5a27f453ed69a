"""The session host over its real socket, driven by the protocol's own client: handshakes, windows that
come and go, sizes, scrollback, calls, what the host refuses, and the questions it asks."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import stat
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel
from support.panes import bash_spec
from support.session import hosted
from support.waiting import wait_until

from polter.errors import SessionError
from polter.host import panes as panes_module
from polter.wire import methods
from polter.host import windows as windows_module
from polter.wire import messages as wire
from polter.host.call_table import HOST_FAILURE
from polter.wire.client import SessionClient
from polter.host.session_host import SessionHost
from polter.wire.registry import SessionLock, known_sessions, session_files
from polter.window.mirror import MirrorScreen


class Window:
    """A window without a UI: the mirrors of the panes it was sent, and every event."""

    def __init__(self) -> None:
        self.mirrors: dict[str, MirrorScreen] = {}
        self.events: list[BaseModel] = []
        self.lost: list[str] = []
        self.client: SessionClient | None = None

    def on_event(self, event: BaseModel) -> None:
        self.events.append(event)
        if isinstance(event, wire.FrameEvent):
            mirror = self.mirrors.setdefault(event.pane, MirrorScreen(event.frame.columns, event.frame.lines))
            mirror.apply(event.frame)

    def text(self, pane: str) -> str:
        mirror = self.mirrors.get(pane)
        return "\n".join(line.rstrip() for line in mirror.display()) if mirror is not None else ""

    def type(self, pane: str, text: str) -> None:
        assert self.client is not None
        for character in text:
            self.client.send(
                wire.KeyInput(pane=pane, key="space" if character == " " else character, character=character)
            )
        self.client.send(wire.KeyInput(pane=pane, key="enter"))

    def of(self, kind: type[Any]) -> list[Any]:
        return [event for event in self.events if isinstance(event, kind)]


async def attach(host: SessionHost, *, size: tuple[int, int] | None = (80, 20)) -> Window:
    window = Window()
    window.client = await SessionClient.connect(host.files, on_event=window.on_event, on_lost=window.lost.append)
    if size is not None:
        for pane in window.client.state.panes:
            window.client.send(wire.ResizeInput(pane=pane.id, columns=size[0], lines=size[1]))
    return window


async def test_a_window_gets_the_session_and_every_pane_types_and_shows() -> None:
    async with hosted([bash_spec(), bash_spec()]) as host:
        await wait_until(lambda: host.ready)
        window = await attach(host)
        state = window.client.state  # type: ignore[union-attr]
        assert [pane.id for pane in state.panes] == ["p1", "p2"] and state.info.clients == 1
        await wait_until(lambda: "$" in window.text("p1") and "$" in window.text("p2"))
        window.type("p2", "echo in-two")
        await wait_until(lambda: "in-two\n$" in window.text("p2"), message=lambda: window.text("p2"))
        assert "in-two" not in window.text("p1")
        assert host.pane("p2").terminal.screen.display() == window.mirrors["p2"].display()  # type: ignore[union-attr]


async def test_two_windows_both_show_it_live_and_both_can_type() -> None:
    async with hosted([bash_spec()]) as host:
        one, two = await attach(host), await attach(host)
        await wait_until(lambda: "$" in one.text("p1") and "$" in two.text("p1"))
        one.type("p1", "echo from-one")
        await wait_until(lambda: "from-one\n$" in two.text("p1"), message=lambda: two.text("p1"))
        two.type("p1", "echo from-two")
        await wait_until(lambda: "from-two\n$" in one.text("p1"), message=lambda: one.text("p1"))
        assert host.info().clients == 2


async def test_the_window_that_typed_last_sets_the_size_and_the_program_sees_it() -> None:
    async with hosted([bash_spec()]) as host:
        wide = await attach(host, size=(100, 20))
        await wait_until(lambda: "$" in wide.text("p1"))
        narrow = await attach(host, size=(60, 10))
        await wait_until(lambda: host.panes[0].size == (60, 10))  # attaching makes it the latest
        narrow.type("p1", "stty size")
        await wait_until(lambda: "10 60" in narrow.text("p1"), message=lambda: narrow.text("p1"))
        wide.type("p1", "clear; stty size")
        await wait_until(lambda: "20 100" in wide.text("p1"), message=lambda: wide.text("p1"))
        assert wide.mirrors["p1"].columns == narrow.mirrors["p1"].columns == 100  # one screen, shown to both


async def test_a_window_that_comes_later_gets_what_was_written_meanwhile_and_the_scrollback() -> None:
    async with hosted([bash_spec()]) as host:
        first = await attach(host)
        await wait_until(lambda: "$" in first.text("p1"))
        first.type("p1", "seq 1 3000")
        await first.client.aclose()  # type: ignore[union-attr]
        await wait_until(lambda: not host.windows)
        screen = host.panes[0].terminal.screen
        await wait_until(lambda: screen is not None and "3000" in "\n".join(screen.display()))
        later = await attach(host, size=None)
        await wait_until(lambda: "3000\n$" in later.text("p1"), message=lambda: later.text("p1"))
        assert screen is not None
        rows = await later.client.call(  # type: ignore[union-attr]
            methods.HistoryParams(pane="p1", first=0, count=screen.history_pushed)
        )
        assert rows is not None and len(rows.rows) == screen.history_size >= 2980
        assert "".join(text for text, _ in rows.rows[-1]).strip() == screen.text(-1).strip()


async def test_a_window_that_stops_reading_is_skipped_and_caught_up_with_whole_screens(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(windows_module, "WINDOW_BUFFER_LIMIT", 1)  # anything the kernel did not take is "behind"
    async with hosted([bash_spec()]) as host:
        fast = await attach(host, size=(250, 80))
        await wait_until(lambda: "$" in fast.text("p1"))
        peer = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)  # a window that reads nothing for a while
        peer.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        peer.connect(str(host.files.socket))
        peer.sendall(wire.encode(wire.Hello()))
        await wait_until(lambda: len(host.windows) == 2 and all(window.attached for window in host.windows))
        [stalled] = [window for window in host.windows if not window.sizes]  # (the fast one gave its sizes)
        stalled.writer.get_extra_info("socket").setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        fast.type("p1", "seq 1 300000")
        await wait_until(lambda: "300000\n$" in fast.text("p1"), timeout=60, message=lambda: fast.text("p1"))
        assert stalled.behind == {"p1"}  # its frames were skipped, not buffered without bound
        assert stalled.writer.transport.get_write_buffer_size() < 1024 * 1024
        reader, writer = await asyncio.open_unix_connection(sock=peer, limit=wire.LINE_LIMIT)  # it reads again
        mirror: MirrorScreen | None = None
        while mirror is None or "300000" not in "\n".join(mirror.display()):
            message = wire.decode_host(await asyncio.wait_for(reader.readline(), 30))
            if isinstance(message, wire.FrameEvent):
                mirror = mirror or MirrorScreen(message.frame.columns, message.frame.lines)
                mirror.apply(message.frame)
        assert not stalled.behind  # caught up: a whole screen once its socket drained
        writer.close()


async def test_calls_that_fail_say_why_and_unknown_messages_are_ignored() -> None:
    async with hosted([bash_spec()]) as host:
        window = await attach(host)
        client = window.client
        assert client is not None
        with pytest.raises(SessionError, match="no method 'fly'"):
            await client.call(Fly())
        with pytest.raises(SessionError, match="no pane p9"):
            await client.call(methods.CloseParams(pane="p9"))
        client._writer.write(b'{"type": "teleport"}\n')  # noqa: SLF001  (a malformed message, on purpose)
        info = await client.call(methods.InfoParams())
        assert info.panes == 1 and info.name == host.name


class Fly(methods.CallParams[None]):
    """A method no host serves."""

    method = "fly"


class HistoryOfNumbers(methods.CallParams[None]):
    """``history`` with params that are not its own."""

    method = "history"
    pane: int


async def test_params_that_are_not_the_methods_are_refused_with_the_field_named() -> None:
    async with hosted([bash_spec()]) as host:
        window = await attach(host)
        assert window.client is not None
        with pytest.raises(SessionError, match=r"^history: pane: Input should be a valid string \(and 2 more\)$"):
            await window.client.call(HistoryOfNumbers(pane=1))


async def test_a_handler_that_fails_is_logged_and_answered_as_a_failure_not_a_refusal(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: object) -> object:
        raise KeyError("a bug")

    monkeypatch.setattr(panes_module, "encode_history", broken)
    async with hosted([bash_spec()]) as host:
        window = await attach(host)
        await wait_until(lambda: host.panes[0].terminal.screen is not None)
        assert window.client is not None
        with pytest.raises(SessionError) as refused:
            await window.client.call(methods.HistoryParams(pane="p1", first=0, count=1))
        assert str(refused.value) == HOST_FAILURE.format(method="history") and "a bug" not in str(refused.value)
        [record] = [record for record in caplog.records if record.name == "polter.host.call_table"]
        assert record.exc_info is not None and "a bug" in repr(record.exc_info[1])


async def test_the_host_serves_every_method_of_the_protocol_and_the_document_lists_them() -> None:
    async with hosted([bash_spec()]) as host:
        assert host.calls.methods == sorted(methods.METHODS)
    document = (Path(__file__).resolve().parents[2] / "docs" / "architecture.md").read_text()
    listed = re.search(r"<!-- methods -->(.*?)<!-- /methods -->", document, re.DOTALL)
    assert listed is not None, "docs/architecture.md lists the session protocol's methods between <!-- methods -->"
    assert sorted(re.findall(r"`(\w+)`", listed.group(1))) == sorted(methods.METHODS)


async def test_a_window_of_another_polter_version_is_refused_with_what_to_do() -> None:
    async with hosted([bash_spec()]) as host:
        reader, writer = await asyncio.open_unix_connection(str(host.files.socket))
        writer.write(json.dumps({"type": "hello", "protocol": 99, "version": "9.9.9", "attach": True}).encode() + b"\n")
        answer = wire.decode_host(await reader.readline())
        assert isinstance(answer, wire.Refused)
        assert "Polter 9.9.9 (protocol 99)" in answer.reason and f"polter kill {host.name}" in answer.reason
        writer.close()


async def test_the_socket_is_private_and_a_second_host_for_the_name_is_refused() -> None:
    async with hosted([bash_spec()]) as host:
        mode = stat.S_IMODE(host.files.socket.stat().st_mode)
        assert mode == 0o600 and stat.S_IMODE(host.files.folder.stat().st_mode) == 0o700
        with pytest.raises(SessionError, match="a session named test is already running"):
            SessionLock(session_files("test")).acquire()
        assert host.files.host_alive()
    assert not host.files.socket.exists() and not host.files.record.exists()
    assert known_sessions() == []


async def test_a_socket_left_by_a_killed_host_is_taken_over() -> None:
    files = session_files("left")
    files.socket.write_text("")  # what a killed host leaves: a socket nobody listens on
    assert not files.host_alive()
    async with hosted([bash_spec()], name="left") as host:
        window = await attach(host)
        await wait_until(lambda: "$" in window.text("p1"))


async def test_kill_ends_every_program_and_tells_the_windows() -> None:
    host = SessionHost(session_files("doomed"), None, [bash_spec()])
    await host.start()
    serving = asyncio.create_task(host.run())
    window = await attach(host)
    await wait_until(lambda: "$" in window.text("p1"))
    process = host.panes[0].terminal.process
    assert process is not None
    await window.client.call(methods.KillParams(reason="the test ends it"))  # type: ignore[union-attr]
    await asyncio.wait_for(serving, 30)
    assert [event.reason for event in window.of(wire.Ended)] == ["the test ends it"]
    assert not process.running and window.lost == []  # told, not lost
    assert not host.files.socket.exists() and not host.files.lock.exists()
    with pytest.raises(SessionError, match="cannot reach session doomed"):
        await SessionClient.connect(host.files)


async def test_the_last_pane_closed_ends_the_session() -> None:
    host = SessionHost(session_files("short"), None, [bash_spec()])
    await host.start()
    serving = asyncio.create_task(host.run())
    window = await attach(host)
    await wait_until(lambda: "$" in window.text("p1"))
    await window.client.call(methods.CloseParams(pane="p1"))  # type: ignore[union-attr]
    await asyncio.wait_for(serving, 30)
    assert window.of(wire.PaneRemoved) and "last pane" in window.of(wire.Ended)[0].reason


async def test_a_peer_of_another_user_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    async with hosted([bash_spec()]) as host:
        real = os.getuid()
        monkeypatch.setattr(os, "getuid", lambda: real + 1)  # the host now believes it runs as someone else
        with pytest.raises(SessionError, match="belongs to another user"):
            await SessionClient.connect(host.files)


async def test_an_ask_that_arrives_while_nobody_is_attached_waits_for_the_next_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The host is the gateway's controller whether or not a window is attached: the call waits, the
    next window gets the ask with the session and its answer decides the call."""
    from support.gateway import fixture_server, write_roles
    from support.workspace_app import shell_plans

    from polter.adapters.plugins import discover
    from polter.gateway.client import pane_client
    from polter.paths import config_dir
    from polter.launch.planning import Launch

    monkeypatch.setenv("PS1", "$ ")
    write_roles(config_dir() / "roles")
    launch = Launch(shell_plans("asker"), discover(entry_points=False), servers={"fixture": fixture_server()})
    async with hosted(launch=launch) as host:
        await wait_until(lambda: host.ready, timeout=60)
        agent = host.panes[0].agent
        assert agent is not None and not host.windows

        async def write() -> Any:
            async with pane_client("fixture", url=host.workspace.url, token=agent.token) as client:
                return await client.call_tool("write_note", {"text": "while away"})

        call = asyncio.create_task(write())
        await wait_until(lambda: host.workspace.asks.pending, timeout=30, message="the ask to reach the host")
        window = await attach(host)
        [ask] = window.client.state.asks  # type: ignore[union-attr]
        assert ask.name == "write_note" and ask.pane == "p1"
        await window.client.call(methods.AnswerParams(ask=ask.id, answer="allow_once"))  # type: ignore[union-attr]
        result = await asyncio.wait_for(call, 30)
        assert not result.is_error
        await wait_until(lambda: any(event.ask.id == ask.id for event in window.of(wire.AskClosedEvent)))


async def test_a_servers_form_that_waits_while_nobody_is_attached_is_shown_to_the_next_window(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An upstream's elicitation the pane's CLI could not show waits for the human in Polter's window; a window
    that attaches later gets it with the session (and shows it: its view of the session posts it as it came),
    and its answer is what the upstream hears."""
    from support.gateway import features_server, write_roles
    from support.workspace_app import shell_plans

    from polter.adapters.plugins import discover
    from polter.gateway.client import pane_client
    from polter.gateway.models import ElicitationReply
    from polter.paths import config_dir
    from polter.launch.planning import Launch
    from polter.window.remote import RemoteSession

    monkeypatch.setenv("PS1", "$ ")
    write_roles(config_dir() / "roles")
    form = {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
    launch = Launch(shell_plans("open"), discover(entry_points=False), servers={"features": features_server()})
    async with hosted(launch=launch) as host:
        await wait_until(lambda: host.ready, timeout=60)
        agent = host.panes[0].agent
        assert agent is not None and not host.windows

        async def elicit() -> Any:
            async with pane_client("features", url=host.workspace.url, token=agent.token) as client:
                return await client.call_tool("elicit", {"message": "Your name?", "schema": form})

        call = asyncio.create_task(elicit())
        await wait_until(lambda: host.workspace.forms.waiting, timeout=30, message="the form to reach the host")
        window = await attach(host)
        [waiting] = window.client.state.elicitations  # type: ignore[union-attr]
        assert (waiting.pane, waiting.server, waiting.message) == ("p1", "features", "Your name?")
        remote = await RemoteSession.connect(host.files)
        try:
            shown = [m.event for m in remote.messages._early if isinstance(m, RemoteSession.Event)]
            assert [e.elicitation.id for e in shown if isinstance(e, wire.ElicitationEvent)] == [waiting.id]
        finally:
            await remote.client.aclose()
        reply = ElicitationReply(action="accept", content={"name": "Dee"})
        await window.client.call(methods.AnswerElicitationParams(id=waiting.id, reply=reply))  # type: ignore[union-attr]
        result = await asyncio.wait_for(call, 30)
        assert json.loads(result.content[0].text) == {"action": "accept", "content": {"name": "Dee"}}
        await wait_until(lambda: window.of(wire.ElicitationClosedEvent), message="the form closed in the window")
        assert host.workspace.forms.waiting == {}
        assert (await attach(host)).client.state.elicitations == []  # type: ignore[union-attr]


# -- the host's yes/no questions: every window is asked, the first answer decides ----------------------


async def test_every_window_is_asked_and_the_first_answer_decides() -> None:
    async with hosted([bash_spec()]) as host:
        one, two = await attach(host), await attach(host)
        asking = asyncio.create_task(host.questions.ask("Setup", "Run it?", "npm ci", yes="Run it", no="Not now"))
        await wait_until(lambda: one.of(wire.Question) and two.of(wire.Question), message="the question in both")
        [question] = one.of(wire.Question)
        assert (question.text, question.detail, question.yes, question.no) == ("Run it?", "npm ci", "Run it", "Not now")
        assert two.client is not None and one.client is not None
        assert await two.client.call(methods.AnswerQuestionParams(id=question.id, answer=True)) is True
        assert await asking is True
        await wait_until(lambda: one.of(wire.QuestionClosed), message="the question closed in the other window")
        assert one.of(wire.QuestionClosed)[0].answer is True
        assert await one.client.call(methods.AnswerQuestionParams(id=question.id, answer=False)) is False  # over already
        assert host.questions.pending() == []


async def test_a_window_that_attaches_while_a_question_waits_is_asked() -> None:
    async with hosted([bash_spec()]) as host:
        asking = asyncio.create_task(host.questions.ask("Setup", "Run it?"))
        await wait_until(lambda: host.questions.pending(), message="the question to wait")
        late = await attach(host)
        assert late.client is not None
        [question] = late.client.state.questions  # in the state it attaches to
        await late.client.call(methods.AnswerQuestionParams(id=question.id, answer=False))
        assert await asking is False


async def test_nobody_attached_or_nobody_answering_is_no_answer() -> None:
    async with hosted([bash_spec()]) as host:
        host.questions.grace = 0.2
        assert await host.questions.ask("Setup", "Run it?") is None  # no window came within the grace
        window = await attach(host)
        host.questions.timeout = 0.3
        assert await host.questions.ask("Setup", "Run it?") is None  # a window, but no answer in time
        await wait_until(lambda: window.of(wire.QuestionClosed), message="the question's end")
        assert window.of(wire.QuestionClosed)[0].answer is None and host.questions.pending() == []
