"""Installs the external programs tests need (npm packages, PyPI tools in their own venv) into a cache of the user's.

Installs are pinned, kept across runs and across clones, and safe under pytest-xdist and beside another clone's
run (a lock file beside each install). They live in ``TOOLS``, the user's cache (``$POLTER_TEST_TOOLS``, else
``$XDG_CACHE_HOME/polter-test-tools``, else ``~/.cache/polter-test-tools``), not in the clone: the five CLIs alone
are 1.5 GB and 40 s of ``npm install``, which a second clone or worktree of Polter would otherwise pay again. An
install is made beside its place and moved there whole, so an interrupted one is never taken for done.
A test that needs ``npm`` where it is missing fails and says so: Node.js is a prerequisite of ``make test``
(README), like Python, and a skip would let the end-to-end tests pass without driving a single real CLI.
"""

from __future__ import annotations

import fcntl
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache"
"""This clone's own scratch (the run's report)."""


def _tools() -> Path:
    chosen = os.environ.get("POLTER_TEST_TOOLS")
    if chosen:
        return Path(chosen)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "polter-test-tools"


TOOLS = _tools()
"""Where the pinned tools are installed, shared by every clone of the user's (read once: tests change ``HOME``)."""


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    """Hold ``folder``'s lock (a file beside it): one install of it at a time, across workers and clones."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    with open(folder.with_name(f".{folder.name}.lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _safe(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", spec)


def install_once(folder: Path, done: Path, install: Callable[[Path], None]) -> Path:
    """``folder``, installed by ``install(scratch)`` unless ``done`` (a file the install makes) is there. Under the
    folder's lock, the install runs in a scratch folder beside it that is then moved in whole, so a failed or
    interrupted install leaves nothing to be taken for done (npm writes no absolute path that a move breaks)."""
    with _locked(folder):
        if not done.exists():
            scratch = folder.with_name(f"{folder.name}.partial-{os.getpid()}")
            shutil.rmtree(scratch, ignore_errors=True)
            scratch.mkdir(parents=True)
            try:
                install(scratch)
                shutil.rmtree(folder, ignore_errors=True)  # left by an install that the move never finished
                scratch.rename(folder)
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
    return folder


def npm_executable() -> str:
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail("npm is not on PATH: install Node.js 20 or later (make test needs it; make test-fast runs "
                    "without it)", pytrace=False)
    return npm


def npm_package(package: str, version: str) -> Path:
    """Install ``package@version`` from npm (once) into its own prefix under ``TOOLS/npm``; return the prefix
    (``prefix/node_modules/<package>``, ``prefix/package.json``)."""
    npm = npm_executable()
    prefix = TOOLS / "npm" / _safe(f"{package}@{version}")
    return install_once(prefix, prefix / "node_modules" / package / "package.json", lambda scratch: subprocess.run(
        [npm, "install", "--prefix", str(scratch), "--no-audit", "--no-fund", "--loglevel=error",
         f"{package}@{version}"],
        check=True, timeout=900,
    ))  # fmt: skip


def npm_bin(package: str, version: str, command: str) -> Path:
    """Install ``package@version`` from npm (once) and return the path of its ``command``."""
    binary = npm_package(package, version) / "node_modules" / ".bin" / command
    if not binary.exists():
        raise RuntimeError(f"npm installed {package}@{version} but {binary} is missing")
    return binary


def pip_venv_bin(name: str, requirements: list[str], command: str) -> Path:
    """Install PyPI ``requirements`` into their own venv under ``TOOLS/venvs/name`` (for tools whose
    dependencies clash with ours, e.g. ``mcp-proxy`` needs ``mcp<2``) and return ``command``'s path. A venv
    names its own path in its scripts, so it is made in place and marked done last."""
    venv = TOOLS / "venvs" / name
    done = venv / ".installed"
    with _locked(venv):
        if not done.exists():
            shutil.rmtree(venv, ignore_errors=True)
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *requirements],
                           check=True, timeout=900, env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
            done.touch()
    return venv / "bin" / command
