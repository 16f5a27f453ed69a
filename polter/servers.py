"""The servers file: which MCP servers the gateway manages (TOML). The gateway serves it, the session host
writes its gateway's copy and follows the user's, ``polter servers`` checks it: one format, here.

    [servers.time]                         # stdio: command, args, env, cwd
    command = "uvx"
    args = ["mcp-server-time"]
    env = { TZ = "Europe/Berlin" }

    [servers.github]                       # streamable HTTP: url, headers
    url = "https://api.githubcopilot.com/mcp/"
    headers = { Authorization = "Bearer ${GITHUB_TOKEN}" }

``${VAR}`` and ``${VAR:-default}`` are expanded from the gateway's environment in every string
(command, args, env, cwd, url, headers). Every problem is reported as ``file:line: field: message``.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import ErrorDetails

from polter.errors import ConfigError
from polter.paths import config_dir
from polter.protocol import FLOOR_SERVER
from polter.toml_files import TomlFile

__all__ = [
    "HttpServer",
    "SERVERS_FILE",
    "ServerConfig",
    "StdioServer",
    "check_servers",
    "default_servers_path",
    "expand_vars",
    "load_servers",
    "watch_file",
]

SERVERS_FILE = "servers.toml"

SERVER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_\-]{0,63}$")
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


class StdioServer(BaseModel):
    """A server the gateway starts as a child process and talks to over stdin/stdout."""

    model_config = ConfigDict(extra="forbid")

    command: str = Field(min_length=1, description="The program to run (looked up on PATH).")
    args: list[str] = Field(default_factory=list, description="Its arguments.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables.")
    cwd: str | None = Field(default=None, description="Working directory (``~`` is expanded).")
    enabled: bool = Field(default=True, description="False keeps the entry but does not serve it.")

    @property
    def transport(self) -> str:
        return "stdio"

    def describe(self) -> str:
        return " ".join([self.command, *self.args])


class HttpServer(BaseModel):
    """A server the gateway reaches over streamable HTTP."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(pattern=r"^https?://", description="The server's MCP endpoint URL.")
    headers: dict[str, str] = Field(default_factory=dict, description="Extra request headers (e.g. Authorization).")
    enabled: bool = Field(default=True, description="False keeps the entry but does not serve it.")

    @property
    def transport(self) -> str:
        return "http"

    def describe(self) -> str:
        return self.url


ServerConfig = StdioServer | HttpServer


class _ServersFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    servers: dict[Annotated[str, Field(pattern=SERVER_NAME.pattern)], dict[str, Any]] = Field(default_factory=dict)

    @field_validator("servers")
    @classmethod
    def _not_floor(cls, servers: dict[str, Any]) -> dict[str, Any]:
        if FLOOR_SERVER in servers:
            raise ValueError(f"{FLOOR_SERVER!r} is reserved for Polter's own endpoint")
        return servers


def default_servers_path() -> Path:
    return config_dir() / SERVERS_FILE


def expand_vars(text: str, environ: dict[str, str] | os._Environ[str] | None = None) -> str:
    """Expand ``${VAR}`` and ``${VAR:-default}``; an unset variable without a default is an error."""
    env = os.environ if environ is None else environ

    def replace(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if value is None or (value == "" and default is not None):
            if default is None:
                raise KeyError(name)
            return default
        return value

    return _VAR.sub(replace, text)


def _expand(value: Any, field: str, path: Path, line: int | None) -> Any:
    try:
        if isinstance(value, str):
            return expand_vars(value)
        if isinstance(value, list):
            return [_expand(item, field, path, line) for item in value]
        if isinstance(value, dict):
            return {key: _expand(item, f"{field}.{key}", path, line) for key, item in value.items()}
    except KeyError as exc:
        raise ConfigError(
            f"environment variable {exc.args[0]} is not set (write ${{{exc.args[0]}:-default}} to give a default)",
            path=path,
            line=line,
            field=field,
        ) from None
    return value


def check_servers(path: Path, *, expand: bool = True) -> tuple[dict[str, ServerConfig], list[ConfigError]]:
    """Parse a servers file; returns the valid servers and every problem found (the file is never modified)."""
    try:
        file = TomlFile.read(path, what="the servers file")
    except FileNotFoundError:
        return {}, [ConfigError("the servers file does not exist", path=path)]
    except ConfigError as exc:
        return {}, [exc]
    try:
        document = _ServersFile.model_validate(file.data)
    except ValidationError as exc:
        return {}, file.problems(exc, message=_message, field=_dotted)
    servers: dict[str, ServerConfig] = {}
    problems: list[ConfigError] = []
    for name, raw in document.servers.items():
        kind: type[StdioServer] | type[HttpServer] = HttpServer if "url" in raw else StdioServer
        if "url" in raw and "command" in raw:
            problems.append(file.problem("give either command (stdio) or url (HTTP), not both", ("servers", name)))
            continue
        try:
            config = kind.model_validate(raw)
        except ValidationError as exc:
            problems += file.problems(exc, within=("servers", name), message=_message, field=_dotted)
            continue
        if expand:
            try:
                config = kind.model_validate(
                    {
                        key: _expand(value, f"servers.{name}.{key}", path, file.line(("servers", name, key)))
                        for key, value in config.model_dump(exclude_defaults=True).items()
                    }
                )
            except ConfigError as exc:
                problems.append(exc)
                continue
        servers[name] = config
    return servers, problems


def _message(error: ErrorDetails) -> str:
    return str(error["msg"])


def _dotted(loc: Sequence[int | str]) -> str:
    return ".".join(str(part) for part in loc)


def load_servers(path: Path | None, *, required: bool = False, expand: bool = True) -> dict[str, ServerConfig]:
    """The enabled servers of a servers file; a missing default file means none. Raises the first problem.
    ``expand=False`` keeps ``${VAR}`` as written (for a file the gateway itself will read and expand)."""
    path = path or default_servers_path()
    if not path.exists() and not required:
        return {}
    servers, problems = check_servers(path, expand=expand)
    if problems:
        first = problems[0]
        if len(problems) > 1:
            first = ConfigError(
                f"{first.message} (and {len(problems) - 1} more problem(s); run `polter servers check`)",
                path=first.path,
                line=first.line,
                field=first.field,
            )
        raise first
    return {name: server for name, server in servers.items() if server.enabled}


async def watch_file(path: Path) -> AsyncIterator[None]:
    """Yield whenever ``path`` is written. Its folder is watched, not the file: editors replace files."""
    # lazy: only a process that follows the servers file loads watchfiles
    from watchfiles import awatch

    path = path.absolute()
    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    async for changes in awatch(folder, debounce=200, recursive=False):
        if any(Path(changed) == path for _, changed in changes):
            yield
