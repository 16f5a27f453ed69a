"""Where Polter keeps things, and the environment variables that carry identity into a pane.

Every location can be overridden by an environment variable so that tests (and users with unusual
setups) never touch the real user directories.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from polter.errors import ConfigError

__all__ = [
    "ENV_CONFIG_DIR",
    "ENV_GATEWAY_URL",
    "ENV_RUNTIME_DIR",
    "ENV_TMPDIR",
    "ENV_SANDBOX",
    "ENV_STATE_DIR",
    "ENV_TOKEN",
    "ENV_WORKTREES_DIR",
    "bundled_dir",
    "config_dir",
    "fallback_runtime_dir",
    "lasting_runtime_dir",
    "make_private_dirs",
    "project_roles_dir",
    "runtime_dir",
    "state_dir",
    "worktrees_dir",
]

APP_NAME = "polter"

ENV_TOKEN = "POLTER_TOKEN"
"""The pane's bearer token, injected into every pane's environment; never written to user files."""
ENV_GATEWAY_URL = "POLTER_GATEWAY_URL"
"""The gateway's base URL (``http://127.0.0.1:PORT``), injected into every pane's environment."""
ENV_CONFIG_DIR = "POLTER_CONFIG_DIR"
"""Overrides the user's config dir (roles, plugins, the app config)."""
ENV_STATE_DIR = "POLTER_STATE_DIR"
"""Overrides the state dir (``gateway.json``, audit log, per-pane runtime dirs, saved layout)."""
ENV_WORKTREES_DIR = "POLTER_WORKTREES_DIR"
"""Overrides where panes' git worktrees are made (see :func:`worktrees_dir`)."""

ENV_SANDBOX = "POLTER_SANDBOX"
"""Set inside every sandboxed pane: ``polter`` there acts only as that pane, never for the human."""

ENV_RUNTIME_DIR = "POLTER_RUNTIME_DIR"
"""Overrides the runtime dir (the sessions' sockets and locks)."""
ENV_TMPDIR = "POLTER_TMPDIR"
"""Where the runtime dir falls back to (``polter-UID`` in it) instead of ``/tmp``: see :func:`fallback_runtime_dir`."""

_PACKAGE_DIR = Path(__file__).resolve().parent


def config_dir() -> Path:
    """The user's config dir: ``$POLTER_CONFIG_DIR`` or the platform's (``~/.config/polter``)."""
    override = os.environ.get(ENV_CONFIG_DIR)
    return Path(override) if override else platformdirs.user_config_path(APP_NAME)


def state_dir() -> Path:
    """The state dir: ``$POLTER_STATE_DIR`` or the platform's (``~/.local/state/polter``)."""
    override = os.environ.get(ENV_STATE_DIR)
    return Path(override) if override else platformdirs.user_state_path(APP_NAME)


def runtime_dir() -> Path:
    """Where sessions keep their sockets: ``$POLTER_RUNTIME_DIR``, else ``$XDG_RUNTIME_DIR/polter``
    (a tmpfs of the user's, mode 0700), else ``/tmp/polter-UID``. Created 0700 and checked to be the
    user's own: a socket there is how a window reaches a session."""
    override = os.environ.get(ENV_RUNTIME_DIR)
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if override:
        path = Path(override)
    elif xdg and Path(xdg).is_dir():
        path = Path(xdg) / APP_NAME
    else:
        path = fallback_runtime_dir()
    return _private_dir(path)


def lasting_runtime_dir() -> Path:
    """Where a session keeps the sockets its panes' sandboxes mount (the gateway's, the egress proxy's):
    ``$POLTER_RUNTIME_DIR``, else ``/tmp/polter-UID``, never ``$XDG_RUNTIME_DIR``. logind removes that one when the
    login's last session ends, under sessions that run on, and a sandbox keeps the folder it mounted at its start:
    a socket made again in a new folder would be out of its view."""
    override = os.environ.get(ENV_RUNTIME_DIR)
    return _private_dir(Path(override) if override else fallback_runtime_dir())


def _private_dir(path: Path) -> Path:
    """``path``, made 0700 if missing and checked to be the user's own and private (sockets there are a way in)."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.stat()
    if info.st_uid != os.getuid() or info.st_mode & 0o077:
        raise ConfigError("must be a private directory of yours (mode 0700): fix or remove it", path=path)
    return path


def make_private_dirs(path: Path) -> None:
    """Make ``path`` and every missing folder above it mode 0700 (``mkdir(parents=True)`` makes the ones above with
    the umask's mode: a runtime dir made again that way would be open to other users, and refused)."""
    missing: list[Path] = []
    while not path.is_dir():
        missing.append(path)
        if path.parent == path:
            break
        path = path.parent
    for folder in reversed(missing):
        folder.mkdir(mode=0o700, exist_ok=True)


def fallback_runtime_dir() -> Path:
    """``/tmp/polter-UID``: the runtime dir where there is no ``$XDG_RUNTIME_DIR`` (and where a session whose
    login's runtime dir was removed at logout makes its socket again). ``$POLTER_TMPDIR`` names another folder
    than ``/tmp`` for it (as ``$TMUX_TMPDIR`` does for tmux)."""
    return Path(os.environ.get(ENV_TMPDIR) or "/tmp") / f"{APP_NAME}-{os.getuid()}"


def worktrees_dir() -> Path:
    """Where panes' linked git worktrees live: ``$POLTER_WORKTREES_DIR`` or the platform's data dir
    (``~/.local/share/polter/worktrees``). Outside every checkout, so none shows an untracked folder and
    no tool finds a repository nested in another; apart from the state dir, which roles protect."""
    override = os.environ.get(ENV_WORKTREES_DIR)
    return Path(override) if override else platformdirs.user_data_path(APP_NAME) / "worktrees"


def project_roles_dir(cwd: Path | None = None) -> Path:
    """A project's own roles: ``.polter/roles`` under the working directory."""
    return (cwd or Path.cwd()) / ".polter" / "roles"


def bundled_dir(name: str) -> Path:
    """A folder shipped with Polter (``roles`` or ``plugins``).

    In a checkout (editable install) it is the top-level folder of the repository; in a wheel it is
    packaged under ``polter/_bundled/``.
    """
    packaged = _PACKAGE_DIR / "_bundled" / name
    if packaged.is_dir():
        return packaged
    return _PACKAGE_DIR.parent / name
