"""The command line's frame: help, errors as one line with an exit code."""

from __future__ import annotations

import argparse
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from support.loopback import answering

from polter import cli
from polter.cli import build_parser
from polter.errors import ConfigError


def test_help_lists_the_app_options() -> None:
    result = subprocess.run([sys.executable, "-m", "polter", "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    assert "--panes" in result.stdout and "--layout" in result.stdout


def test_a_polter_error_becomes_one_line_and_its_exit_code(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    parser = build_parser()

    def fail(_args: object) -> int:
        raise ConfigError("must be a list", path="roles/x.toml", line=3, field="tools.allow")

    parser.set_defaults(handler=fail)
    monkeypatch.setattr(cli, "build_parser", lambda command=None: parser)
    assert cli.main([]) == 2
    assert capsys.readouterr().err == "polter: roles/x.toml:3: tools.allow: must be a list\n"


@pytest.mark.parametrize("as_json", [False, True])
def test_an_empty_audit_says_so_but_json_output_stays_json(
    as_json: bool, capsys: pytest.CaptureFixture[str], tmp_path: object
) -> None:
    assert cli.main(["audit", "--state-dir", str(tmp_path), *(["--json"] if as_json else [])]) == 0
    out, err = capsys.readouterr()
    note, other = (err, out) if as_json else (out, err)
    assert note.startswith("no audit log at ") and other == ""


async def test_the_audit_names_a_cli_tool_by_its_kind_and_target(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    from datetime import UTC, datetime

    from polter.gateway.audit import AUDIT_FILE, AuditLog

    log = AuditLog(tmp_path / AUDIT_FILE)
    log.start()
    fields = {"time": datetime.now(UTC), "pane": "p1", "role": "researcher", "rule": None, "latency_ms": 1.0}
    await log.write(log.make_row(layer="hook", server=None, name="Bash", builtin="shell", target="git push origin",
                                 decision="deny", reason="denied", **fields))  # fmt: skip
    await log.write(log.make_row(layer="call", server="time", name="get_current_time", decision="allow",
                                 reason="allowed", **fields))  # fmt: skip
    await log.aclose()
    assert cli.main(["audit", "--state-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "Bash (shell) git push origin" in out and "time/get_current_time" in out, out


async def test_what_an_agent_wrote_is_printed_with_its_escape_sequences_spelled_out(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """A command line an agent ran can hold escape sequences (OSC 52 sets the clipboard of the terminal that shows
    it, CSI 2J clears it): the audit prints them spelled out, on the human's terminal they do nothing."""
    from datetime import UTC, datetime

    from polter.gateway.audit import AUDIT_FILE, AuditLog

    log = AuditLog(tmp_path / AUDIT_FILE)
    log.start()
    fields = {"time": datetime.now(UTC), "pane": "p1", "role": "researcher", "rule": None, "latency_ms": 1.0}
    command = "echo \x1b]52;c;ZXZpbA==\x07 \x1b[2J \x9b31m"
    await log.write(log.make_row(layer="hook", server=None, name="Bash", builtin="shell", target=command,
                                 decision="deny", reason="denied \x1b[8m", **fields))  # fmt: skip
    await log.aclose()
    assert cli.main(["audit", "--state-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert not any(ord(char) < 0x20 and char != "\n" or 0x7F <= ord(char) <= 0x9F for char in out), repr(out)
    assert "echo \\x1b]52;c;ZXZpbA==\\x07 \\x1b[2J \\x9b31m" in out and "denied \\x1b[8m" in out, out


def test_a_gateway_that_takes_the_connection_and_answers_nothing_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """What a sandboxed pane meets when its forwarder cannot reach the gateway's socket: accepted, then closed."""
    with answering(socket.create_server(("127.0.0.1", 0))) as server:
        url = f"http://127.0.0.1:{server.getsockname()[1]}"
        monkeypatch.setenv("POLTER_TOKEN", "a-token")
        monkeypatch.setenv("POLTER_GATEWAY_URL", url)
        assert cli.main(["tools"]) != 0
    err = capsys.readouterr().err
    assert err.startswith(f"polter: the gateway at {url} did not answer ("), err
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err


def _commands(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    return next(action.choices for action in parser._actions if isinstance(action, argparse._SubParsersAction))


def test_a_command_line_that_names_a_command_gets_that_command_as_the_whole_parser_has_it() -> None:
    """``COMMANDS_ELSEWHERE`` names every command that its module of the same name does not define."""
    whole = _commands(build_parser())
    for command, parser in whole.items():
        alone = _commands(build_parser(command))
        assert command in alone, f"polter {command}: its module is not named by COMMANDS_ELSEWHERE"
        assert alone[command].get_default("handler") is parser.get_default("handler"), command
        assert alone[command].format_help() == parser.format_help(), command


@pytest.mark.parametrize("group", ["asks", "panes", "roles", "servers", "worktree"])
def test_a_command_group_alone_lists_as_its_list_command_does(group: str) -> None:
    parser = build_parser(group)
    alone, listing = vars(parser.parse_args([group])), vars(parser.parse_args([group, "list"]))
    assert alone.pop(f"{group}_command", None) is None and listing.pop(f"{group}_command") == "list"
    assert alone == listing
    assert "Alone, it lists" in " ".join(_commands(parser)[group].format_help().split())
    with pytest.raises(SystemExit):  # the group's other commands still need their names and arguments
        parser.parse_args([group, "no-such-command"])


def test_polter_roles_alone_prints_the_roles_as_polter_roles_list_does(tmp_path: Path) -> None:
    def run(*words: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "polter", *words], capture_output=True, text=True, cwd=tmp_path)

    alone, listing = run("roles"), run("roles", "list")
    assert alone.returncode == listing.returncode == 0, alone.stderr
    assert "researcher" in alone.stdout and alone.stdout == listing.stdout


def test_polter_attach_and_polter_gateway_import_no_other_commands_module() -> None:
    """The window's and the gateway's command lines (``docs/architecture.md``, "Memory")."""
    script = "import sys; from polter.cli import build_parser; build_parser(sys.argv[1]); print(*sorted(sys.modules))"
    for command, module in (("attach", "polter.cli.sessions"), ("gateway", "polter.cli.gateway")):
        result = subprocess.run([sys.executable, "-c", script, command], capture_output=True, text=True, timeout=60)
        assert result.returncode == 0, result.stderr
        modules = set(result.stdout.split())
        commands = {name for name in modules if name.startswith("polter.cli.")}
        assert commands == {module, "polter.cli.app", "polter.cli._admin", "polter.cli.relay"}, (command, commands)


def test_a_new_session_starts_its_host_before_the_window_loads_the_session_protocol() -> None:
    """What ``polter`` does before it starts a new session's host (check the options and the config, look for live
    sessions: none here) loads neither the session protocol's models nor Textual: those load while the host
    starts, off the way to the first prompt."""
    script = (
        "import asyncio, sys\n"
        "from polter.cli import build_parser\n"
        "from polter.cli.app import plan\n"
        "from polter.cli.sessions import survey\n"
        "plan(build_parser(None).parse_args(['--pane', 'shell', '--session', 'first']))\n"
        "print(asyncio.run(survey()))\n"
        "print(*sorted(name for name in sys.modules if name.startswith(('polter.wire.', 'textual'))))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    sessions, modules = result.stdout.splitlines()
    assert sessions == "([], [])"
    assert set(modules.split()) == {"polter.wire.options", "polter.wire.registry"}, modules


REASON = "polter/send is Polter's own: every role allows its floor tools. The role's tools.default is ignored for it."


def test_a_tables_last_column_wraps_under_itself_to_the_width(capsys: pytest.CaptureFixture[str]) -> None:
    """In a pane narrower than the table, the reasons wrap under their column, not into the first one; a path
    or URL is never cut."""
    from polter.cli._admin import print_table

    path = "/home/someone/a-long-project-name/roles/researcher-with-a-long-name.toml"
    print_table(["SERVER/TOOL", "DECISION", "WHY"], [["  polter/send", "allow", REASON], ["x", "deny", path]], width=60)
    lines = capsys.readouterr().out.splitlines()
    column = lines[0].index("WHY")
    assert lines[1] == "  polter/send  allow     polter/send is Polter's own: every"
    assert all(len(line) <= 60 for line in lines if path not in line)
    assert [line[column:] for line in lines[1:-1]] == [
        "polter/send is Polter's own: every",
        "role allows its floor tools. The",
        "role's tools.default is ignored for",
        "it.",
    ]
    assert all(not line[:column].strip() for line in lines[2:-1])
    assert lines[-1] == f"x              deny      {path}"


def test_a_table_piped_keeps_each_row_on_one_line_and_on_a_terminal_fits_it(tmp_path: Path) -> None:
    """Scripts read a piped table a row a line; the same command in a 50-column terminal gets it wrapped."""
    import os
    import pty

    program = (
        "from polter.cli._admin import print_table\n"
        f"print_table(['TOOL', 'WHY'], [['polter/send', {REASON!r}]])\n"
    )
    piped = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=True)
    assert piped.stdout.splitlines()[1] == f"polter/send  {REASON}"

    pid, fd = pty.fork()
    if pid == 0:  # the child: a 50-column terminal, as a narrow pane is (readline may have put COLUMNS in the env)
        env = {key: value for key, value in os.environ.items() if key not in ("COLUMNS", "LINES")}
        os.execve(sys.executable, [sys.executable, "-c", f"import fcntl, struct, termios; "
                                   f"fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack('HHHH', 24, 50, 0, 0)); "
                                   f"exec({program!r})"], env)
    output = b""
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the child closed its terminal
            break
        if not chunk:
            break
        output += chunk
    os.close(fd)
    assert os.waitpid(pid, 0)[1] == 0, output
    lines = output.decode().replace("\r\n", "\n").splitlines()
    assert len(lines) > 2 and all(len(line) <= 50 for line in lines), lines
    assert " ".join(line.strip() for line in lines[1:]) == f"polter/send  {REASON}"
