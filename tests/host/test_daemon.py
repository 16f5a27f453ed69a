"""Sessions as a user lives them, with real processes: ``polter`` in a terminal (a PTY driven by Polter's
own screen engine), a host daemon behind it, windows that close, hang up or are killed, ``polter
attach``, ``ls`` and ``kill``, and a host killed with SIGKILL."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sys
from pathlib import Path

import pytest
from support.panes import BASH
from support.polter_terminal import polter, window
from support.processes import among, end_left_sessions, imported_modules, process_running
from support.waiting import wait_until

from polter.wire import methods
from polter.wire import messages as wire
from polter.wire.client import SessionClient
from polter.wire.registry import session_files
from polter.window.mirror import MirrorScreen

pytestmark = pytest.mark.e2e


@pytest.fixture
def config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two quiet bash panes (no agent CLI: this is about sessions, not roles)."""
    monkeypatch.setenv("PS1", "$ ")
    path = tmp_path / "polter.toml"
    panes = "".join(
        f'[[panes]]\nadapter = "shell"\nrole = "coder"\ncommand = ["{BASH}", "--norc", "--noprofile"]\n'
        for _ in range(2)
    )
    path.write_text(panes)
    return path


def sessions() -> list[dict[str, object]]:
    result = polter("ls", "--json")
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


async def pane_text(name: str, pane: str = "p1") -> str:
    """The pane's screen as a window attached right now would get it."""
    mirrors: dict[str, MirrorScreen] = {}

    def on_event(event: object) -> None:
        if isinstance(event, wire.FrameEvent):
            mirrors.setdefault(event.pane, MirrorScreen(event.frame.columns, event.frame.lines)).apply(event.frame)

    client = await SessionClient.connect(session_files(name), on_event=on_event)
    try:
        await wait_until(lambda: pane in mirrors)
        return "\n".join(line.rstrip() for line in mirrors[pane].display())
    finally:
        await client.aclose()


async def test_a_session_outlives_its_window_and_comes_back_with_everything(config: Path) -> None:
    async with window("--config", str(config), "--session", "work") as first:
        await first.shows("coder")
        await wait_until(lambda: first.text().count("$") >= 2, message=first.text)
        first.type("for i in $(seq 1 100000); do echo tick $i; sleep 0.02; done\r")
        await first.shows("tick 20")
        [info] = sessions()
        assert info["name"] == "work" and info["clients"] == 1 and info["running"] == 2
        host = int(info["pid"])  # type: ignore[arg-type]
        assert os.getsid(host) != os.getsid(first.pid)  # not in the window's login session
        assert os.getpgid(host) != os.getpgid(first.pid)
        os.kill(first.pid, signal.SIGHUP)  # the terminal window closes (or the SSH link drops)
        await first.exited()
    await wait_until(lambda: sessions()[0]["clients"] == 0, message="the window to be gone")
    before = await pane_text("work")
    ticks = [int(line.split()[1]) for line in before.splitlines() if line.startswith("tick ")]
    await wait_until(lambda: process_running(host))
    async with window("attach", "work") as second:
        await second.shows("coder")

        def newest() -> int:
            found = [
                int(word)
                for line in second.text().splitlines()
                for word in line.split()[1:2]
                if line.startswith("tick ") and word.isdigit()
            ]
            return max(found, default=0)

        await wait_until(lambda: newest() > max(ticks), message=second.text)  # it kept counting meanwhile
        second.type("\x02d")  # prefix then d: detach
        await second.shows("[detached from session work")
        assert await second.exited() == 0
    assert sessions()[0]["clients"] == 0 and process_running(host)
    result = polter("kill", "work")
    assert result.returncode == 0 and "ended session work" in result.stdout, result.stderr
    assert not process_running(host) and sessions() == []


async def test_two_windows_at_once_and_a_killed_window_harms_nothing(config: Path) -> None:
    async with window("--config", str(config), "--session", "pair") as one:
        await one.shows("coder")
        await wait_until(lambda: one.text().count("$") >= 2, message=one.text)
        async with window("attach", "pair") as two:
            await two.shows("coder")
            one.type("echo from-one\r")
            await two.shows("from-one")
            two.type("echo from-two\r")
            await one.shows("from-two")
            assert sessions()[0]["clients"] == 2
            os.kill(two.pid, signal.SIGKILL)
            await two.exited()
        await wait_until(lambda: sessions()[0]["clients"] == 1)
        one.type("echo still-here\r")
        await one.shows("still-here")
        assert polter("kill", "pair").returncode == 0
        await one.shows("session pair ended: ended with `polter kill`")
        assert await one.exited() == 0


async def test_a_killed_host_ends_its_panes_and_the_next_polter_says_so(config: Path) -> None:
    async with window("--config", str(config), "--session", "doomed") as first:
        await first.shows("coder")
        await wait_until(lambda: first.text().count("$") >= 2, message=first.text)
        host = int(sessions()[0]["pid"])  # type: ignore[arg-type]
        shells = [int(pid) for pid in Path(f"/proc/{host}/task/{host}/children").read_text().split()]
        os.kill(host, signal.SIGKILL)
        await first.shows("lost session doomed")
        assert await first.exited() == 1
    await wait_until(lambda: not any(process_running(pid) for pid in shells), message="the panes' programs to end")
    result = polter("ls")
    assert "session doomed ended unexpectedly" in result.stderr and "--restore" in result.stderr
    assert polter("ls").stderr == ""  # said once: the leftovers are gone


async def test_plain_polter_offers_to_attach_to_a_detached_session(config: Path) -> None:
    async with window("--config", str(config), "--session", "main") as first:
        await first.shows("coder")
        first.type("\x02d")
        await first.exited()
    async with window("--config", str(config)) as second:
        await second.shows("a session is running detached: main: 2 panes")
        await second.shows("Attach to main instead of starting a new session? [Y/n]")
        second.type("status\r")  # typed ahead for an agent: no answer, asked again
        await second.shows("'status' is neither yes nor no")
        await wait_until(lambda: second.text().count("[Y/n]") == 2, message=second.text)
        second.type("\r")
        await second.shows("coder")
        assert [info["name"] for info in sessions()] == ["main"]
        second.type("\x02q")
        await second.shows("Leave session main?")
        second.type("e")
        assert await second.exited() == 0
    assert sessions() == []


async def test_what_is_typed_while_polter_starts_goes_to_the_first_pane(config: Path) -> None:
    """Typed ahead (``polter``, Enter, and straight on with a command) as in a shell: the keys that come before the
    window has a pane with the keyboard are held for it, not dropped."""
    async with window("--config", str(config), "--session", "early") as early:
        early.type("echo typed-$((6 * 7))\r")  # before Python has even started: the shell computes what shows
        await early.shows("typed-42")
        early.type("\x02q")
        await early.shows("Leave session early?")
        early.type("e")
        assert await early.exited() == 0


async def test_a_session_a_failed_test_left_running_ends_with_the_tests_runtime_dir(
    config: Path, isolated_dirs: dict[str, Path]
) -> None:
    """The suite's own hygiene: a test that fails before it kills its session would leave the host, its gateway
    and its panes running, unreachable once the test's runtime dir is gone (they once ran through the rest of a
    run, and a benchmark after it). The runtime dir's removal ends them first."""
    async with window("--config", str(config), "--session", "left") as left:
        await wait_until(lambda: left.text().count("$") >= 2, message=left.text)  # both panes' shells run
    host = int(sessions()[0]["pid"])
    children = [int(pid) for pid in Path(f"/proc/{host}/task/{host}/children").read_text().split()]
    assert len(children) >= 3 and process_running(host)  # the gateway, the egress proxy and the panes
    assert end_left_sessions(isolated_dirs["runtime"]) == ["left"]
    await wait_until(lambda: not any(process_running(pid) for pid in [host, *children]), message="the session's end")
    assert end_left_sessions(isolated_dirs["runtime"]) == []


async def test_attaching_to_nothing_lists_what_runs(config: Path) -> None:
    result = polter("attach", "nowhere")
    assert result.returncode == 1 and "no session named nowhere is running (running: none)" in result.stderr
    assert "; on a machine nowhere over ssh: `polter attach nowhere:`" in result.stderr  # (it may be a host's name)
    result = polter("kill", "nowhere")
    assert result.returncode == 1 and "no session named nowhere" in result.stderr


HOST_NEVER_IMPORTS = (
    "textual", "rich", "polter.window", "httpx", "click", "pygments", "sqlite3", "polter.roles", "mcp", "cryptography",
    "polter.backends", "httpx2", "httpcore2", "h11",
)  # fmt: skip
"""What the host leaves out (docs/architecture.md, "Memory"): a window's Textual and rich; httpx, whose command
line loads rich, click and pygments, and httpx2 with httpcore2 and h11 (the gateway's control client speaks
HTTP/1.1 itself; anyio comes with watchfiles); the roles' engine, the audit's sqlite3 and the MCP SDK, which are
the gateway's."""


async def test_the_host_imports_no_textual_nor_what_only_the_window_or_the_gateway_needs(config: Path) -> None:
    """The real host daemon (its imports written to its log by ``PYTHONPROFILEIMPORTTIME``), from its start
    through its agent panes registered, a window attached, calls that reach the gateway, until it ends."""
    from polter.host.daemon import log_path, start_host

    os.environ["PYTHONPROFILEIMPORTTIME"] = "1"  # the host's environment is this process's
    try:
        start_host("lean", ["--config", str(config), "--session", "lean"])
    finally:
        del os.environ["PYTHONPROFILEIMPORTTIME"]
    host = int(sessions()[0]["pid"])  # type: ignore[arg-type]
    events: list[object] = []
    try:
        client = await SessionClient.connect(session_files("lean"), on_event=events.append)
        try:
            await wait_until(lambda: client.state.ready or any(isinstance(event, wire.Ready) for event in events))
            added = [event.pane for event in events if isinstance(event, wire.PaneAdded)]
            pane = [*client.state.panes, *added][0].id
            assert (await client.call(methods.CapabilitiesParams(pane=pane))).role == "coder"
            await client.call(methods.ReloadRolesParams())
        finally:
            await client.aclose()
    finally:
        assert polter("kill", "lean").returncode == 0
    await wait_until(lambda: not process_running(host))
    modules = imported_modules(log_path("lean").read_text())
    assert {"polter.host.session_host", "polter.gateway.client", "polter.gateway.loopback_http"} <= modules
    assert not among(modules, HOST_NEVER_IMPORTS), among(modules, HOST_NEVER_IMPORTS)


async def test_the_host_leaves_the_login_sessions_cgroup_where_systemd_runs_the_user(config: Path) -> None:
    """Logging out of SSH with KillUserProcesses=yes ends the processes of the login session's scope:
    the host runs in a scope of its own (systemd-run --user --scope) where a user manager answers."""
    from polter.host.daemon import _systemd_scope

    if not _systemd_scope("probe"):
        pytest.skip("platform: no systemd user manager here (the host then only leaves the session and group)")
    async with window("--config", str(config), "--session", "scoped") as first:
        await first.shows("coder")
        host = int(sessions()[0]["pid"])  # type: ignore[arg-type]
        assert Path(f"/proc/{host}/cgroup").read_text() != Path(f"/proc/{first.pid}/cgroup").read_text()
        assert "polter-scoped" in Path(f"/proc/{host}/cgroup").read_text()
        assert polter("kill", "scoped").returncode == 0


async def test_a_pane_in_its_own_worktree_through_a_real_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The setup command asked in the window the daemon's host asks through, the pane at work in its worktree,
    its header's figures, ``polter worktree`` on the running session, and ``--restore`` back into it."""
    from support.git_repos import git, make_repo

    for name in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PS1", "$ ")
    repo = make_repo(tmp_path / "app")
    (repo / ".polter").mkdir()
    (repo / ".polter" / "worktrees.toml").write_text('setup = "mkdir node_modules && touch node_modules/.ready"\n')
    git(repo, "add", ".polter")
    git(repo, "commit", "-qm", "setup")
    config = tmp_path / "polter.toml"
    config.write_text(
        f'[[panes]]\nadapter = "shell"\nrole = "coder"\ntitle = "coder"\ncwd = "{repo}"\nworktree = true\n'
        f'command = ["{BASH}", "--norc", "--noprofile"]\n'
    )
    async with window("--config", str(config), "--session", "wt") as first:
        first.type("echo typed-ahead-$((6*7))\r")  # held for the pane: its "y" must not answer the question below
        await first.shows("Run this repository's setup command in its new worktrees?", timeout=60)
        await first.shows("touch node_modules/.ready")
        first.type("y")
        await first.shows("polter/coder")
        await first.shows("typed-ahead-42")
        [row] = json.loads(polter("worktree", "list", "--json").stdout)
        path = Path(row["worktree"]["path"])
        assert (path / "node_modules" / ".ready").exists() and row["pane"] == {
            "session": "wt",
            "number": 1,
            "title": "coder",
            "id": "p1",
        }
        first.type(f'[ "$PWD" = {str(path)!r} ] && echo in-the-$((6*7))-worktree\r')  # (a long path wraps in the pane)
        await first.shows("in-the-42-worktree")
        first.type("echo hi > hi.txt && git add hi.txt && git commit -qm hi\r")
        await first.shows("polter/coder +1 -0 · 1 file", timeout=30)
        assert not (repo / "hi.txt").exists()
        merged = polter("worktree", "merge", "1", "--yes")
        assert merged.returncode == 0 and "merged polter/coder into main" in merged.stdout, merged.stderr
        assert (repo / "hi.txt").read_text() == "hi\n"
        await first.shows("polter/coder +0 -0 · 0 files", timeout=30)
        assert polter("kill", "wt").returncode == 0
        assert await first.exited() == 0
    async with window("--restore", "--session", "back") as second:
        await second.shows("polter/coder", timeout=60)
        await wait_until(lambda: "\n$" in second.text(), message=second.text)  # the shell's prompt
        second.type(f'[ "$PWD" = {str(path)!r} ] && echo in-the-$((6*7))-worktree\r')  # (a long path wraps in the pane)
        await second.shows("in-the-42-worktree")
        assert "setup command" not in second.text()  # a worktree it comes back to is not set up again
        assert polter("kill", "back").returncode == 0
        assert await second.exited() == 0


NOTIFIED = """\
import json, sys
with open(sys.argv[1], "a") as log:
    log.write(json.dumps(sys.argv[2:]) + "\\n")
"""
TERMINAL_VARIABLES = ("TMUX", "KITTY_WINDOW_ID", "WEZTERM_PANE", "WT_SESSION", "ConEmuPID", "ITERM_SESSION_ID",
                      "LC_TERMINAL", "GHOSTTY_RESOURCES_DIR")  # fmt: skip


async def test_a_pane_done_while_another_is_focused_tells_the_terminal_and_notify_command_once(
    config: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The real window in a terminal: the notification sequence it writes is what the terminal receives (Polter's
    own screen engine, as the outer terminal, keeps the notifications programs ask for)."""
    log, script = tmp_path / "notified.jsonl", tmp_path / "notified.py"
    script.write_text(NOTIFIED)
    command = json.dumps([sys.executable, str(script), str(log)])
    config.write_text(f"notify_command = {command}\nnotify_quiet = 0.5\n" + config.read_text())
    for name in TERMINAL_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM_PROGRAM", "iTerm.app")  # the window's table: iTerm2 shows OSC 9

    def runs() -> list[list[str]]:
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []

    loop = "for i in 1 2 3 4 5 6 7 8 9 10; do echo tick $i; sleep 0.2; done; echo finished-$((0+{}))"
    async with window("--config", str(config), "--session", "heed") as terminal:
        await terminal.shows("coder")
        await wait_until(lambda: terminal.text().count("$") >= 2, message=terminal.text)
        terminal.type(loop.format(1) + "\r")  # the focused pane works, then is done: the human looks at it
        await terminal.shows("finished-1")
        other = await SessionClient.connect(session_files("heed"), on_event=lambda event: None, attach=False)
        try:  # pane 2 gets the same loop from elsewhere (a second window would do it): nobody looks at it
            other.send(wire.PasteInput(pane="p2", text=loop.format(2)))
            other.send(wire.KeyInput(pane="p2", key="enter"))
            await terminal.shows("finished-2")
        finally:
            await other.aclose()
        await wait_until(lambda: len(runs()) == 1, timeout=30, message=lambda: f"one notify_command run: {runs()}")
        assert runs() == [["2", "Shell", "coder", "done", ""]]
        screen = terminal.terminal.screen
        assert screen is not None
        await wait_until(lambda: len(screen.notifications) == 1, message=lambda: str(list(screen.notifications)))
        assert list(screen.notifications) == ["Polter: pane 2 (Shell, coder) is done"]
        terminal.type("\x022echo typed-behind-the-prefix\r")  # one read: the prefix, its key and more keys
        await terminal.shows("typed-behind-the-prefix")  # the keys behind the prefix's reach a pane (no crash)
        assert polter("kill", "heed").returncode == 0
        assert await terminal.exited() == 0
    assert runs() == [["2", "Shell", "coder", "done", ""]] and len(screen.notifications) == 1


async def test_a_session_whose_runtime_dir_was_removed_is_listed_attached_and_killed(
    config: Path, isolated_dirs: dict[str, Path]
) -> None:
    """logind removes ``$XDG_RUNTIME_DIR`` when the user's last login ends: the host makes its files again."""
    async with window("--config", str(config), "--session", "kept") as first:
        await first.shows("coder")
        await wait_until(lambda: first.text().count("$") >= 2, message=first.text)
        first.type("echo before-the-logout\r")
        await first.shows("before-the-logout")
        first.type("\x02d")
        assert await first.exited() == 0
    [info] = sessions()
    runtime = isolated_dirs["runtime"]
    shutil.rmtree(runtime)  # the logout
    await wait_until(lambda: (runtime / "sessions" / "kept.sock").is_socket(), message="the socket made again")
    [again] = sessions()
    assert again["name"] == "kept" and again["pid"] == info["pid"] and (runtime / "sessions" / "kept.lock").exists()
    async with window("attach", "kept") as second:
        await second.shows("before-the-logout")
        second.type("\x02d")
        assert await second.exited() == 0
    result = polter("kill", "kept")
    assert result.returncode == 0 and "ended session kept" in result.stdout, result.stderr
    assert sessions() == [] and not process_running(int(info["pid"]))  # type: ignore[arg-type]
