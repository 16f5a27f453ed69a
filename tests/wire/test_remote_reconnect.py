"""A window on another host's session across a dropped link, over a real sshd whose login reaches this test's own
session host (the same Polter folders): asks made and answered meanwhile, the host's questions decided meanwhile
in another window; and a session whose login's runtime dir logind removed, still listed, attached and killed."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import tempfile
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path

import pytest
from support.panes import BASH, bash_spec
from support.polter_terminal import COLUMNS, LINES, polter
from support.session import hosted
from support.sshd import VENV_BIN, SshHost, end_control_master, relay_links, ssh_client
from support.ui import make_ask
from support.waiting import wait_until

from polter.wire import methods
from polter.wire.client import SessionClient
from polter.wire.ssh import SshTarget, relay_request
from polter.wire.ssh import connect as connect_over_ssh
from polter.window.app import PolterApp
from polter.window.confirm import ConfirmScreen
from polter.window.remote import RemoteSession

pytestmark = pytest.mark.e2e

BASE_PATH = f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin"


@asynccontextmanager
async def sshd_login(folder: Path, name: str, env: dict[str, str]) -> AsyncIterator[str]:
    """An sshd whose login ``name`` has ``env``, and this machine's ``ssh`` pointed at it; the host's name."""
    (folder / "home").mkdir(parents=True, exist_ok=True)
    sshd = SshHost(folder / "sshd", {name: {"HOME": str(folder / "home"), "PATH": BASE_PATH, "PS1": "$ ", **env}})
    sshd.start()
    old_path = os.environ["PATH"]
    os.environ["PATH"] = f"{ssh_client(folder / 'client', [sshd])}:{old_path}"
    try:
        yield name
    finally:
        end_control_master(name)
        os.environ["PATH"] = old_path
        sshd.stop()


@pytest.fixture
async def here(tmp_path: Path) -> AsyncIterator[str]:
    """``ssh here polter relay NAME`` reaches the sessions this test hosts (its login has this test's folders)."""
    names = ("POLTER_CONFIG_DIR", "POLTER_STATE_DIR", "POLTER_RUNTIME_DIR", "POLTER_WORKTREES_DIR")
    async with sshd_login(tmp_path, "here", {name: os.environ[name] for name in names}) as host:
        yield host


@asynccontextmanager
async def remote_window(target: SshTarget) -> AsyncIterator[tuple[PolterApp, RemoteSession]]:
    app = PolterApp(target)
    async with app.run_test(size=(COLUMNS, LINES)):
        await wait_until(lambda: app._session_screen is not None and app._session_screen.is_mounted, timeout=60)
        yield app, app.session_screen.session


def link_down_until(session: RemoteSession, monkeypatch: pytest.MonkeyPatch) -> asyncio.Event:
    """Kill the window's ssh (its relay on the host ends: the session sees a window leave) and hold its
    reconnection until the event returned is set."""
    gate = asyncio.Event()
    opening = session.open_client

    async def held() -> SessionClient:
        await gate.wait()
        return await opening()

    monkeypatch.setattr(session, "open_client", held)
    links = relay_links()
    assert links, "the window's ssh"
    for link in links:
        os.kill(link, signal.SIGKILL)
    return gate


def notices(app: PolterApp) -> list[str]:
    return [str(notification.message) for notification in app._notifications]


async def test_asks_wait_across_a_dropped_link_and_their_answers_reach_the_host(
    here: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with hosted([bash_spec()], name="asking") as host:
        answered: list[tuple[str, str]] = []
        monkeypatch.setattr(host.workspace, "answer", lambda ask_id, answer: answered.append((ask_id, answer)))
        async with remote_window(SshTarget(here, "asking")) as (app, session):
            host.workspace.asks.arrived(make_ask(id="before", pane="p1"))
            await wait_until(lambda: app.session_screen.asks.queue.get("before") is not None, message="the first ask")
            gate = link_down_until(session, monkeypatch)
            await wait_until(lambda: session.reconnection.active, message="the window to see the link down")
            await wait_until(
                lambda: any("the ssh to here was killed (SIGKILL)" in notice for notice in notices(app)),
                message=lambda: f"the notice saying what ended: {notices(app)}",
            )
            assert any("What you type until then is not sent." in notice for notice in notices(app)), notices(app)
            session.asks.answer("before", "allow_once")  # answered while the link is down
            host.workspace.asks.arrived(make_ask(id="during", pane="p1"))  # asked while the link is down
            gate.set()
            await wait_until(lambda: not session.reconnection.active, timeout=60, message="attached again")
            await wait_until(lambda: answered == [("before", "allow_once")], message=lambda: f"the answer: {answered}")
            await wait_until(lambda: app.session_screen.asks.queue.get("during") is not None, message="the new ask")
            session.asks.answer("during", "deny")
            await wait_until(lambda: answered[1:] == [("during", "deny")], message=lambda: f"answers: {answered}")


async def test_questions_decided_in_another_window_while_the_link_was_down_are_gone_after_it(
    here: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with hosted([bash_spec()], name="asked") as host:
        async with remote_window(SshTarget(here, "asked")) as (app, session):
            first = asyncio.create_task(host.questions.ask("Setup", "Run the first?"))
            await wait_until(lambda: isinstance(app.screen, ConfirmScreen), message="the question's dialog")
            gate = link_down_until(session, monkeypatch)
            await wait_until(lambda: session.reconnection.active, message="the window to see the link down")
            other = await SessionClient.connect(host.files, on_event=lambda event: None)  # a window here
            try:
                [question] = other.state.questions
                assert await other.call(methods.AnswerQuestionParams(id=question.id, answer=True)) is True
                assert await first is True
                second = asyncio.create_task(host.questions.ask("Setup", "Run the second?"))
                await wait_until(lambda: len(host.questions.pending()) == 1, message="the second question")
                gate.set()
                await wait_until(lambda: not session.reconnection.active, timeout=60, message="attached again")
                await wait_until(
                    lambda: isinstance(app.screen, ConfirmScreen) and app.screen.question == "Run the second?",
                    message=lambda: f"only the second question shown: {app.screen}",
                )
                assert [q.text for q in session.questions.values()] == ["Run the second?"]
                await wait_until(
                    lambda: "Decided while this window was away: Run the first?" in notices(app),
                    message=lambda: notices(app),
                )
                assert len([screen for screen in app.screen_stack if isinstance(screen, ConfirmScreen)]) == 1
                session.answer_question(host.questions.pending()[0].id, False)
                assert await second is False
            finally:
                await other.aclose()


def short_private_dir(prefix: str) -> Path:
    """A folder under /tmp (a socket's path has at most 107 bytes), 0700."""
    return Path(tempfile.mkdtemp(prefix=prefix))


@pytest.fixture
def logind() -> Iterator[tuple[Path, Path]]:
    """The login's runtime dir (``$XDG_RUNTIME_DIR``, which logind removes at logout) and the folder its sessions
    fall back to (``$POLTER_TMPDIR``, for ``/tmp``)."""
    xdg, tmp = short_private_dir("px-"), short_private_dir("pt-")
    try:
        yield xdg, tmp
    finally:
        shutil.rmtree(xdg, ignore_errors=True)
        shutil.rmtree(tmp, ignore_errors=True)


async def test_a_session_whose_login_runtime_dir_was_removed_is_listed_attached_and_killed_over_ssh(
    tmp_path: Path, logind: tuple[Path, Path]
) -> None:
    xdg, tmp = logind
    config = tmp_path / "far-config"
    config.mkdir()
    (config / "polter.toml").write_text(f'[[panes]]\nadapter = "shell"\ncommand = ["{BASH}", "--norc"]\n')
    env = {
        "XDG_RUNTIME_DIR": str(xdg),
        "POLTER_TMPDIR": str(tmp),
        "POLTER_CONFIG_DIR": str(config),
        "POLTER_STATE_DIR": str(tmp_path / "far-state"),
        "POLTER_WORKTREES_DIR": str(tmp_path / "far-worktrees"),
    }
    async with sshd_login(tmp_path / "far", "far", env) as far:
        started = await relay_request(far, ["--start", "", "--session", "kept"])
        assert (xdg / "polter" / "sessions" / "kept.sock").is_socket(), started
        try:
            shutil.rmtree(xdg)  # the last login ended: logind removed the runtime dir
            fallback = tmp / f"polter-{os.getuid()}" / "sessions" / "kept.sock"
            await wait_until(fallback.is_socket, timeout=30, message="the socket made again in the fallback")
            xdg.mkdir(mode=0o700)  # the next login's runtime dir (logind makes it again, empty)
            listed = polter("ls", far, "--json")
            assert listed.returncode == 0, listed.stderr
            assert [(info["host"], info["name"]) for info in json.loads(listed.stdout)] == [(far, "kept")]
            added: list[str] = []
            client = await connect_over_ssh(
                SshTarget(far, "kept"), on_event=lambda event: added.append(getattr(event, "type", ""))
            )
            try:
                assert client.welcome.info.name == "kept"
                await wait_until(lambda: client.state.panes or "pane_added" in added, timeout=60, message="its pane")
            finally:
                await client.aclose()
            killed = polter("kill", f"{far}:kept")
            assert killed.returncode == 0 and "ended session far:kept" in killed.stdout, killed.stderr
            await wait_until(lambda: not fallback.exists(), timeout=30, message="the session's files gone")
            made = [path for path in [xdg, *xdg.rglob("*")] if path.is_dir()]
            assert all(not path.stat().st_mode & 0o077 for path in made), made  # the new runtime dir stays private
        finally:
            polter("kill", f"{far}:kept")
