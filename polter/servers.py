"""The servers file: which MCP servers the gateway manages (TOML). The gateway serves it, the session host
writes its gateway's copy and follows the user's, ``polter servers`` checks it: one format, here.

    [servers.time]                         # stdio: command, args, env, cwd
    command = "uvx"
    args = ["mcp-server-time"]
    env = { TZ = "Europe/Berlin" }

    [servers.github]                       # streamable HTTP: url, headers
    url = "https://api.githubcopilot.com/mcp/"
    headers = { Authorization = "Bearer ${GITHUB_TOKEN}" }
    timeout = 60                           # any server: seconds without an answer (default 300)

``${VAR}`` and ``${VAR:-default}`` are expanded from the gateway's environment in every string
(command, args, env, cwd, url, headers). Every problem is reported as ``file:line: field: message``.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator, Callable, Sequence
from pathlib import Path
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic_core import ErrorDetails

from polter.errors import ConfigError
from polter.paths import config_dir
from polter.protocol import FLOOR_SERVER
from polter.toml_files import TomlFile

__all__ = [
    "DEFAULT_MAX_TIMEOUT",
    "DEFAULT_TIMEOUT",
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


DEFAULT_TIMEOUT = 300.0
"""Seconds a request to an upstream may go without an answer or progress before Polter cancels it."""
DEFAULT_MAX_TIMEOUT = 3600.0
"""Seconds a request may run at most, however much progress it reports."""


class _Entry(BaseModel):
    """What every server entry may say, whatever its transport."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(default=True, description="False keeps the entry but does not serve it.")
    timeout: float = Field(
        default=DEFAULT_TIMEOUT,
        gt=0,
        le=86_400,
        description="Seconds a request to the server (a tool call, a prompt, a resource, a completion) may go "
        "without an answer before Polter cancels it there and answers the pane with an error. Each progress "
        "notification the server sends for the request starts the count again.",
    )
    max_timeout: float = Field(
        default=DEFAULT_MAX_TIMEOUT,
        gt=0,
        le=7 * 86_400,
        description="Seconds a request may take at most, however much progress it reports (at least timeout).",
    )

    @model_validator(mode="after")
    def _max_covers_timeout(self) -> _Entry:
        if self.max_timeout < self.timeout:
            raise ValueError(f"max_timeout ({self.max_timeout:g}) is shorter than timeout ({self.timeout:g})")
        return self

    def same_connection(self, other: ServerConfig) -> bool:
        """Whether ``other`` reaches the server the same way (only its timeouts differ): no restart needed."""
        timing = {"timeout", "max_timeout"}
        return type(self) is type(other) and self.model_dump(exclude=timing) == other.model_dump(exclude=timing)


class StdioServer(_Entry):
    """A server the gateway starts as a child process and talks to over stdin/stdout."""

    command: str = Field(min_length=1, description="The program to run (looked up on PATH).")
    args: list[str] = Field(default_factory=list, description="Its arguments.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment variables.")
    cwd: str | None = Field(default=None, description="Working directory (``~`` is expanded).")

    @property
    def transport(self) -> str:
        return "stdio"

    def describe(self) -> str:
        return " ".join([self.command, *self.args])


class HttpServer(_Entry):
    """A server the gateway reaches over streamable HTTP."""

    url: str = Field(pattern=r"^https?://", description="The server's MCP endpoint URL.")
    headers: dict[str, str] = Field(default_factory=dict, description="Extra request headers (e.g. Authorization).")

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


def _only(paths: set[str]) -> Callable[[Any, str], bool]:
    """A watchfiles filter that lets through changes to ``paths`` alone."""
    return lambda _change, changed: changed in paths


async def watch_file(path: Path) -> AsyncIterator[None]:
    """Yield whenever ``path`` is written. Its folder is watched, not the file (editors replace files), and
    only changes to ``path`` itself count: whatever else is written there (the gateway's own log, its state
    files) is filtered out before it wakes anyone, so it costs nothing. A folder that does not exist yet is
    waited for in its nearest existing ancestor."""
    # lazy: only a process that follows the servers file loads watchfiles
    from watchfiles import awatch

    path = path.absolute()
    while True:
        folder = path.parent
        while not folder.exists() and folder != folder.parent:
            folder = folder.parent
        waiting_for_folder = folder != path.parent
        wanted = {str(path)} if not waiting_for_folder else {str(part) for part in path.parents if part != folder}
        async for _changes in awatch(folder, debounce=200, recursive=False, watch_filter=_only(wanted)):
            if waiting_for_folder:
                break  # a folder on the way appeared: watch from there now
            yield
        else:
            return
        if path.exists():
            yield  # written while the folders were being made
