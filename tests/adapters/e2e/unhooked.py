"""A CLI that skips Polter's veto hook: the adapter's prepared pane with the hook taken out of what it writes.

It stands for a CLI (or a user) that bypasses the hook, to show what the next layer does alone: the gateway for
MCP tools, the CLI's own permission layer set from the role for its built-in tools. Every hook the adapters write
is taken out — Claude Code's HTTP hook and Gemini CLI's / Qwen Code's command hooks (``hooks`` in their settings
JSON), Codex's (``hooks`` in its config.toml) and opencode's veto plugin (``plugin`` in ``OPENCODE_CONFIG_CONTENT``)
— and a prepared pane with no hook to take out is an error, so a test cannot pass because nothing was removed.
"""

from __future__ import annotations

import json
import tomllib
from typing import Any

import tomli_w

from polter.adapters import Adapter, PaneFile, PaneToPrepare, PreparedPane

__all__ = ["adjusted", "without_veto_hook"]

OPENCODE_CONFIG = "OPENCODE_CONFIG_CONTENT"


def _json_without_hooks(text: str) -> str | None:
    data = json.loads(text)
    if not isinstance(data, dict) or "hooks" not in data:
        return None
    data.pop("hooks")
    return json.dumps(data)


def _toml_without_hooks(text: str) -> str | None:
    data = tomllib.loads(text)
    if "hooks" not in data:
        return None
    data.pop("hooks")
    return tomli_w.dumps(data)


def without_veto_hook(prepared: PreparedPane) -> PreparedPane:
    """``prepared`` with every veto hook taken out; AssertionError when it had none."""
    files: dict[str, PaneFile] = dict(prepared.files)
    removed: list[str] = []
    for name, file in prepared.files.items():
        if file.text is None:
            continue
        if name.endswith(".json"):
            text = _json_without_hooks(file.text)
        elif name.endswith(".toml"):
            text = _toml_without_hooks(file.text)
        else:
            continue
        if text is not None:
            files[name] = file.model_copy(update={"text": text})
            removed.append(name)
    env = dict(prepared.launch.env)
    if OPENCODE_CONFIG in env:
        config = json.loads(env[OPENCODE_CONFIG])
        if config.pop("plugin", None):
            env[OPENCODE_CONFIG] = json.dumps(config)
            removed.append(OPENCODE_CONFIG)
    assert removed, f"no veto hook to take out of {sorted(prepared.files)} and the launch environment"
    launch = prepared.launch.model_copy(update={"env": env})
    return prepared.model_copy(update={"files": files, "launch": launch})


def adjusted(adapter: Adapter, *, hook: bool = True, env: dict[str, str] | None = None) -> Any:
    """``adapter``, preparing panes without the veto hook (``hook=False``) and with ``env`` added to their launch
    environment."""

    class Adjusted(type(adapter)):  # type: ignore[misc]
        def prepare(self, pane: PaneToPrepare) -> PreparedPane:
            prepared = super().prepare(pane)
            if not hook:
                prepared = without_veto_hook(prepared)
            launch = prepared.launch.model_copy(update={"env": {**prepared.launch.env, **(env or {})}})
            return prepared.model_copy(update={"launch": launch})

    return Adjusted(executable=adapter.executable())
