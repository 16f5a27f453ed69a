"""The app's config file (``polter.toml`` in the user's config dir, or ``--config PATH``) and the
session saved on exit for ``polter --restore``.

    layout = "grid"            # grid | columns | rows
    prefix = "ctrl+b"
    # palette_key = "ctrl+p"   # a key that opens the command palette directly (default: prefix then : or p)
    ask_timeout = 120          # seconds an ask waits for you before it is denied
    notify_command = ["ntfy", "publish", "my-topic"]   # run with: pane number, title, role, event, excerpt
    notify_events = ["waiting", "done"]                # which changes notify
    # notify_desktop = true    # a desktop notification when no window is attached
    # notify_terminal = "auto" # auto | osc9 | osc777 | osc99 | bell | off: how a window tells its terminal
    # notify_quiet = 1.0       # seconds a state must hold before it counts
    # host = "gpu"             # start sessions on this host over SSH (docs/remote.md), as --host does
    # hosts = ["gpu", "build"] # the hosts `polter ls --hosts` lists besides this machine

    [[panes]]
    adapter = "claude-code"    # default: the first agent CLI installed (else the shell)
    role = "coder"             # default: coder, reviewer, researcher, ops for panes 1-4, then coder
    cwd = "~/src/app"          # default: where polter was started; relative paths start there too
    title = "main"
    # command = ["my-agent", "--flag"]   # run this instead of the adapter's CLI (same env and files)
    # worktree = true          # its own git worktree on its own branch (docs/worktrees.md); optional:
    # branch = "polter/main"   #   the branch (default polter/<title>), base = "develop" (default: current)
    # notify = false           # never notify for this pane (the palette mutes and unmutes too)

    [servers.time]             # optional: more MCP servers, as in servers.toml
    command = "uvx"
    args = ["mcp-server-time"]

Every problem is reported as ``file:line: field: message``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, ValidationInfo, field_validator
from pydantic_core import PydanticCustomError

from polter.errors import ConfigError
from polter.paths import config_dir, state_dir
from polter.protocol import ADAPTER_NAME, DEFAULT_ROLE, ROLE_NAME_PATTERN
from polter.servers import HttpServer, ServerConfig, StdioServer
from polter.toml_files import TomlFile, dotted_field
from polter.wire.options import LayoutMode, TerminalNotification
from polter.worktrees import branch_problem

__all__ = [
    "CONFIG_FILE",
    "DEFAULT_ROLES",
    "SESSION_FILE",
    "AppConfig",
    "NotifySettings",
    "PaneSetup",
    "SavedSession",
    "default_config_path",
    "load_config",
    "load_session",
    "parse_pane_option",
    "save_session",
    "session_path",
]

CONFIG_FILE = "polter.toml"
SESSION_FILE = "session.json"
DEFAULT_ROLES = (DEFAULT_ROLE, "reviewer", "researcher", "ops")
"""The roles of panes 1-4 when nobody chose one (bundled roles); later panes get the first."""

NotifyEvent = Literal["waiting", "done"]


def _every_event() -> list[NotifyEvent]:
    return ["waiting", "done"]


class PaneSetup(BaseModel):
    """One pane: which CLI, under which role, where. Missing parts are chosen at launch."""

    model_config = ConfigDict(extra="forbid")

    adapter: str | None = Field(
        default=None,
        pattern=ADAPTER_NAME,
        description="The adapter (CLI) to run; default: the first agent CLI installed.",
    )
    role: str | None = Field(
        default=None, pattern=ROLE_NAME_PATTERN, description="The pane's role; default by position."
    )
    cwd: Path | None = Field(default=None, description="Working directory (``~`` expanded; relative to the start).")
    title: str | None = Field(
        default=None, min_length=1, max_length=60, description="The pane's name in asks and audit."
    )
    command: list[str] | None = Field(
        default=None, min_length=1, description="Run this instead of the adapter's CLI, with the adapter's env."
    )
    resume: bool = Field(default=False, description="Continue the CLI's last conversation (set by --restore).")
    worktree: bool = Field(
        default=False, strict=True, description="Run in a git worktree of its own (docs/worktrees.md)."
    )
    branch: str | None = Field(default=None, description="The worktree's branch; default polter/<title>.")
    base: str | None = Field(
        default=None, min_length=1, description="What a new branch starts from and merges into; default: HEAD's."
    )
    notify: bool = Field(
        default=True, strict=True, description="Notify when this pane waits for you or is done (false: muted)."
    )

    @field_validator("cwd")
    @classmethod
    def _expand(cls, value: Path | None) -> Path | None:
        return value.expanduser() if value is not None else None

    @field_validator("branch", "base")
    @classmethod
    def _for_a_worktree(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and not info.data.get("worktree"):
            raise PydanticCustomError("worktree", "needs worktree = true")
        if info.field_name == "branch" and value is not None and (problem := branch_problem(value)):
            raise PydanticCustomError("branch", problem)
        return value


class NotifySettings(BaseModel):
    """How the session tells the human that an agent needs them (``notify_*`` in ``polter.toml``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    command: list[str] | None = None
    events: list[NotifyEvent] = Field(default_factory=_every_event)
    desktop: bool = True
    terminal: TerminalNotification = "auto"
    quiet: float = Field(default=1.0, ge=0)


class AppConfig(BaseModel):
    """``polter.toml``."""

    model_config = ConfigDict(extra="forbid")

    layout: LayoutMode = Field(default="grid", description="How panes are arranged.")
    prefix: str = Field(default="ctrl+b", min_length=1, description="The prefix key (a Textual key name).")
    palette_key: str | None = Field(
        default=None,
        min_length=1,
        description="A key that opens the command palette directly (it no longer "
        "reaches the programs); default: none, prefix then : or p.",
    )
    ask_timeout: float | None = Field(default=None, gt=0, description="Seconds an ask waits before it is denied.")
    notify_command: list[str] | None = Field(
        default=None,
        min_length=1,
        description="A program run (by the session host) when a pane waits for you or is done, with the pane's "
        "number, title, role, the event and a one-line excerpt as arguments and in POLTER_* variables.",
    )
    notify_events: list[NotifyEvent] = Field(
        default_factory=_every_event, description="Which changes notify: waiting, done."
    )
    notify_desktop: bool = Field(
        default=True, strict=True, description="A desktop notification when no window is attached."
    )
    notify_terminal: TerminalNotification = Field(
        default="auto", description="How a window tells its terminal: auto, osc9, osc777, osc99, bell or off."
    )
    notify_quiet: float = Field(
        default=1.0, ge=0, le=60, description="Seconds a state must hold before it counts (no notice for a flicker)."
    )
    host: str | None = Field(
        default=None,
        min_length=1,
        description="Start sessions on this host (as ssh knows it) instead of here, as `polter --host HOST` does.",
    )
    hosts: list[str] = Field(
        default_factory=list, description="Other hosts whose sessions `polter ls --hosts` lists (as ssh knows them)."
    )
    panes: list[PaneSetup] = Field(default_factory=list, description="The panes; none means four default ones.")
    servers: dict[str, dict[str, Any]] = Field(
        default_factory=dict, description="More MCP servers (servers.toml format)."
    )
    path: Path | None = Field(default=None, exclude=True, description="The file this came from.")

    def notify_settings(self) -> NotifySettings:
        return NotifySettings(
            command=self.notify_command,
            events=list(self.notify_events),
            desktop=self.notify_desktop,
            terminal=self.notify_terminal,
            quiet=self.notify_quiet,
        )

    def _file(self) -> TomlFile | None:
        try:
            return TomlFile.read(self.path, what="the config file") if self.path is not None else None
        except (OSError, ConfigError):
            return None

    def location(self, loc: tuple[str | int, ...]) -> dict[str, Any]:
        """``ConfigError`` keyword arguments (path, line, field) for a place in this file."""
        file = self._file()
        return {"path": self.path, "line": file.line(loc) if file is not None else None, "field": dotted_field(loc)}

    def server_configs(self) -> dict[str, ServerConfig]:
        """The ``[servers]`` tables, validated like servers.toml (raw ``${VAR}`` kept for the gateway)."""
        servers: dict[str, ServerConfig] = {}
        for name, raw in self.servers.items():
            kind: type[StdioServer] | type[HttpServer] = HttpServer if "url" in raw else StdioServer
            try:
                servers[name] = kind.model_validate(raw)
            except ValidationError as exc:
                file = self._file()
                line = file.line(("servers", name)) if file is not None else None
                key = ".".join(str(part) for part in exc.errors()[0]["loc"])
                field = f"servers.{name}" + (f".{key}" if key else "")
                raise ConfigError(exc.errors()[0]["msg"], path=self.path, line=line, field=field) from None
        return servers


def default_config_path() -> Path:
    return config_dir() / CONFIG_FILE


def load_config(path: Path | None = None) -> AppConfig:
    """The config at ``path`` (must exist), else the default file if it exists, else the defaults."""
    required = path is not None
    path = path or default_config_path()
    try:
        file = TomlFile.read(path, what="the config file")
    except FileNotFoundError:
        if required:
            raise ConfigError("the config file does not exist", path=path) from None
        return AppConfig()
    config = file.validate(AppConfig)
    config.path = path
    config.server_configs()  # report bad servers now, with this file's name
    return config


def parse_pane_option(value: str) -> PaneSetup:
    """``--pane ADAPTER[:ROLE][,worktree][,branch=NAME][,base=REF]`` (the adapter or role may be empty:
    ``:reviewer`` keeps the detected CLI; ``,worktree`` gives the pane its own git worktree)."""
    head, *options = value.split(",")
    adapter, _, role = head.partition(":")
    fields: dict[str, Any] = {"adapter": adapter or None, "role": role or None}
    for option in options:
        key, equals, setting = option.partition("=")
        if key == "worktree" and not equals:
            fields["worktree"] = True
        elif key in ("branch", "base") and equals:
            fields[key] = setting
        else:
            raise ConfigError(
                f"{value!r}: unknown option {option!r} (after ADAPTER[:ROLE] come worktree, branch=NAME, base=REF)",
                field="--pane",
            )
    try:
        return PaneSetup(**fields)
    except ValidationError as exc:
        error = exc.errors()[0]
        raise ConfigError(
            f"{value!r}: {error['loc'][0]}: {error['msg']} "
            "(use ADAPTER[:ROLE][,worktree[,branch=NAME][,base=REF]], e.g. claude-code:coder,worktree)",
            field="--pane",
        ) from None


# -- the saved session (polter --restore) ---------------------------------------------------------


class SavedSession(BaseModel):
    """What ``polter`` saves on exit: the layout and each pane's adapter, role, cwd and title."""

    model_config = ConfigDict(extra="ignore")

    version: Literal[1] = 1
    layout: LayoutMode = "grid"
    panes: list[PaneSetup] = Field(default_factory=list)


def session_path(directory: Path | None = None) -> Path:
    return (directory or state_dir()) / SESSION_FILE


def save_session(session: SavedSession, directory: Path | None = None) -> Path:
    path = session_path(directory)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_suffix(".tmp")
    temporary.write_text(session.model_dump_json(indent=2, exclude_none=True), encoding="utf-8")
    temporary.replace(path)
    return path


def load_session(directory: Path | None = None) -> SavedSession:
    path = session_path(directory)
    try:
        session = SavedSession.model_validate_json(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError("no saved session to restore (Polter saves one when it quits)", path=path) from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"the saved session is unreadable: {exc}", path=path) from None
    if not session.panes:
        raise ConfigError("the saved session has no panes", path=path)
    return session
