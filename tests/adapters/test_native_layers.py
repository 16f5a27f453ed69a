"""The CLIs' own permission layers, set from the role the way the app does it: the pane's capabilities from the
real gateway (``GatewayClient.capabilities``, what ``whoami`` shows) and their ``builtins`` passed as
``PaneToPrepare(builtins=...)``. That one argument is all an adapter needs: under the bundled ``researcher`` (writes
nothing) every CLI's own layer refuses writes and keeps Polter's state out of reach; under ``coder`` none refuses a
write in the project; without it (``builtins=None``) there is no such layer at all.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from support.gateway import Harness, start_gateway

from polter.adapters import PaneToPrepare, PreparedPane
from polter.adapters.host import AdapterRegistry
from polter.paths import bundled_dir
from polter.protocol import BuiltinsPolicy

ROLES = {name: (bundled_dir("roles") / f"{name}.toml").read_text() for name in ("researcher", "coder")}
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
    assert researcher["opencode"] == {"edit": "deny"}

    coder = layers(bundled, make_pane(builtins=await builtins_of(gateway, "coder")))
    assert not set(WRITE_TOOLS["claude-code"]) & {*coder["claude-code"], *coder["qwen-code"]}, coder
    assert state in coder["claude-code"], "protected whatever the role says"
    assert coder["codex"] == "workspace-write"
    assert not set(WRITE_TOOLS["gemini-cli"]) & set(coder["gemini-cli"]) and coder["opencode"] == {}, coder


def test_without_the_roles_builtins_there_is_no_such_layer(
    bundled: AdapterRegistry, make_pane: Callable[..., PaneToPrepare]
) -> None:
    assert layers(bundled, make_pane(builtins=None)) == {
        "claude-code": [],
        "codex": None,
        "gemini-cli": [],
        "qwen-code": [],
        "opencode": {},
    }


@pytest.mark.parametrize("role", ["researcher", "coder"])
async def test_the_policy_survives_the_trip_through_the_control_api(gateway: Harness, role: str) -> None:
    """The app gets the policy over HTTP: it arrives as the gateway computed it (nothing dropped on the way)."""
    created = await gateway.pane(role)
    direct = await gateway.gateway.capabilities(gateway.gateway.panes.get(created.pane.id))
    assert (await gateway.admin.capabilities(created.pane.id)).builtins == direct.builtins
