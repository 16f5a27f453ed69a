"""A pane's program inside a bubblewrap sandbox compiled from its role (docs/sandbox.md).

The sandbox wraps the whole pane, the CLI's own process included:

- **files**: the whole system read-only; the pane's directory, the home and the folders the role's write rules
  name writable where the role lets it write (:mod:`polter.sandbox.rules`); the CLI's own state writable where
  the CLI keeps it; the targets no role may write (git hooks and configs, the project's ``.polter``, files that
  run code in the human's next shell) read-only even inside a writable tree; Polter's state and config, the
  sessions' sockets and the user's runtime dir (``/run/user/UID``: the D-Bus and systemd buses, agents' sockets)
  not in view at all; a private ``/tmp``.
- **processes**: a PID namespace of its own: the pane sees only its own processes.
- **network**: a network namespace with only loopback. Inside it, ``socat`` forwards the gateway's port to the
  gateway's panes socket (which never serves the control API) and a proxy port to the pane's own socket of the
  egress proxy, which decides by the role's ``web`` rules; a CLI's model API on loopback is reached through the
  proxy too. ``HTTP(S)_PROXY`` point at it.
- **privileges**: no capabilities, no new privileges (setuid programs do not elevate), and no user namespaces
  of its own (``unshare``, and with it every nested sandbox, fails).

Where bubblewrap or socat is missing or the kernel refuses the namespaces, the pane does not start and says
what to install or enable (:func:`unavailable`).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

import polter
from polter.gitdirs import git_dirs, repository
from polter.paths import ENV_SANDBOX, bundled_dir
from polter.sandbox.rules import WriteRules
from polter.terminal.launch import LaunchSpec

__all__ = [
    "GATEWAY_SOCKET_INSIDE",
    "EGRESS_SOCKET_INSIDE",
    "PaneSandbox",
    "sandboxed",
    "unavailable",
]

GATEWAY_SOCKET_INSIDE: Final = "/run/polter/gateway/gateway.sock"
EGRESS_SOCKET_INSIDE: Final = "/run/polter/egress/egress.sock"
PROXY_PORT_CHOICES: Final = (3128, 8118, 18080, 28080)
"""The proxy's port inside the pane's own network (any free number: the namespace is the pane's alone)."""

LAUNCHERS: Final = 1
"""bubblewrap: the pane's program is its child, the first process of the pane's PID namespace (``--as-pid-1``).

No reaper of bubblewrap's own stands in between, and bubblewrap does not kill the pane when it dies
(``--die-with-parent`` would): closing a pane hangs its program up as a closed terminal does, and the program
cleans up (a lock file, a half-written file) before its namespace ends with it."""
HOME_CODE_FILES: Final = (
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".bash_logout",
    ".profile",
    ".zshrc",
    ".zshenv",
    ".zprofile",
    ".zlogin",
    ".config/fish",
    ".gitconfig",
    ".config/git",
    ".ssh",
    ".config/autostart",
    ".config/systemd",
    ".config/environment.d",
    ".pam_environment",
    ".xprofile",
    ".xsession",
    ".xinitrc",
    ".bash_aliases",
    ".bashrc.d",
    ".config/bash",
    ".inputrc",
    ".vimrc",
    ".vim",
    ".config/nvim",
    ".emacs",
    ".emacs.d",
    ".config/emacs",
    ".tmux.conf",
    ".config/tmux",
    ".screenrc",
    ".npmrc",
    ".yarnrc",
    ".config/pip",
    ".pip",
    ".pypirc",
    ".netrc",
    ".aws",
    ".kube",
    ".docker",
    ".config/gcloud",
    ".gnupg",
    ".local/share/applications",
    ".config/Code",
    ".vscode",
    ".vscode-server",
    ".cargo/config.toml",
    ".config/direnv",
    ".envrc",
)
"""Files in the home that run code (or grant logins) in the human's own sessions, outside any sandbox: shells'
start files, editors' and tmux's configs (they run commands), package managers' configs (scripts, indexes),
clouds' and containers' configs (credential processes, exec plugins), GnuPG, desktop entries, VS Code's settings
and extensions. Never writable from a pane, whatever its role lets it write in the home."""
HIDDEN_SYSTEM: Final = ("/tmp", "/run", "/dev/shm", "/var/tmp")
"""Replaced by empty private folders: other programs' sockets (tmux, X11, D-Bus, ssh-agent, Docker) and files."""
UNSET_INSIDE: Final = (
    "XDG_RUNTIME_DIR",
    "DBUS_SESSION_BUS_ADDRESS",
    "SSH_AUTH_SOCK",
    "GPG_AGENT_INFO",
    "TMUX",
    "TMUX_PANE",
    "DISPLAY",
    "WAYLAND_DISPLAY",
)
"""Variables naming sockets the pane cannot reach."""

_READY_SCRIPT: Final = r"""
forward() { "$SETSID" "$SOCAT" "TCP-LISTEN:$1,bind=127.0.0.1,reuseaddr,fork" "$2" </dev/null >/dev/null 2>&1 & }
listening() {
    while read -r _ address _ state _; do
        [ "$state" = 0A ] && [ "${address#*:}" = "$1" ] && return 0
    done </proc/net/tcp
    return 1
}
"""


@dataclass(frozen=True)
class PaneSandbox:
    """What the host knows of a pane, for its sandbox."""

    project: Path
    home: Path
    rules: WriteRules
    runtime_dir: Path
    """The pane's runtime dir: read-only but for the CLI's own state folders."""
    polter_files: tuple[Path, ...] = ()
    """The files Polter wrote for the CLI (read-only even inside a writable state folder)."""
    state_paths: tuple[Path, ...] = ()
    """The CLI's own state, writable: its folders in the runtime dir, each entry it keeps in the user's folder (not
    that folder whole: the user's settings there run code in the human's own sessions), folders it keeps in place."""
    held: tuple[Path, ...] = ()
    """The CLI's folders of settings and code in the user's home (``~/.claude``, ``~/.codex``), which the human's own
    CLI runs outside Polter: read-only whatever the role, but for the state paths inside them."""
    private_copies: tuple[tuple[Path, Path], ...] = ()
    """(copy, original): the pane reads and writes its own copy in place of the user's file."""
    hidden: tuple[Path, ...] = ()
    """Polter's state and config dirs and the sessions' sockets: replaced by empty folders."""
    protected: tuple[Path, ...] = ()
    """More paths no role may write (besides the git ones found in the project and the home's code files)."""
    gateway_port: int = 0
    gateway_socket_dir: Path | None = None
    egress_socket_dir: Path | None = None
    loopback_ports: tuple[int, ...] = ()
    """Ports of loopback services the CLI needs (its model API on 127.0.0.1), reached through the proxy."""
    keep_visible: tuple[Path, ...] = field(default_factory=tuple)
    """Folders the program needs that may lie under a hidden one (``PATH`` entries, Python, Polter itself)."""


SYSTEM_PATH: Final = "/usr/local/bin:/usr/bin:/bin"


def system_program(name: str) -> str | None:
    """A program the sandbox needs, found on ``PATH`` or where the system keeps it (a pane's ``PATH`` may be the
    user's own choice, without the system's folders)."""
    return shutil.which(name) or shutil.which(name, path=SYSTEM_PATH)


_WORKS: set[str] = set()
"""The bubblewraps that started a sandbox here (a refusal is asked again: the user may fix it meanwhile)."""


def _probe(bwrap: str) -> str | None:
    """Start an empty sandbox (once, if it works): the kernel's answer (user namespaces refused, ...) or None."""
    if bwrap in _WORKS:
        return None
    argv = [bwrap, "--ro-bind", "/", "/", "--unshare-all", "--unshare-user", "--disable-userns"]
    argv += ["--cap-drop", "ALL", "--die-with-parent", "--proc", "/proc", "--dev", "/dev", "/bin/sh", "-c", ":"]
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return str(exc)
    if done.returncode != 0:
        return done.stderr.strip() or f"bwrap exited {done.returncode}"
    _WORKS.add(bwrap)
    return None


def unavailable() -> str | None:
    """Why no pane can be sandboxed here (what to install or enable), or None when it can."""
    if not sys.platform.startswith("linux"):
        return (
            f"Polter's pane sandbox needs Linux (bubblewrap and namespaces); on {sys.platform} no agent pane can "
            "start. Run Polter on Linux, or open only a shell pane whose role opts out ([sandbox] shell = "
            '"unconfined").'
        )
    bwrap, socat = system_program("bwrap"), system_program("socat")
    missing = [name for name, path in (("bubblewrap", bwrap), ("socat", socat)) if path is None]
    if missing:
        return (
            f"the pane's sandbox needs {' and '.join(missing)}, which is not installed: "
            f"sudo apt install {' '.join(missing)} (or your system's packages of the same names)"
        )
    assert bwrap is not None
    refused = _probe(bwrap)
    if refused is not None:
        return (
            f"the kernel refused the pane's sandbox ({refused}): unprivileged user namespaces must be enabled "
            "(sysctl kernel.unprivileged_userns_clone=1; on Ubuntu 24.04 or later, the bwrap AppArmor profile "
            "or kernel.apparmor_restrict_unprivileged_userns=0)"
        )
    return None


def _under(path: Path, folders: Iterable[str | Path]) -> bool:
    text = str(path)
    return any(text == str(folder) or text.startswith(str(folder).rstrip("/") + "/") for folder in folders)


def _hooks_path(project: Path) -> Path | None:
    """The folder named by ``core.hooksPath`` (git runs its hooks from there), as git reads it."""
    git = shutil.which("git")
    if git is None:
        return None
    try:
        done = subprocess.run(
            [git, "-C", str(project), "config", "--path", "--get", "core.hooksPath"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    value = done.stdout.strip()
    return (project / value).resolve() if done.returncode == 0 and value else None


def protected_paths(sandbox: PaneSandbox) -> list[Path]:
    """Every existing path the pane may not write: git hooks and configs (submodules' too), the folder of
    ``core.hooksPath``, the project's ``.polter``, the home's code files and the caller's own."""
    found: list[Path] = []
    for git_dir in git_dirs(sandbox.project):
        hooks = git_dir / "hooks"
        if not hooks.exists():  # created empty so that it can be held read-only (git makes it anyway)
            with contextlib.suppress(OSError):
                hooks.mkdir()
        found += [hooks, git_dir / "config", git_dir / "config.worktree"]
        modules = git_dir / "modules"
        if modules.is_dir():
            for module_config in modules.glob("**/config"):
                found += [module_config, module_config.parent / "hooks"]
    hooks_path = _hooks_path(sandbox.project)
    if hooks_path is not None:
        found.append(hooks_path)
    found.append(sandbox.project / ".polter")
    found += [sandbox.home / name for name in HOME_CODE_FILES]
    found += sandbox.protected
    return [path for path in dict.fromkeys(found) if os.path.lexists(path)]


def _proxy_port(sandbox: PaneSandbox) -> int:
    taken = {sandbox.gateway_port, *sandbox.loopback_ports}
    return next(port for port in PROXY_PORT_CHOICES if port not in taken)


def mounts(sandbox: PaneSandbox) -> list[str]:
    """bubblewrap's mount options, in order: a later mount lies over an earlier one. A path held read-only is
    mounted only where a writable mount would otherwise open it (each mount costs the pane's start about 1 ms)."""
    args = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    for system in HIDDEN_SYSTEM:
        if os.path.isdir(system):
            args += ["--tmpfs", system]
    seen = [sandbox.project, sandbox.home, *sandbox.keep_visible]
    writable: list[Path] = []

    def in_view(path: Path) -> bool:
        """Whether ``path`` is in the pane's view (not in a hidden folder, or in one the pane was given back)."""
        return not _under(path, sandbox.hidden) and (not _under(path, HIDDEN_SYSTEM) or _under(path, seen))

    def bind(path: Path | str, *, write: bool, at: Path | str | None = None) -> None:
        args.extend(("--bind" if write else "--ro-bind", str(path), str(at or path)))
        if write:
            writable.append(Path(at or path))

    def hold(path: Path) -> None:
        """``path`` read-only, where it lies in a writable tree (out of view is out of reach)."""
        if in_view(path) and _under(path, writable):
            bind(path, write=False)

    for needed in sandbox.keep_visible:  # (one the user cannot reach is no folder of theirs: bwrap would fail)
        if _under(needed, HIDDEN_SYSTEM) and needed.is_dir() and os.access(needed, os.R_OK | os.X_OK):
            bind(needed, write=False)
    rules = sandbox.rules
    if sandbox.home.is_dir() and (rules.home or _under(sandbox.home, HIDDEN_SYSTEM)):
        bind(sandbox.home, write=rules.home)
    top, git_dirs = repository(sandbox.project)
    if top is not None and top != sandbox.project and _under(top, HIDDEN_SYSTEM):
        bind(top, write=False)  # the repository around the pane's folder, for git to find
        seen.append(top)
    bind(sandbox.project, write=rules.project)
    for git_dir in sorted(git_dirs, key=lambda path: len(path.parts)):  # a linked worktree's: commits write there
        if not _under(git_dir, [sandbox.project]) and git_dir.is_dir():
            bind(git_dir, write=rules.project)
            seen.append(git_dir)
    for folder in rules.folders:
        path = Path(folder.path)
        if path.exists() and (folder.writable or in_view(path)):
            bind(path, write=folder.writable)
    for path in sandbox.hidden:
        if path.is_dir():
            args += ["--tmpfs", str(path)]
    for held in sandbox.held:
        if held.is_dir():
            hold(held)
    bind(sandbox.runtime_dir, write=False)
    for state in sandbox.state_paths:
        if os.path.lexists(state):
            bind(state, write=True)
    for copy, original in sandbox.private_copies:
        if copy.is_file() and os.path.lexists(original) and in_view(original):
            bind(copy, write=True, at=original)
    for written in sandbox.polter_files:
        if written.exists() and not written.is_symlink():
            hold(written)
    for path in protected_paths(sandbox):
        hold(path)
    if sandbox.gateway_socket_dir is not None:
        bind(sandbox.gateway_socket_dir, write=False, at=Path(GATEWAY_SOCKET_INSIDE).parent)
    if sandbox.egress_socket_dir is not None:
        bind(sandbox.egress_socket_dir, write=False, at=Path(EGRESS_SOCKET_INSIDE).parent)
    return args


def network_script(sandbox: PaneSandbox, proxy_port: int) -> str:
    """The pane's first program: start the forwarders, wait until each listens, then ``exec`` the pane's own."""
    forwards: list[tuple[int, str]] = []
    if sandbox.gateway_socket_dir is not None and sandbox.gateway_port:
        forwards.append((sandbox.gateway_port, f"UNIX-CONNECT:{GATEWAY_SOCKET_INSIDE}"))
    if sandbox.egress_socket_dir is not None:
        forwards.append((proxy_port, f"UNIX-CONNECT:{EGRESS_SOCKET_INSIDE}"))
        forwards += [
            (port, f"PROXY:127.0.0.1:127.0.0.1:{port},proxyport={proxy_port}") for port in sandbox.loopback_ports
        ]
    programs = {name.upper(): shlex.quote(system_program(name) or name) for name in ("socat", "setsid")}
    lines = [*(f"{name}={path}" for name, path in programs.items()), _READY_SCRIPT]
    lines += [f"forward {port} {shlex.quote(target)}" for port, target in forwards]
    for port, _target in forwards:
        lines.append(
            f"n=0; until listening {port:04X}; do n=$((n+1)); "
            f'[ $n -gt 20000 ] && {{ echo "polter: the sandbox\'s network did not start" >&2; exit 70; }}; done'
        )
    lines.append('exec "$@"')
    return "\n".join(lines)


def proxy_environment(proxy_port: int) -> dict[str, str]:
    """How every common client finds the egress proxy (and goes straight to loopback, which is forwarded)."""
    proxy = f"http://127.0.0.1:{proxy_port}"
    variables = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY")
    env = {name: proxy for name in variables} | {name.lower(): proxy for name in variables}
    env["NO_PROXY"] = env["no_proxy"] = "127.0.0.1,localhost,::1"
    env["NODE_USE_ENV_PROXY"] = "1"  # Node's own fetch follows the variables only when told to
    return env


def sandboxed(spec: LaunchSpec, sandbox: PaneSandbox, *, bwrap: str | None = None) -> LaunchSpec:
    """``spec`` run inside the pane's sandbox."""
    bwrap = bwrap or system_program("bwrap") or "bwrap"
    proxy_port = _proxy_port(sandbox)
    argv: list[str] = [bwrap, "--unshare-all", "--unshare-user", "--disable-userns", "--cap-drop", "ALL"]
    argv += ["--as-pid-1", "--hostname", "polter-pane"]
    argv += mounts(sandbox)
    argv += ["--chdir", str(spec.cwd or sandbox.project)]
    argv += ["--", "/bin/sh", "-c", network_script(sandbox, proxy_port), "polter-sandbox", *spec.argv]
    env = dict(spec.env)
    if sandbox.egress_socket_dir is not None:
        env |= proxy_environment(proxy_port)
    env[ENV_SANDBOX] = "1"
    unset = tuple(dict.fromkeys((*spec.unset_env, *UNSET_INSIDE)))
    return spec.model_copy(update={"argv": tuple(argv), "env": env, "unset_env": unset, "launchers": LAUNCHERS})


def _with_resolved(folders: Iterable[Path]) -> tuple[Path, ...]:
    found = []
    for folder in folders:
        found.append(folder)
        with contextlib.suppress(OSError):
            found.append(folder.resolve())
    return tuple(dict.fromkeys(found))


def _path_folders(env: dict[str, str]) -> list[Path]:
    return [Path(entry) for entry in env.get("PATH", os.environ.get("PATH", "")).split(os.pathsep) if entry]


def program_folders(env: dict[str, str], argv: Sequence[str]) -> tuple[Path, ...]:
    """What the pane's program needs to see even under a hidden folder: ``PATH``'s folders, this Python and Polter."""
    folders = [
        *_path_folders(env),
        Path(sys.prefix),
        Path(sys.base_prefix),
        Path(polter.__file__).resolve().parent.parent,
    ]
    if argv and os.path.isabs(argv[0]):
        folders.append(Path(argv[0]).parent)
    return _with_resolved(folders)


def programs_run_outside(env: dict[str, str], home: Path, project: Path) -> tuple[Path, ...]:
    """Folders of programs that run outside every pane, which no pane may write whatever its role: the Python and the
    Polter that Polter's own processes run (a ``sitecustomize.py`` or a ``.pth`` file planted there would run in
    them), and the home's folders on ``PATH`` and of the user's Python packages (``~/.local/bin``, pyenv's shims),
    whose programs the human's own shells run. (A ``PATH`` folder that holds the project is left as the role says.)"""
    polter_dirs = [Path(sys.prefix), Path(sys.base_prefix), bundled_dir("plugins"), bundled_dir("roles")]
    polter_dirs.append(Path(__file__).resolve().parent.parent)  # the polter package
    home_dirs = [folder for folder in _path_folders(env) if folder.is_absolute() and _under(folder, [home])]
    home_dirs += [home / ".local" / "bin", home / ".local" / "lib"]
    home_dirs = [folder for folder in home_dirs if folder != home and not _under(project, [folder])]
    return _with_resolved([*polter_dirs, *home_dirs])
