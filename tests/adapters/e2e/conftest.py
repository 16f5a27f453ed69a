"""The real AI CLIs for the end-to-end tests: installed from npm at pinned versions (kept in the user's cache of test tools),
each checked to be the version it claims, and reported in the run's summary."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from unittest import mock

from support.report import report
from support.tools import npm_bin, npm_package

from polter.adapters import Adapter
from polter.adapters.plugins import discover

from ..conftest import write_skill

PINNED = {
    "claude-code": ("@anthropic-ai/claude-code", "2.1.332", "claude"),
    "codex": ("@openai/codex", "0.171.0", "codex"),
    "gemini-cli": ("@google/gemini-cli", "0.61.0", "gemini"),
    "qwen-code": ("@qwen-code/qwen-code", "0.24.4", "qwen"),
    "opencode": ("opencode-ai", "1.18.33", "opencode"),
}


@dataclass(frozen=True)
class RealCli:
    name: str
    adapter: Adapter
    binary: Path
    version: str

    @property
    def bin_dir(self) -> Path:
        return self.binary.parent


_CHECKED: dict[str, RealCli] = {}


def real_cli(name: str) -> RealCli:
    """Install (once) and return the pinned CLI, with its adapter pointed at it.

    Its version is checked once per test process, in a home of its own (``--version`` starts the CLI: Gemini
    CLI's start costs seconds), so that each test's home holds only what the CLI wrote in the test (a confined
    opencode starts in a home it never ran in: test_kernel_sandbox_e2e)."""
    if name not in _CHECKED:
        package, version, command = PINNED[name]
        binary = npm_bin(package, version, command)
        adapter = type(discover(entry_points=False).get(name))(executable=binary)
        with (
            tempfile.TemporaryDirectory(prefix="cli-home-", ignore_cleanup_errors=True) as home,
            mock.patch.dict(os.environ, {"HOME": home}),
        ):
            detection = adapter.detect()
        assert detection.installed and detection.version == version, detection
        report(f"{adapter.display_name} {detection.version} ({package}@{version}): driven by the adapter '{name}'")
        _CHECKED[name] = RealCli(name, adapter, binary, version)
    return _CHECKED[name]


def write_test_skills(project: Path) -> None:
    """``secret-skill`` and ``ok-skill`` in every project skill folder the CLIs read."""
    for folder in (".claude/skills", ".agents/skills", ".gemini/skills", ".qwen/skills", ".opencode/skills"):
        for name in ("secret-skill", "ok-skill"):
            write_skill(project / folder, name, f"The {name} for tests")


OPENCODE_GITIGNORE = "node_modules\npackage.json\npackage-lock.json\nbun.lock\n.gitignore"
"""What opencode 1.18.33 writes into each of its config dirs at a start that finds it missing (a start in a pane
whose sandbox keeps that dir read-only fails there)."""


def seed_opencode_plugin_sdk(home: Path, project: Path) -> None:
    """What opencode's config dirs hold after its first start with a plugin configured: the plugin SDK, which
    it otherwise installs from npm into each of them (the user's and the project's ``.opencode``) at every
    start in a fresh home, and the ``.gitignore`` it writes beside it. Seeding it keeps the tests offline."""
    prefix = npm_package("@opencode-ai/plugin", PINNED["opencode"][1])
    for config in (home / ".config" / "opencode", project / ".opencode"):
        config.mkdir(parents=True, exist_ok=True)
        for name in ("package.json", "package-lock.json"):  # without the lock file opencode installs again
            (config / name).write_text((prefix / name).read_text())
        (config / "node_modules").symlink_to(prefix / "node_modules")
        (config / ".gitignore").write_text(OPENCODE_GITIGNORE)
