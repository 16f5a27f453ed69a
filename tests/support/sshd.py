"""A real OpenSSH server on a loopback port, standing in for another machine, and an ``ssh`` that reaches it.

Each :class:`SshHost` is an ``sshd`` of its own (Debian's openssh-server, installed by ``make system-tools``) on
a free port of 127.0.0.1, with a generated host key, one authorized key for the current user (root in CI: the
fixture's own ``sshd_config`` permits that login, by key only) and nothing of the machine's ssh set-up. The
"remote" machine is this one: what makes it another host is its environment, given to the login by the key's
``environment=`` options in the fixture's own ``authorized_keys`` (``PermitUserEnvironment``): a ``PATH`` that
finds ``polter`` as a user's login would find the one they installed (pipx puts it in ``~/.local/bin``; here it
is the checkout's ``.venv/bin``), and Polter's folders of its own, so two hosts' sessions never meet.

:func:`ssh_client` writes an ``ssh_config`` naming every host (``Host NAME`` → ``127.0.0.1:PORT``, the test's
key, its own known_hosts) and an ``ssh`` wrapper that runs ``ssh -F that_config``: put its folder first on
``PATH`` and Polter runs it as it runs the user's ``ssh``, and the user's own ``~/.ssh`` is never read.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

SSHD = shutil.which("sshd") or "/usr/sbin/sshd"
SSH = shutil.which("ssh") or "/usr/bin/ssh"
SSH_KEYGEN = shutil.which("ssh-keygen") or "/usr/bin/ssh-keygen"
VENV_BIN = Path(sys.executable).parent
"""Where the checkout's ``polter`` is (the test runs the venv's Python)."""


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _keygen(path: Path) -> None:
    subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True)


@dataclass
class SshHost:
    """One sshd on a port of its own. ``logins`` maps each name ``ssh`` knows it by to the environment that login
    gets: each name has a key of its own, so one sshd can be several "hosts" (one with polter, one without...)."""

    folder: Path
    logins: dict[str, dict[str, str]]
    port: int = 0
    process: subprocess.Popen[bytes] | None = None
    keys: dict[str, Path] = field(default_factory=dict)

    @property
    def log(self) -> Path:
        return self.folder / "sshd.log"

    def start(self) -> None:
        if not Path(SSHD).exists():
            raise AssertionError(f"sshd is not installed ({SSHD}): `make system-tools` installs openssh-server")
        self.folder.mkdir(parents=True, exist_ok=True)
        host_key = self.folder / "host_key"
        _keygen(host_key)
        lines = []
        for name, env in self.logins.items():
            key = self.folder / f"client-{name}"
            _keygen(key)
            self.keys[name] = key
            options = ",".join(f'environment="{variable}={value}"' for variable, value in env.items())
            lines.append(f"{options} {key.with_suffix('.pub').read_text().strip()}\n")
        authorized = self.folder / "authorized_keys"
        authorized.write_text("".join(lines))
        authorized.chmod(0o600)
        self.port = _free_port()
        config = self.folder / "sshd_config"
        config.write_text(
            "\n".join(
                [
                    f"Port {self.port}",
                    "ListenAddress 127.0.0.1",
                    f"HostKey {host_key}",
                    f"AuthorizedKeysFile {authorized}",
                    f"PidFile {self.folder / 'sshd.pid'}",
                    "PermitRootLogin prohibit-password",  # CI runs as root: by key only
                    "PasswordAuthentication no",
                    "KbdInteractiveAuthentication no",
                    "PubkeyAuthentication yes",
                    "PermitUserEnvironment yes",
                    "StrictModes no",  # the test's temporary folders are not the user's home
                    "UsePAM no",
                    "X11Forwarding no",
                    "AllowTcpForwarding no",
                    "PrintMotd no",
                    "LogLevel VERBOSE",
                    "",
                ]
            )
        )
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # root's sshd needs its privilege separation folder
        with open(self.log, "wb") as log:
            self.process = subprocess.Popen(
                [SSHD, "-D", "-e", "-f", str(config)], stdout=subprocess.DEVNULL, stderr=log
            )
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"sshd exited with {self.process.returncode}: {self.log.read_text()}")
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            time.sleep(0.02)  # polling the port with a deadline
        raise AssertionError(f"sshd did not listen on 127.0.0.1:{self.port}: {self.log.read_text()}")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def login_env(polter_dirs: Path, *, path: str | None = None) -> dict[str, str]:
    """What a host's logins get: ``PATH`` (the checkout's polter first, unless ``path`` is given), Polter's
    folders under ``polter_dirs`` and a ``HOME`` of its own there (another machine's home: the login's shell reads
    no ``~/.bashrc`` of this machine's). The runtime dir is short: a socket's path has at most 107 bytes."""
    runtime = Path("/tmp") / f"psr-{os.getpid()}-{abs(hash(polter_dirs)) % 10**6}"
    runtime.mkdir(mode=0o700, exist_ok=True)
    for name in ("config", "state", "worktrees", "home"):
        (polter_dirs / name).mkdir(parents=True, exist_ok=True)
    return {
        "HOME": str(polter_dirs / "home"),
        "PATH": path if path is not None else f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin",
        "POLTER_RUNTIME_DIR": str(runtime),
        "POLTER_CONFIG_DIR": str(polter_dirs / "config"),
        "POLTER_STATE_DIR": str(polter_dirs / "state"),
        "POLTER_WORKTREES_DIR": str(polter_dirs / "worktrees"),
        "PS1": "$ ",
    }


def ssh_client(
    folder: Path,
    hosts: list[SshHost],
    *,
    unreachable: str | None = None,
    stranger: str | None = None,
    proxy_command: str | None = None,
) -> Path:
    """An ``ssh_config`` naming every login of ``hosts`` (and ``unreachable``: a loopback port nobody listens on;
    ``stranger``: a host with a key it does not know; ``proxy_command``: how ssh reaches each host, ``%h %p``) and an
    ``ssh`` wrapper using it; the folder to put first on ``PATH``."""
    folder.mkdir(parents=True, exist_ok=True)
    config = folder / "ssh_config"
    known = folder / "known_hosts"
    entries = []
    with open(known, "w") as handle:
        for host in hosts:
            kind, key = (host.folder / "host_key.pub").read_text().split()[:2]
            handle.write(f"[127.0.0.1]:{host.port} {kind} {key}\n")
    common = f"  HostName 127.0.0.1\n  User {_user()}\n  UserKnownHostsFile {known}\n  IdentitiesOnly yes\n"
    common += "  StrictHostKeyChecking yes\n  LogLevel ERROR\n"
    for host in hosts:
        for name, key in host.keys.items():
            proxy = f"  ProxyCommand {proxy_command}\n" if proxy_command else ""
            entries.append(f"Host {name}\n  Port {host.port}\n  IdentityFile {key}\n{proxy}{common}")
    if unreachable is not None:
        entries.append(f"Host {unreachable}\n  Port {_free_port()}\n{common}")
    if stranger is not None and hosts:
        other = folder / "stranger_key"
        if not other.exists():
            _keygen(other)
        entries.append(f"Host {stranger}\n  Port {hosts[0].port}\n  IdentityFile {other}\n{common}")
    config.write_text("\n".join(entries))
    wrapper = folder / "ssh"
    wrapper.write_text(f'#!/bin/sh\nexec {SSH} -F {config} "$@"\n')
    wrapper.chmod(0o755)
    return folder


def _user() -> str:
    import pwd

    return pwd.getpwuid(os.getuid()).pw_name


OTHER_COMMIT = "0123456789" * 4
"""The commit of :func:`other_polter`'s clone."""


def other_polter(folder: Path, version: str) -> Path:
    """A folder whose ``polter`` is this checkout's Polter with another version number (a host whose clone of
    Polter is at another commit): the package copied into a clone-like folder (``pyproject.toml``, and a
    ``.git`` whose HEAD is :data:`OTHER_COMMIT`), its ``__version__`` changed."""
    clone = folder / "clone"
    package = clone / "polter"
    shutil.copytree(
        Path(__file__).resolve().parents[2] / "polter", package, ignore=shutil.ignore_patterns("__pycache__")
    )
    shutil.copy(Path(__file__).resolve().parents[2] / "pyproject.toml", clone / "pyproject.toml")
    (clone / ".git").mkdir()
    (clone / ".git" / "HEAD").write_text(OTHER_COMMIT + "\n")
    init = package / "__init__.py"
    text = init.read_text()
    init.write_text(text.replace('__version__ = "', f'__version__ = "{version}"  # was "', 1))
    binary = folder / "bin"
    binary.mkdir()
    wrapper = binary / "polter"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH={package.parent} exec {sys.executable} -m polter "$@"\n')
    wrapper.chmod(0o755)
    return binary


def relay_links() -> list[int]:
    """This process's ssh children that run ``polter relay`` (a window's links; over Polter's ControlMaster, the
    channel that a kill ends, the relay on the host with it)."""
    found = []
    for task in Path(f"/proc/{os.getpid()}/task").iterdir():
        for pid in (task / "children").read_text().split():
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
            if any(part.endswith(b"ssh") for part in cmdline[:2]) and b"relay" in b" ".join(cmdline):
                found.append(int(pid))
    return found


def control_master(host: str) -> int:
    """The pid of Polter's ssh ControlMaster to ``host`` (the process that holds the TCP connection)."""
    from polter.wire.ssh import control_options

    checked = subprocess.run(["ssh", *control_options(), "-O", "check", host], capture_output=True, text=True)
    found = re.search(r"Master running \(pid=(\d+)\)", checked.stderr)
    assert found is not None, f"no ControlMaster to {host}: {checked.stderr}"
    return int(found[1])


def end_control_master(host: str) -> None:
    from polter.wire.ssh import control_options

    subprocess.run(["ssh", *control_options(), "-O", "exit", host], capture_output=True, check=False, timeout=30)
