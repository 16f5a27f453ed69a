"""Find the MCP servers a user already configured in their CLIs, so the gateway can take them over.

Read-only: these functions never modify the CLIs' files. Sources, in order (the first of a name wins):

- Claude Code: a project's ``.mcp.json``; ``~/.claude.json`` (the project's local servers under
  ``projects[<cwd>]``, then the user's ``mcpServers``); ``$CLAUDE_CONFIG_DIR`` moves that file.
- Codex: ``.codex/config.toml`` in the project, then ``$CODEX_HOME/config.toml`` (``~/.codex``),
  ``[mcp_servers.NAME]``; ``bearer_token_env_var`` and ``env_http_headers`` become ``${VAR}`` headers.
- Gemini CLI: ``.gemini/settings.json`` in the project, then ``~/.gemini/settings.json``; ``httpUrl``
  is streamable HTTP, ``url`` is the legacy SSE transport (not supported by the gateway, reported).

``${VAR}`` references are kept as written, to be expanded when the gateway starts; entries that are
Polter's own gateway (they mention ``POLTER_TOKEN``) are skipped.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import tomli_w
from pydantic import ValidationError

from polter.paths import ENV_TOKEN
from polter.protocol import FLOOR_SERVER
from polter.servers import SERVER_NAME, HttpServer, ServerConfig, StdioServer

__all__ = ["SOURCES", "FoundServer", "Skipped", "append_servers", "find_servers"]

SOURCES = ("claude-code", "codex", "gemini-cli")


@dataclass(frozen=True)
class FoundServer:
    name: str
    config: ServerConfig
    client: str
    source: Path


@dataclass(frozen=True)
class Skipped:
    name: str
    client: str
    source: Path
    why: str


def _safe_name(name: str) -> str:
    cleaned = re.sub(r"[^A-Za-z0-9_\-]+", "-", name).strip("-_") or "server"
    return cleaned if SERVER_NAME.match(cleaned) else f"s-{cleaned}"[:64]


def _mentions_polter(raw: Any) -> bool:
    return ENV_TOKEN in json.dumps(raw)


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _read_toml(path: Path) -> dict[str, Any] | None:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _claude(home: Path, project: Path) -> Iterator[tuple[str, dict[str, Any], Path]]:
    mcp_json = project / ".mcp.json"
    for name, raw in ((_read_json(mcp_json) or {}).get("mcpServers") or {}).items():
        yield name, raw, mcp_json
    config_home = Path(os.environ["CLAUDE_CONFIG_DIR"]) if os.environ.get("CLAUDE_CONFIG_DIR") else home
    claude_json = config_home / ".claude.json"
    data = _read_json(claude_json) or {}
    local = ((data.get("projects") or {}).get(str(project.resolve())) or {}).get("mcpServers") or {}
    for name, raw in {**local, **{k: v for k, v in (data.get("mcpServers") or {}).items() if k not in local}}.items():
        yield name, raw, claude_json


def _claude_config(raw: dict[str, Any]) -> ServerConfig | str:
    kind = raw.get("type", "http" if "url" in raw else "stdio")
    if kind == "stdio":
        return StdioServer(
            command=raw["command"], args=raw.get("args") or [], env=raw.get("env") or {}, cwd=raw.get("cwd")
        )
    if kind in ("http", "streamable-http", "streamableHttp"):
        return HttpServer(url=raw["url"], headers=raw.get("headers") or {})
    return f"the {kind} transport is not supported by the gateway (stdio and streamable HTTP are)"


def _codex(home: Path, project: Path) -> Iterator[tuple[str, dict[str, Any], Path]]:
    codex_home = Path(os.environ["CODEX_HOME"]) if os.environ.get("CODEX_HOME") else home / ".codex"
    for path in (project / ".codex" / "config.toml", codex_home / "config.toml"):
        for name, raw in ((_read_toml(path) or {}).get("mcp_servers") or {}).items():
            yield name, raw, path


def _codex_config(raw: dict[str, Any]) -> ServerConfig | str:
    if raw.get("enabled") is False:
        return "disabled in Codex"
    if "command" in raw:
        return StdioServer(
            command=raw["command"], args=raw.get("args") or [], env=raw.get("env") or {}, cwd=raw.get("cwd")
        )
    headers = dict(raw.get("http_headers") or {})
    for header, variable in (raw.get("env_http_headers") or {}).items():
        headers[header] = f"${{{variable}}}"
    if raw.get("bearer_token_env_var"):
        headers["Authorization"] = f"Bearer ${{{raw['bearer_token_env_var']}}}"
    return HttpServer(url=raw["url"], headers=headers)


def _gemini(home: Path, project: Path) -> Iterator[tuple[str, dict[str, Any], Path]]:
    for path in (project / ".gemini" / "settings.json", home / ".gemini" / "settings.json"):
        for name, raw in ((_read_json(path) or {}).get("mcpServers") or {}).items():
            yield name, raw, path


def _braced(text: str) -> str:
    """Gemini expands ``$VAR`` as well as ``${VAR}``; the servers file knows only the braced form."""
    return re.sub(r"\$(?!\{)([A-Za-z_][A-Za-z0-9_]*)", r"${\1}", text)


def _gemini_config(raw: dict[str, Any]) -> ServerConfig | str:
    raw = json.loads(_braced(json.dumps(raw)))
    if "command" in raw:
        return StdioServer(
            command=raw["command"], args=raw.get("args") or [], env=raw.get("env") or {}, cwd=raw.get("cwd")
        )
    if "httpUrl" in raw:
        return HttpServer(url=raw["httpUrl"], headers=raw.get("headers") or {})
    if "url" in raw:
        return "url means the legacy SSE transport in Gemini CLI, which the gateway does not support"
    return "neither command nor httpUrl"


_READERS = {
    "claude-code": (_claude, _claude_config),
    "codex": (_codex, _codex_config),
    "gemini-cli": (_gemini, _gemini_config),
}


def find_servers(
    *, home: Path | None = None, project: Path | None = None, clients: tuple[str, ...] = SOURCES
) -> tuple[list[FoundServer], list[Skipped]]:
    home = home or Path.home()
    project = project or Path.cwd()
    found: dict[str, FoundServer] = {}
    skipped: list[Skipped] = []
    for client in clients:
        entries, convert = _READERS[client]
        for original, raw, source in entries(home, project):
            name = _safe_name(original)
            if not isinstance(raw, dict):
                skipped.append(Skipped(original, client, source, "not a table"))
                continue
            if name == FLOOR_SERVER or _mentions_polter(raw):
                skipped.append(Skipped(original, client, source, "this is Polter's own gateway"))
                continue
            try:
                config = convert(raw)
            except (KeyError, TypeError, ValidationError) as exc:
                config = f"not understood: {exc}"
            if isinstance(config, str):
                skipped.append(Skipped(original, client, source, config))
            elif name in found:
                if found[name].config != config:
                    skipped.append(
                        Skipped(original, client, source, f"the name is taken by the entry from {found[name].source}")
                    )
            else:
                found[name] = FoundServer(name, config, client, source)
    return list(found.values()), skipped


def append_servers(path: Path, servers: list[FoundServer]) -> list[str]:
    """Append servers the file does not name yet (existing entries and comments are kept as they are)."""
    existing: dict[str, Any] = {}
    text = ""
    if path.exists():
        text = path.read_text(encoding="utf-8")
        existing = (tomllib.loads(text).get("servers") or {}) if text.strip() else {}
    added = [server for server in servers if server.name not in existing]
    if not added:
        return []
    chunks = [text.rstrip() + "\n\n" if text.strip() else "# MCP servers managed by Polter's gateway.\n\n"]
    for server in added:
        body = server.config.model_dump(exclude_defaults=True)
        chunks.append(f"# imported from {server.client}: {server.source}\n")
        chunks.append(tomli_w.dumps({"servers": {server.name: body}}) + "\n")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(chunks).rstrip() + "\n", encoding="utf-8")
    return [server.name for server in added]
