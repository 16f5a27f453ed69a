"""The CLIs' own permission layers, set from the role the way the app does it: the pane's capabilities from the
real gateway (``GatewayClient.capabilities``, what ``whoami`` shows) and their ``builtins`` passed as
``PaneToPrepare(builtins=...)``. That one argument is all an adapter needs: under the bundled ``researcher`` (writes
nothing) every CLI's own layer refuses writes and keeps Polter's state out of reach, and the CLIs with an OS sandbox
Polter can set (Claude Code's, Codex's) confine every command; under ``coder`` none refuses a write in the project;
without it (``builtins=None``) there is no such layer at all.
"""

from __future__ import annotations

import json
import sys
import tomllib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from support.gateway import Harness, start_gateway

from polter.adapters import PaneToPrepare, PreparedPane
from polter.adapters.plugins import AdapterRegistry
from polter.gateway.floor import capabilities
from polter.paths import bundled_dir
from polter.protocol import BuiltinsPolicy

ROLES = {name: (bundled_dir("roles") / f"{name}.toml").read_text() for name in ("researcher", "coder")}
ROLES |= {
    "offline": 'extends = "researcher"\n[builtins]\ndeny = ["web"]\n',
    "wary": 'extends = "researcher"\n[builtins]\ndeny = ["web(domain:*.evil.io)"]\n',
}
WRITE_TOOLS = {"claude-code": ["Edit", "Write", "NotebookEdit"], "gemini-cli": ["replace", "write_file"]}


@pytest_asyncio.fixture
async def gateway(tmp_path: Path) -> AsyncIterator[Harness]:
    async with start_gateway(tmp_path / "gateway", servers={}, roles=ROLES) as started:
        yield started


async def builtins_of(gateway: Harness, role: str) -> BuiltinsPolicy:
    """What the app passes as ``PaneToPrepare(builtins=...)``: the capabilities of a pane registered under ``role``."""
    created = await gateway.pane(role)
    capabilities = await gateway.admin.capabilities(created.pane.id)
    assert capabilities.role == role and capabilities.builtins is not None, capabilities
    return capabilities.builtins


def layers(bundled: AdapterRegistry, pane: PaneToPrepare) -> dict[str, Any]:
    """Each CLI's own permission layer, as its adapter writes it for ``pane``."""

    def prepared(name: str) -> PreparedPane:
        return bundled.get(name).prepare(pane)

    def text(prepared_pane: PreparedPane, name: str) -> str:
        file = prepared_pane.files[name]
        assert file.text is not None
        return file.text

    claude = json.loads(text(prepared("claude-code"), "claude/settings.json"))
    codex = tomllib.loads(text(prepared("codex"), "codex/config.toml"))
    gemini_files = prepared("gemini-cli")
    gemini = json.loads(text(gemini_files, next(n for n in gemini_files.files if n.endswith("settings.json"))))
    qwen_files = prepared("qwen-code")
    qwen = json.loads(text(qwen_files, next(n for n in qwen_files.files if n.endswith("settings.json"))))
    opencode = json.loads(prepared("opencode").launch.env["OPENCODE_CONFIG_CONTENT"])
    return {
        "claude-code": claude["permissions"]["deny"],
        "claude-code sandbox": claude.get("sandbox"),
        "codex": codex.get("sandbox_mode"),
        "gemini-cli": (gemini.get("tools") or {}).get("exclude", []),
        "qwen-code": (qwen.get("permissions") or {}).get("deny", []),
        "opencode": {key: value for key, value in (opencode.get("permission") or {}).items() if key != "skill"},
    }


async def test_the_roles_builtins_from_the_gateway_set_every_clis_own_layer(
    gateway: Harness, bundled: AdapterRegistry, make_pane: Callable[..., PaneToPrepare]
) -> None:
    researcher = layers(bundled, make_pane(builtins=await builtins_of(gateway, "researcher")))
    for rule in WRITE_TOOLS["claude-code"]:
        assert rule in researcher["claude-code"] and rule in researcher["qwen-code"], researcher
    state = f"Edit(/{gateway.state_dir.resolve()}/**)"
    assert state in researcher["claude-code"] and state in researcher["qwen-code"], "Polter's state is protected"
    roles = f"Edit(/{gateway.roles_dir.resolve()}/**)"
    assert roles in researcher["claude-code"], "an agent cannot rewrite its role"
    assert researcher["codex"] == "read-only", "not even python -c writes under a role that writes nothing"
    assert set(WRITE_TOOLS["gemini-cli"]) <= set(researcher["gemini-cli"]), researcher
    assert researcher["opencode"] == {"edit": "deny", "task": "deny"}  # (task: a researcher opens no pane, nor sub-agent)
    project, home = make_pane().cwd, make_pane().home
    assert researcher["claude-code sandbox"] == {
        "enabled": True,
        "failIfUnavailable": True,  # no sandbox, no start: never unconfined
        "allowUnsandboxedCommands": False,  # the model cannot ask to run a command outside it
        "filesystem": {"denyWrite": [f"/{project}", f"/{home}"]},  # only Claude Code's own temporary folder
        "network": {"allowedDomains": ["*"]},  # the network as the role says: the web is allowed
    }, "not even python -c writes under a role that writes nothing"

    coder = layers(bundled, make_pane(builtins=await builtins_of(gateway, "coder")))
    assert not set(WRITE_TOOLS["claude-code"]) & {*coder["claude-code"], *coder["qwen-code"]}, coder
    assert state in coder["claude-code"], "protected whatever the role says"
    assert coder["codex"] == "workspace-write"
    assert coder["claude-code sandbox"] is None, "a role that writes gets no sandbox from Polter"
    assert not set(WRITE_TOOLS["gemini-cli"]) & set(coder["gemini-cli"]) and coder["opencode"] == {}, coder


def test_without_the_roles_builtins_there_is_no_such_layer(
    bundled: AdapterRegistry, make_pane: Callable[..., PaneToPrepare]
) -> None:
    assert layers(bundled, make_pane(builtins=None)) == {
        "claude-code": [],
        "claude-code sandbox": None,
        "codex": None,
        "gemini-cli": [],
        "qwen-code": [],
        "opencode": {},
    }


@pytest.mark.parametrize("role", ["researcher", "coder"])
async def test_the_policy_survives_the_trip_through_the_control_api(gateway: Harness, role: str) -> None:
    """The app gets the policy over HTTP: it arrives as the gateway computed it (nothing dropped on the way)."""
    created = await gateway.pane(role)
    direct = await capabilities(gateway.gateway, gateway.gateway.panes.get(created.pane.id))
    assert (await gateway.admin.capabilities(created.pane.id)).builtins == direct.builtins


async def test_claude_codes_sandbox_reaches_only_the_gateway_when_the_role_denies_the_web(
    gateway: Harness, bundled: AdapterRegistry, make_pane: Callable[..., PaneToPrepare]
) -> None:
    """Claude Code's HTTP hooks go through its sandbox's network rules (verified with 2.1.332: a hook to a host the
    rules leave out fails, and so vetoes every call), so the gateway is always allowed; past it, the role's web."""
    offline = layers(bundled, make_pane(builtins=await builtins_of(gateway, "offline")))["claude-code sandbox"]
    assert offline["network"] == {"allowedDomains": ["127.0.0.1:4321"], "strictAllowlist": True}, offline
    wary = layers(bundled, make_pane(builtins=await builtins_of(gateway, "wary")))["claude-code sandbox"]
    assert wary["network"] == {"allowedDomains": ["*"], "deniedDomains": ["*.evil.io"]}, wary


def _programs(folder: Path, *names: str) -> str:
    folder.mkdir()
    for name in names:
        (folder / name).write_text("#!/bin/sh\n")
        (folder / name).chmod(0o755)
    return str(folder)


async def test_a_missing_bwrap_or_socat_is_named_in_the_panes_notices(
    gateway: Harness,
    bundled: AdapterRegistry,
    make_pane: Callable[..., PaneToPrepare],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Claude Code then refuses to start (failIfUnavailable, verified with 2.1.332: "Refusing to start without a
    working sandbox"); the notice says which program is missing and which package brings it."""
    monkeypatch.setattr(sys, "platform", "linux")
    claude = bundled.get("claude-code")
    researcher = make_pane(builtins=await builtins_of(gateway, "researcher"))
    monkeypatch.setenv("PATH", _programs(tmp_path / "without", "socat"))
    [notice] = claude.prepare(researcher).warnings
    assert "needs bwrap" in notice and "bubblewrap" in notice and "refuses to start" in notice, notice
    monkeypatch.setenv("PATH", _programs(tmp_path / "with", "bwrap", "socat"))
    assert claude.prepare(researcher).warnings == ()
    monkeypatch.setenv("PATH", str(tmp_path / "without"))
    assert claude.prepare(make_pane(builtins=await builtins_of(gateway, "coder"))).warnings == (), "no sandbox needed"


async def test_a_cli_without_a_sandbox_polter_can_set_says_so_under_a_role_that_writes_nothing(
    gateway: Harness, bundled: AdapterRegistry, make_pane: Callable[..., PaneToPrepare]
) -> None:
    researcher = make_pane(builtins=await builtins_of(gateway, "researcher"))
    coder = make_pane(builtins=await builtins_of(gateway, "coder"))
    for name in ("gemini-cli", "qwen-code", "opencode"):
        adapter = bundled.get(name)
        [notice] = [warning for warning in adapter.prepare(researcher).warnings if "no sandbox" in warning]
        assert adapter.display_name in notice and "can still write" in notice, notice
        assert not [warning for warning in adapter.prepare(coder).warnings if "no sandbox" in warning], name
    for name in ("claude-code", "codex"):
        assert not [warning for warning in bundled.get(name).prepare(researcher).warnings if "no sandbox" in warning]
