"""Real git repositories for tests: run git and shell commands, snapshot a folder file by file."""

from __future__ import annotations

import hashlib
import subprocess
from pathlib import Path

__all__ = ["git", "make_repo", "refs", "sh", "snapshot"]


def git(cwd: Path, *args: str, check: bool = True) -> str:
    """Run git as a user (or an agent) would; fail the test on an error (unless ``check`` is False)."""
    result = subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True)
    assert result.returncode == 0 or not check, f"git {' '.join(args)} in {cwd}: {result.stderr}"
    return result.stdout


def sh(cwd: Path, command: str) -> None:
    """A command run in a pane's directory (as an agent's shell tool would)."""
    result = subprocess.run(["sh", "-c", command], cwd=cwd, capture_output=True, text=True)
    assert result.returncode == 0, f"{command} in {cwd}: {result.stderr}"


def snapshot(folder: Path) -> dict[str, bytes]:
    """Every file under ``folder`` (``.git`` excluded) and a hash of its bytes: compared file by file."""
    files = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if relative.parts[0] == ".git" or path.is_dir():
            continue
        data = path.readlink().as_posix().encode() if path.is_symlink() else path.read_bytes()
        files[str(relative)] = hashlib.sha256(data).digest()
    return files


def refs(repo: Path) -> str:
    return git(repo, "for-each-ref", "--format=%(refname) %(objectname)")


def make_repo(path: Path) -> Path:
    """A repository on main with one commit: README, src/app.py, a .gitignore that ignores .env and more."""
    path.mkdir(parents=True)
    git(path, "init", "--quiet", "--initial-branch=main")
    git(path, "config", "user.name", "Test User")
    git(path, "config", "user.email", "test@example.com")
    git(path, "config", "commit.gpgsign", "false")
    (path / "README.md").write_text("# app\n")
    (path / "src").mkdir()
    (path / "src" / "app.py").write_text("def main():\n    return 1\n")
    (path / ".gitignore").write_text(".env\nnode_modules/\n*.log\nconfig/local/\n")
    git(path, "add", ".")
    git(path, "commit", "--quiet", "-m", "first")
    return path
