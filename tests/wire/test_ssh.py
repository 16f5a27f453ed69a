"""How a session on another host is named and reached: targets, the ssh command, and ssh's failures in one line
(the real thing, over a real sshd, is tests/wire/test_remote.py)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from polter import __version__
from polter.errors import SessionError
from polter.wire import messages as wire
from polter.wire.installed import this_installation
from polter.wire.ssh import (
    CONTROL_PERSIST,
    SshTarget,
    control_options,
    explain_failure,
    parse_target,
    ssh_argv,
    version_mismatch,
)


def test_targets_name_a_host_and_a_session() -> None:
    assert parse_target("gpu:main") == ("gpu", "main")
    assert parse_target("me@gpu.example.org:work-2") == ("me@gpu.example.org", "work-2")
    assert parse_target("gpu:") == ("gpu", None)
    assert parse_target("main") == (None, "main")
    assert SshTarget("gpu", "main").label == "gpu:main"


@pytest.mark.parametrize("text", ["-oProxyCommand=touch /tmp/x:main", ":main", "gpu:../x", "gp u:main"])
def test_a_target_that_is_not_a_host_and_a_name_is_refused(text: str) -> None:
    with pytest.raises(SessionError):
        parse_target(text)


def test_ssh_is_given_the_host_after_its_options_and_the_relay_as_one_quoted_command() -> None:
    argv = ssh_argv("gpu", ["--start", "--pane 'shell:coder'"], interactive=False)
    assert argv[-3:] == ["--", "gpu", "polter relay --start '--pane '\"'\"'shell:coder'\"'\"''"]
    assert "BatchMode=yes" in argv and "ConnectTimeout=10" in argv and "-T" in argv
    assert "BatchMode=yes" not in ssh_argv("gpu", [], interactive=True)


def test_every_connection_to_a_host_shares_polter_s_control_master_in_the_private_runtime_dir(
    isolated_dirs: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ssh_argv("gpu", [], interactive=False)
    assert "ControlMaster=auto" in argv and f"ControlPersist={CONTROL_PERSIST}" in argv
    assert f"ControlPath={isolated_dirs['runtime']}/ssh-%C" in argv
    assert argv.index("ControlMaster=auto") < argv.index("--")  # options, before the host
    long = isolated_dirs["runtime"] / ("x" * 60)  # with ssh's 62 characters, too long for a Unix socket
    long.mkdir(mode=0o700)
    monkeypatch.setenv("POLTER_RUNTIME_DIR", str(long))
    assert control_options() == [] and "ControlMaster=auto" not in ssh_argv("gpu", [], interactive=False)


@pytest.mark.parametrize(
    ("code", "stderr", "said"),
    [
        (255, "ssh: Could not resolve hostname gpu: Name or service not known", "cannot reach gpu over SSH"),
        (255, "ssh: connect to host 10.0.0.9 port 22: Connection timed out", "cannot reach gpu over SSH"),
        (255, "root@127.0.0.1: Permission denied (publickey).", "cannot log in to gpu over SSH"),
        (255, "Host key verification failed.", "gpu's host key is unknown or changed"),
        (127, "bash: line 1: polter: command not found", f"install there the Polter this is (Polter {__version__} "),
        (1, "something else", "ssh gpu failed (something else)"),
    ],
)
def test_each_failure_of_ssh_is_one_line_saying_what_to_do(code: int, stderr: str, said: str) -> None:
    line = explain_failure("gpu", code, stderr)
    assert said in line and "\n" not in line


def test_a_bare_name_is_a_host_of_polter_toml_unless_a_session_here_has_it(isolated_dirs: dict[str, Path]) -> None:
    from polter.cli._remote import target_of

    (isolated_dirs["config"] / "polter.toml").write_text('host = "build"\nhosts = ["gpu"]\n')
    assert target_of("gpu", set()) == SshTarget("gpu")
    assert target_of("build", set()) == SshTarget("build")
    assert target_of("gpu", {"gpu"}) is None  # a session here of that name comes first
    assert target_of("main", {"main"}) is None
    assert target_of("box:main", set()) == SshTarget("box", "main")


def test_the_update_a_version_mismatch_names_is_one_command_that_the_host_s_shell_reads_back_whole() -> None:
    greeting = wire.RelayGreeting(version="0.0.9", clone="/srv/my polter's clone", commit="1" * 40)
    line = version_mismatch("gpu", greeting)
    [command] = re.findall(r"`(ssh [^`]+)`", line)
    ssh, host, there = shlex.split(command)  # what the shell here runs: ssh, the host, one command for the host
    assert (ssh, host) == ("ssh", "gpu")
    assert shlex.split(there)[:2] == ["cd", "/srv/my polter's clone"]  # what the host's shell runs
    assert there.endswith(f"git fetch && git checkout {this_installation().short_commit} && make .venv/.installed")
