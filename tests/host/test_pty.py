"""The PTY process: real programs on real pseudo-terminals, no screen model involved."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from support.panes import runs_in_foreground
from support.processes import process_running
from support.waiting import wait_until

from polter.errors import SpawnError
from polter.terminal.launch import LaunchSpec
from polter.processes import describe_exit, process_exists
from polter.host.pty import READ_SIZE, READS_PER_CALLBACK, PtyProcess, session_processes

BASH = shutil.which("bash") or "/bin/bash"
QUIET_BASH = (BASH, "--norc", "--noprofile")


class Child:
    """A spawned program plus everything it printed and how it ended."""

    def __init__(self, spec: LaunchSpec, columns: int = 80, lines: int = 24) -> None:
        self.output = bytearray()
        self.exit_codes: list[int] = []
        self.process = PtyProcess.spawn(
            spec, columns=columns, lines=lines, on_output=self.output.extend, on_exit=self.exit_codes.append
        )

    @property
    def text(self) -> str:
        return self.output.decode(errors="replace")

    async def wait_for(self, needle: str) -> None:
        await wait_until(lambda: needle in self.text, message=lambda: f"{needle!r} in {self.text[-500:]!r}")

    async def run(self, command: str, marker: str) -> None:
        """Type ``command`` into the shell and wait for ``marker`` in the output (write the command so
        that its echo does not contain the marker, e.g. ``echo ar''med`` for ``armed``)."""
        self.process.write(command.encode() + b"\r")
        await self.wait_for(marker)


def bash(**env: str) -> LaunchSpec:
    return LaunchSpec(argv=QUIET_BASH, env={"PS1": "$ ", **env})


async def test_a_shell_echoes_what_is_typed_and_runs_it() -> None:
    child = Child(bash())
    try:
        await child.run("echo $((6 * 7))", "42")
        assert "echo $((6 * 7))" in child.text  # the terminal echoed the keys back
    finally:
        await child.process.aclose()


async def test_the_child_sees_the_size_the_terminal_type_and_the_spec_environment(tmp_path: Path) -> None:
    spec = LaunchSpec(
        argv=(*QUIET_BASH, "-c", 'stty size; echo "$TERM $COLORTERM $GREETING ${HOME-unset}"; pwd; tty'),
        env={"GREETING": "hello"},
        unset_env=("HOME",),
        cwd=tmp_path,
    )
    child = Child(spec, columns=91, lines=17)
    assert await child.process.wait() == 0
    lines = child.text.splitlines()
    assert lines[0] == "17 91"
    assert lines[1] == "xterm-256color truecolor hello unset"
    assert lines[2] == str(tmp_path)
    assert lines[3].startswith("/dev/pts/")  # a real terminal on stdin


async def test_resize_reaches_the_child_as_sigwinch() -> None:
    child = Child(bash(), columns=80, lines=24)
    try:
        await child.run("trap 'echo winch $(stty size)' WINCH; echo ar''med", "armed")
        child.process.resize(100, 30)
        # bash runs a WINCH trap that came while readline waits for a line once the line is read: an empty one
        child.process.write(b"\r")
        await child.wait_for("winch 30 100")
    finally:
        await child.process.aclose()


async def test_ctrl_c_interrupts_the_foreground_job_not_the_shell() -> None:
    child = Child(bash())
    try:
        await child.run("sleep 100", "sleep 100")
        await wait_until(lambda: runs_in_foreground(child.process, "sleep"))
        child.process.write(b"\x03")
        await wait_until(lambda: child.process.foreground_process_group() == child.process.pid)
        await child.run("echo sta''tus=$?", "status=130")
        assert child.process.running
    finally:
        await child.process.aclose()


async def test_exit_code_and_last_output_are_delivered() -> None:
    child = Child(LaunchSpec(argv=(*QUIET_BASH, "-c", "printf 'last words'; exit 3")))
    assert await child.process.wait() == 3
    assert child.text == "last words"
    assert child.exit_codes == [3]
    assert child.process.returncode == 3 and not child.process.running


async def test_a_killed_child_reports_its_signal() -> None:
    child = Child(LaunchSpec(argv=(*QUIET_BASH, "-c", "kill -TERM $$")))
    code = await child.process.wait()
    assert describe_exit(code) == "killed by SIGTERM"
    assert describe_exit(0) == "exited 0"


async def test_a_large_write_is_queued_until_the_child_reads_it(tmp_path: Path) -> None:
    target = tmp_path / "received"
    size = 300_000  # far more than a PTY buffer holds
    child = Child(
        LaunchSpec(argv=(*QUIET_BASH, "-c", f"stty raw -echo; echo ready; head -c {size} > {target}; echo got-it"))
    )
    await child.wait_for("ready")
    payload = bytes(ord("a") + i % 26 for i in range(size))
    child.process.write(payload)
    await child.wait_for("got-it")
    assert target.read_bytes() == payload
    await child.process.wait()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (LaunchSpec(argv=("polter-no-such-command",)), "cannot start 'polter-no-such-command': command not found"),
        (LaunchSpec(argv=("/nonexistent/tool",)), "cannot start '/nonexistent/tool': no such file"),
        (LaunchSpec(argv=("/etc/passwd",)), "cannot start '/etc/passwd': not an executable file"),
        (LaunchSpec(argv=(BASH,), cwd=Path("/nonexistent/dir")), "working directory '/nonexistent/dir' does not exist"),
    ],
)
async def test_a_program_that_cannot_start_raises_a_message_for_the_user(spec: LaunchSpec, message: str) -> None:
    with pytest.raises(SpawnError, match=message.replace("(", r"\(")):
        Child(spec)


async def test_closing_ends_every_process_of_the_session_even_one_ignoring_sighup() -> None:
    child = Child(bash())
    await child.run("sleep 300 & echo b''g=$!", "bg=")
    await child.run("bash -c 'trap \"\" HUP; echo stub''born=$$; exec sleep 301'", "stubborn=")
    await wait_until(lambda: len(session_processes(child.process.pid)) >= 3, message="three processes in the session")
    members = session_processes(child.process.pid)
    await child.process.aclose(grace=0.5)
    for pid in members:
        assert not process_running(pid), f"process {pid} survived the close"
    assert session_processes(child.process.pid) == []
    assert child.exit_codes and not child.process.running


async def test_closing_sends_sighup_first_so_a_program_can_clean_up_in_the_grace_period(tmp_path: Path) -> None:
    """The order matters: an editor saves its swap file, an agent CLI writes its session on SIGHUP.
    The program below takes 0.2 s to clean up after SIGHUP, well inside the grace period."""
    record = tmp_path / "record"
    script = f"trap 'sleep 0.2; echo hup-handled > {record}; exit 0' HUP; echo rea''dy; while :; do sleep 0.05; done"
    child = Child(LaunchSpec(argv=(BASH, "--norc", "--noprofile", "-c", script)))
    await child.wait_for("ready")
    await child.process.aclose(grace=5)
    assert record.read_text() == "hup-handled\n"
    assert child.exit_codes == [0], "ended by its own exit after SIGHUP, not by SIGKILL"


async def test_closing_a_terminal_whose_program_just_ended_signals_nobody_else() -> None:
    """Between a program's end and the event loop hearing of it, its terminal has no foreground group:
    Linux answers 0 to ``tcgetpgrp``, and ``killpg(0, SIGHUP)`` would hang up our own process group
    (it once ended the test run that closed such a pane)."""
    import signal
    import time

    received: list[int] = []
    previous = signal.signal(signal.SIGHUP, lambda signum, frame: received.append(signum))
    try:
        process = PtyProcess.spawn(
            LaunchSpec(argv=("true",)), columns=80, lines=24, on_output=lambda data: None, on_exit=lambda code: None
        )
        deadline = time.monotonic() + 10
        while not _ended(process.pid) and time.monotonic() < deadline:  # the loop must not hear of it yet
            time.sleep(0.001)
        assert _ended(process.pid) and process.running
        assert process.foreground_process_group() is None
        await process.aclose()
        assert received == []
    finally:
        signal.signal(signal.SIGHUP, previous)


def _ended(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True
    return stat[stat.rfind(")") + 2] == "Z"


async def test_a_program_starts_with_the_terminal_signals_at_their_defaults_whatever_polter_inherited() -> None:
    """Polter started by ``nohup`` or in a script's background inherits SIGHUP, SIGINT and SIGQUIT ignored; its
    panes' programs must not (``ctrl+c`` must interrupt them, closing a pane must hang them up)."""
    import signal

    from polter.host.pty import TERMINAL_SIGNALS

    previous = {number: signal.getsignal(number) for number in TERMINAL_SIGNALS}
    try:
        for number in TERMINAL_SIGNALS:
            signal.signal(number, signal.SIG_IGN)
        child = Child(LaunchSpec(argv=(BASH, "--norc", "--noprofile", "-c", "grep SigIgn /proc/self/status")))
        await child.wait_for("SigIgn")
        await child.process.wait()
        ignored = int(child.text.split("SigIgn:")[1].split()[0], 16)
        assert [signal.Signals(n).name for n in TERMINAL_SIGNALS if ignored & (1 << (n - 1))] == []
        assert all(signal.getsignal(number) != signal.SIG_DFL for number in TERMINAL_SIGNALS), "Polter still ignores"
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


async def test_process_exists_treats_a_zombie_as_gone() -> None:
    """A child that exited but was not waited for is a zombie: its pid is taken, its process does not run
    (``polter kill`` waits for the host to end, the workspace removes the run dirs of dead hosts)."""
    child = subprocess.Popen(["true"])
    try:
        await wait_until(lambda: Path(f"/proc/{child.pid}/stat").read_text().split(") ", 1)[1][0] == "Z")
        assert not process_exists(child.pid)
        assert process_exists(os.getpid())
    finally:
        child.wait()
    assert not process_exists(child.pid)


async def test_a_flood_is_read_several_buffers_a_callback_and_every_byte_arrives_in_order(tmp_path: Path) -> None:
    """A PTY read gives at most 4 KiB: while the program writes faster than it is read, one readable callback
    reads up to READS_PER_CALLBACK of them (fewer event-loop turns in a flood)."""
    written = tmp_path / "written"
    script = f"import os; os.write(1, b''.join(b'%05d' % n for n in range(2000))); open({str(written)!r}, 'w').close()"
    chunks: list[bytes] = []
    process = PtyProcess.spawn(
        LaunchSpec(argv=("python3", "-c", script + "; import time; time.sleep(30)")),
        columns=80, lines=24, on_output=chunks.append, on_exit=lambda code: None,
    )  # fmt: skip
    try:
        process.pause_reading()
        await wait_until(written.exists, message="the program wrote its 10,000 bytes")  # all in the PTY's buffer
        process.resume_reading()
        await wait_until(lambda: sum(map(len, chunks)) >= 10_000, message=lambda: f"{sum(map(len, chunks))} bytes")
        assert b"".join(chunks) == b"".join(b"%05d" % n for n in range(2000))
        assert max(map(len, chunks)) > READ_SIZE, [len(chunk) for chunk in chunks]
        assert max(map(len, chunks)) <= READS_PER_CALLBACK * READ_SIZE
    finally:
        await process.aclose()
