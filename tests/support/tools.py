"""Installs the external programs tests need (npm packages, PyPI tools in their own venv) into ``.cache/``.

Installs are pinned, cached across runs, and safe under pytest-xdist (a file lock per package).
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
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".cache"


@contextmanager
def _locked(name: str) -> Iterator[None]:
    CACHE.mkdir(exist_ok=True)
    with open(CACHE / f".{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def _safe(spec: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", spec)


def npm_package(package: str, version: str) -> Path:
    """Install ``package@version`` from npm (once) into its own prefix under ``.cache/npm``; return the prefix
    (``prefix/node_modules/<package>``, ``prefix/package.json``)."""
    npm = shutil.which("npm")
    if npm is None:
        pytest.fail(
            f"npm is not on PATH, so {package}@{version} cannot be installed: install Node.js 20 or later "
            "(make test needs it; make test-fast runs without it)",
            pytrace=False,
        )
    prefix = CACHE / "npm" / _safe(f"{package}@{version}")
    installed = prefix / "node_modules" / package / "package.json"
    with _locked(_safe(package)):
        if not installed.exists():
            prefix.mkdir(parents=True, exist_ok=True)
            subprocess.run(
                [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund", "--loglevel=error",
                 f"{package}@{version}"],
                check=True,
                timeout=900,
            )
    return prefix


def npm_bin(package: str, version: str, command: str) -> Path:
    """Install ``package@version`` from npm (once) and return the path of its ``command``."""
    binary = npm_package(package, version) / "node_modules" / ".bin" / command
    if not binary.exists():
        raise RuntimeError(f"npm installed {package}@{version} but {binary} is missing")
    return binary


def pip_venv_bin(name: str, requirements: list[str], command: str) -> Path:
    """Install PyPI ``requirements`` into their own venv under ``.cache/venvs/name`` (for tools whose
    dependencies clash with ours, e.g. ``mcp-proxy`` needs ``mcp<2``) and return ``command``'s path."""
    venv = CACHE / "venvs" / name
    binary = venv / "bin" / command
    with _locked(f"venv-{name}"):
        if not binary.exists():
            subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
            subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", *requirements],
                           check=True, timeout=900, env={**os.environ, "PIP_DISABLE_PIP_VERSION_CHECK": "1"})
    return binary
