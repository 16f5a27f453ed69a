"""From what the human asked for (:class:`LaunchOptions`: the command line's choices) and the config file to the
panes to open: which CLI each pane runs and why.

``polter`` with no config opens four panes with the first installed agent CLI (adapters are tried in
name order; the core names no CLI) under the roles coder, reviewer, researcher and ops, falling back
to a non-agent adapter (the shell) when no agent CLI is installed. ``--pane ADAPTER[:ROLE]``,
``--config`` and ``--restore`` choose the panes instead. The bundled Terraria backend is managed
when ``TSHOCK_URL`` is set. A *preset* is a whole launch made by code (``--demo``: the TShock simulator
and scripted agents); the presets are given by whoever plans (the command line names the demo), so this
module knows none by name.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from polter.adapters import Adapter, TestMode
from polter.adapters.plugins import AdapterRegistry, discover
from polter.errors import AdapterError, ConfigError
from polter.launch.config import (
    DEFAULT_ROLES,
    AppConfig,
    NotifySettings,
    PaneSetup,
    load_config,
    load_session,
    parse_pane_option,
    session_path,
)
from polter.protocol import DEFAULT_ROLE
from polter.servers import ServerConfig, StdioServer, default_servers_path, load_servers
from polter.wire.options import MAX_PANES, LayoutMode

__all__ = [
    "Launch",
    "LaunchOptions",
    "PanePlan",
    "Preset",
    "choose_default",
    "choose_shell",
    "is_installed",
    "plan_launch",
    "plan_panes",
    "terraria_server",
]

TERRARIA = "terraria"


@dataclass(frozen=True)
class PanePlan:
    """A pane to open: its setup with every part decided, the adapter, and why that adapter."""

    setup: PaneSetup
    adapter: Adapter
    reason: str
    """Why this adapter, in a sentence (the header's tooltip)."""
    why: str = ""
    """The same in a word or two for the header ("detected", "no agent CLI found"); empty when the user chose."""


@dataclass
class Launch:
    """Everything the app needs to start: panes, layout, keys, servers and options."""

    plans: list[PanePlan]
    registry: AdapterRegistry | None = None
    """Every adapter found (the palette's "new pane" offers the installed ones)."""
    layout: LayoutMode = "grid"
    prefix: str = "ctrl+b"
    palette_key: str | None = None
    servers: dict[str, ServerConfig] = field(default_factory=dict)
    """The app's own servers (the config file's and Terraria's); they win over the servers file's."""
    servers_file: Path | None = None
    """The user's servers file, followed while the app runs."""
    ask_timeout: float | None = None
    backends: list[Callable[[], AbstractAsyncContextManager[dict[str, ServerConfig]]]] = field(default_factory=list)
    """Servers that live as long as the app (the demo's simulator): each yields the upstreams it adds."""
    notify: NotifySettings = field(default_factory=NotifySettings)
    """How the session tells the human that an agent needs them."""
    test_mode: TestMode | None = None
    """Agent panes' CLIs pointed at a fake model API (the end-to-end tests run real CLIs in a session)."""
    egress_test_hosts: dict[str, str] = field(default_factory=dict)
    """Tests only (no option or config file sets it): host names the egress proxy maps to these addresses, exempt
    from its loopback refusal, so that a loopback server stands in for web hosts (``polter egress --test-host``)."""
    demo: bool = False
    hint: str | None = None
    """A first notification for the human (the demo says what to try)."""

    def __post_init__(self) -> None:
        if not self.prefix.strip():
            raise ConfigError("must name a key, e.g. ctrl+a", field="--prefix")
        if self.palette_key is not None and not self.palette_key.strip():
            self.palette_key = None
        if self.palette_key == self.prefix:
            raise ConfigError(f"{self.palette_key} is already the prefix key", field="--palette-key")
        if len(self.plans) > MAX_PANES:
            raise ConfigError(f"must be between 1 and {MAX_PANES}, not {len(self.plans)}", field="--panes")


class LaunchOptions(BaseModel):
    """What the human asked for on the command line (``polter [--config PATH] [--pane A:R ...] [--restore]
    [--demo] [--panes N] ...``), as plain data: what a session host is started with."""

    model_config = ConfigDict(extra="forbid")

    config: Path | None = Field(default=None, description="--config: the config file (default: polter.toml)")
    panes: list[str] = Field(default_factory=list, description="--pane ADAPTER[:ROLE][,worktree...], in order")
    restore: bool = Field(default=False, description="--restore: the panes of the last session")
    preset: str | None = Field(default=None, description="a whole launch made by code (--demo: demo)")
    count: int | None = Field(default=None, description="--panes N: how many default panes")
    layout: LayoutMode | None = None
    prefix: str | None = None
    palette_key: str | None = None


Preset = Callable[[AdapterRegistry], "Launch"]
"""A whole launch made by code, from the adapters found (the demo's)."""


def is_installed(adapter: Adapter) -> bool:
    """Whether the adapter's program can be started (an instant PATH check, no ``--version``)."""
    program = adapter.executable()
    if os.path.isabs(program):
        return os.access(program, os.X_OK) and Path(program).is_file()
    return shutil.which(program) is not None


def choose_default(registry: AdapterRegistry) -> tuple[Adapter, str, str]:
    """The adapter for panes nobody chose one for: the first installed agent CLI, else the shell.
    Returns it with the reason in a sentence and in a word."""
    agents = [loaded.adapter for loaded in registry if loaded.adapter.info.agent]
    for adapter in agents:
        if is_installed(adapter):
            return (
                adapter,
                f"{adapter.display_name} is the first agent CLI found on PATH ({adapter.executable()})",
                "detected",
            )
    shell = choose_shell(registry)
    looked = ", ".join(adapter.info.command for adapter in agents) or "none known"
    return (
        shell,
        f"no agent CLI is installed (looked for: {looked}); {shell.display_name} instead",
        "no agent CLI found",
    )


def choose_shell(registry: AdapterRegistry) -> Adapter:
    """The first installed adapter that is no agent CLI (the bundled shell)."""
    for loaded in registry:
        if not loaded.adapter.info.agent and is_installed(loaded.adapter):
            return loaded.adapter
    raise AdapterError("no adapter can start here: no agent CLI and no shell was found")


def plan_panes(
    setups: list[PaneSetup], registry: AdapterRegistry, *, source: str, where: Callable[[int], dict[str, Any]]
) -> list[PanePlan]:
    """Decide every pane's adapter and role. ``source`` says who chose ("configured", "--pane", ...);
    ``where(index)`` gives the location of a bad adapter name (``ConfigError`` keyword arguments)."""
    default: tuple[Adapter, str, str] | None = None
    plans = []
    for index, setup in enumerate(setups):
        role = setup.role or (DEFAULT_ROLES[index] if index < len(DEFAULT_ROLES) else DEFAULT_ROLE)
        cwd = (Path.cwd() / setup.cwd).resolve() if setup.cwd is not None else None
        resolved = setup.model_copy(update={"role": role, "cwd": cwd})
        if setup.adapter is None:
            default = default or choose_default(registry)
            adapter, reason, why = default
        else:
            try:
                adapter = registry.get(setup.adapter)
            except AdapterError as exc:
                raise ConfigError(str(exc), **where(index)) from None
            reason, why = f"{adapter.display_name}: {source}", ""
            if not is_installed(adapter):
                reason, why = (
                    f"{adapter.display_name} was {source}, but {adapter.info.command} is not installed",
                    "not installed",
                )
        plans.append(PanePlan(resolved.model_copy(update={"adapter": adapter.name}), adapter, reason, why))
    return plans


def terraria_server(env: dict[str, str] | None = None) -> StdioServer:
    """The bundled Terraria admin MCP server as an upstream (it reads ``TSHOCK_*`` from its environment)."""
    return StdioServer(command=sys.executable, args=["-m", "polter", "terraria", "serve"], env=env or {})


def plan_launch(
    options: LaunchOptions, registry: AdapterRegistry | None = None, *, presets: Mapping[str, Preset] | None = None
) -> Launch:
    """The panes and options ``options`` ask for; ``presets`` are the whole launches made by code, by name."""
    if options.preset is not None:
        preset = (presets or {}).get(options.preset)
        if preset is None:
            raise ConfigError(f"no launch {options.preset!r} is known here", field="--" + options.preset)
        return preset(registry or discover())
    config: AppConfig = load_config(options.config)
    registry = registry or discover()
    for error in registry.errors:
        print(f"polter: {error}", file=sys.stderr)
    layout, prefix = options.layout or config.layout, options.prefix or config.prefix
    if options.restore:
        session = load_session()
        setups = [pane.model_copy(update={"resume": True}) for pane in session.panes]
        plans = plan_panes(
            setups,
            registry,
            source="restored from the last session",
            where=lambda index: {"path": session_path(), "field": f"panes[{index}].adapter"},
        )
        layout = options.layout or session.layout
    elif options.panes:
        setups = [parse_pane_option(value) for value in options.panes]
        plans = plan_panes(setups, registry, source="chosen with --pane", where=lambda index: {"field": "--pane"})
    elif config.panes:
        plans = plan_panes(
            config.panes,
            registry,
            source=f"configured in {config.path}",
            where=lambda index: config.location(("panes", index, "adapter")),
        )
    else:
        count = options.count if options.count is not None else 4
        if not 1 <= count <= 16:
            raise ConfigError(f"must be between 1 and 16, not {count}", field="--panes")
        plans = plan_panes([PaneSetup() for _ in range(count)], registry, source="", where=lambda index: {})
    servers_file = default_servers_path()
    in_file = load_servers(servers_file)  # a bad servers file stops Polter here, with file:line: field
    servers = config.server_configs()
    if os.environ.get("TSHOCK_URL") and TERRARIA not in {**in_file, **servers}:
        servers[TERRARIA] = terraria_server()
    return Launch(
        plans,
        registry,
        layout=layout,
        prefix=prefix,
        palette_key=options.palette_key or config.palette_key,
        servers=servers,
        servers_file=servers_file,
        ask_timeout=config.ask_timeout,
        notify=config.notify_settings(),
    )
