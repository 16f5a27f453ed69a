"""The line for a host whose Polter is another names a command that makes it this one: run as printed, over a real
sshd, against a "remote" clone of Polter at another commit that fetches from a local bare origin (file:// only),
and the attach it refused then works."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.git_repos import git
from support.polter_terminal import polter
from support.sshd import SshHost, end_control_master, login_env, ssh_client

from polter.wire import messages as wire
from polter.wire.installed import this_installation
from polter.wire.ssh import SshTarget, relay_request
from polter.wire.ssh import connect as connect_over_ssh

pytestmark = pytest.mark.e2e

CHECKOUT = Path(__file__).resolve().parents[2]
HERE = this_installation()


@dataclass
class Behind:
    """A host whose Polter runs from ``clone``, a clone of ``origin`` at a commit of another version."""

    host: str
    clone: Path
    origin: Path


def _commit_of_another_version(work: Path) -> str:
    """In ``work`` (this checkout's commit, shallow): a commit of its own history with another version number."""
    git(work, "checkout", "--quiet", "--orphan", "older")
    init = work / "polter" / "__init__.py"
    init.write_text(init.read_text().replace('__version__ = "', '__version__ = "0.0.9"  # was "', 1))
    git(work, "-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "--quiet", "-am", "an older Polter")
    return git(work, "rev-parse", "HEAD").strip()


def _installed_in_place(clone: Path) -> None:
    """What ``make .venv/.installed`` leaves in ``clone``, without the network: a venv whose ``polter`` runs the
    clone's package (on its path as an editable install puts it), with this checkout's venv's libraries, and the
    stamp that make reads (newer than pyproject.toml)."""
    venv = clone / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    [site] = venv.glob("lib/python*/site-packages")
    (site / "polter-clone.pth").write_text(f"{clone}\n{sysconfig.get_paths()['purelib']}\n")
    script = venv / "bin" / "polter"
    script.write_text(f"#!{venv / 'bin' / 'python'}\nimport sys\nfrom polter.cli import main\nsys.exit(main())\n")
    script.chmod(0o755)
    (venv / ".installed").touch()


@pytest.fixture
def behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Behind]:
    assert HERE.commit is not None, "the tests run from a clone of Polter"
    work = tmp_path / "work"
    git(tmp_path, "clone", "--quiet", "--depth", "1", f"file://{CHECKOUT}", str(work))
    assert git(work, "rev-parse", "HEAD").strip() == HERE.commit, "this checkout's commit, as the window has it"
    older = _commit_of_another_version(work)
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "--quiet", "--bare", "--initial-branch=main", str(origin))
    git(origin, "config", "receive.shallowUpdate", "true")  # the commit pushed later has its history cut
    git(work, "push", "--quiet", f"file://{origin}", "older:refs/heads/main")
    clone = tmp_path / "remote" / "polter"
    git(tmp_path, "clone", "--quiet", f"file://{origin}", str(clone))
    assert git(clone, "rev-parse", "HEAD").strip() == older
    _installed_in_place(clone)
    git(work, "push", "--quiet", "--force", f"file://{origin}", f"{HERE.commit}:refs/heads/main")  # main moved on
    env = login_env(tmp_path / "dirs", path=f"{clone / '.venv' / 'bin'}:/usr/bin:/bin")
    Path(env["POLTER_CONFIG_DIR"], "polter.toml").write_text('[[panes]]\nadapter = "shell"\ncommand = ["sh"]\n')
    sshd = SshHost(tmp_path / "sshd", {"behind": env})
    sshd.start()
    monkeypatch.setenv("PATH", f"{ssh_client(tmp_path / 'client', [sshd])}:{os.environ['PATH']}")
    try:
        yield Behind("behind", clone, origin)
    finally:
        subprocess.run(
            [sys.executable, "-m", "polter", "kill", "behind:updated"], capture_output=True, timeout=60, check=False
        )
        end_control_master("behind")
        sshd.stop()


async def test_the_command_the_version_mismatch_names_updates_the_host_and_attach_then_works(behind: Behind) -> None:
    refused = polter("attach", "behind:updated")
    assert refused.returncode == 1, refused
    [line] = refused.stderr.strip().splitlines()
    assert f"behind runs Polter 0.0.9 (protocol {wire.PROTOCOL_VERSION}) from {behind.clone} at " in line, line
    named = re.search(r"\(`(ssh [^`]+)`, from a remote that has it\)", line)
    assert named is not None, line
    done = subprocess.run(named[1], shell=True, capture_output=True, text=True, timeout=300)  # as the user types it
    assert done.returncode == 0, (named[1], done.stdout, done.stderr)
    assert git(behind.clone, "rev-parse", "HEAD").strip() == HERE.commit
    started = await relay_request(behind.host, ["--start", "", "--session", "updated"])
    assert started == wire.Started(name="updated"), started
    client = await connect_over_ssh(SshTarget(behind.host, "updated"), on_event=lambda event: None)
    try:
        assert client.welcome.info.name == "updated"
    finally:
        await client.aclose()
    listed = polter("ls", behind.host)
    assert listed.returncode == 0 and "behind:updated" in listed.stdout, listed
