"""A pane's launch, confined: what the session host knows of a pane turned into its sandbox.

Called once per start of a pane (the role may have changed since the last one). A pane whose sandbox cannot
start is refused with the reason (:attr:`LaunchSpec.refused`): it never runs unconfined. Only a plain shell
pane whose role says ``[sandbox] shell = "unconfined"`` runs outside: the human's own shell.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from polter.protocol import BuiltinsPolicy, Decision
from polter.sandbox.bwrap import PaneSandbox, program_folders, programs_run_outside, sandboxed, unavailable
from polter.sandbox.rules import WriteRules, write_rules
from polter.terminal.launch import LaunchSpec

__all__ = ["CliFiles", "ModelApi", "PaneFacts", "confine", "model_api"]


@dataclass(frozen=True)
class ModelApi:
    """Where a CLI's model API is: hosts on the network (through the proxy) and ports on loopback."""

    hosts: tuple[str, ...] = ()
    loopback_ports: tuple[int, ...] = ()


def model_api(endpoints: Iterable[str]) -> ModelApi:
    """Split the adapter's model endpoints (URLs or host names) into network hosts and loopback ports."""
    hosts: list[str] = []
    ports: list[int] = []
    for endpoint in endpoints:
        parts = urlsplit(endpoint if "://" in endpoint else f"https://{endpoint}")
        host = (parts.hostname or "").rstrip(".").lower()
        if not host:
            continue
        try:
            port = parts.port or (80 if parts.scheme == "http" else 443)
        except ValueError:
            continue
        if _loopback(host):
            ports.append(port)
        else:
            hosts.append(host)
    return ModelApi(tuple(dict.fromkeys(hosts)), tuple(dict.fromkeys(ports)))


def _loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class CliFiles:
    """What the sandbox makes of the CLI's own files (the session host finds them from the adapter's answer)."""

    polter_files: tuple[Path, ...] = ()
    """The files Polter wrote for the CLI: read-only."""
    state: tuple[Path, ...] = ()
    """The CLI's own state: writable whatever the role."""
    held: tuple[Path, ...] = ()
    """The CLI's folders of settings and code in the user's home: read-only whatever the role, but for ``state``."""
    private_copies: tuple[tuple[Path, Path], ...] = ()
    """(copy, original): files the pane works on a copy of."""
    protected: tuple[Path, ...] = ()
    """More paths the pane may not write (the user's own versions of the config Polter writes for the CLI)."""


@dataclass(frozen=True)
class PaneFacts:
    """Everything the host knows of one start of a pane."""

    project: Path
    runtime_dir: Path
    policy: BuiltinsPolicy | None
    """The role's rules (None: the role is not loaded, so the pane writes nothing)."""
    agent: bool
    """An agent CLI or a ``command`` agent (never unconfined), not a plain shell."""
    cli: CliFiles = CliFiles()
    hidden: tuple[Path, ...] = ()
    gateway_url: str = ""
    gateway_socket_dir: Path | None = None
    egress_socket_dir: Path | None = None
    model: ModelApi = ModelApi()
    home: Path | None = None


def _rules(policy: BuiltinsPolicy | None, project: Path, home: Path) -> WriteRules:
    if policy is None:
        return WriteRules(project=False, home=False, folders=())
    pairs: list[tuple[str, Decision]] = [
        *((pattern, "deny") for pattern in policy.deny),
        *((pattern, "ask") for pattern in policy.ask),
        *((pattern, "allow") for pattern in policy.allow),
    ]
    return write_rules(policy.default, pairs, project=str(project), home=str(home))


def confine(spec: LaunchSpec, facts: PaneFacts) -> LaunchSpec:
    """``spec`` inside the pane's sandbox; refused (with what to install) where no sandbox can start."""
    if not facts.agent and facts.policy is not None and facts.policy.unconfined_shell:
        return spec
    missing = unavailable()
    if missing is not None:
        return spec.model_copy(update={"refused": f"Polter did not start this pane unconfined: {missing}"})
    home = facts.home or Path.home()
    port = urlsplit(facts.gateway_url).port or 0 if facts.gateway_url else 0
    sandbox = PaneSandbox(
        project=facts.project,
        home=home,
        rules=_rules(facts.policy, facts.project, home),
        runtime_dir=facts.runtime_dir,
        polter_files=facts.cli.polter_files,
        state_paths=facts.cli.state,
        held=facts.cli.held,
        private_copies=facts.cli.private_copies,
        protected=(*facts.cli.protected, *programs_run_outside(spec.environment(), home, facts.project)),
        hidden=tuple(path for path in dict.fromkeys(facts.hidden) if os.path.isdir(path)),
        gateway_port=port,
        gateway_socket_dir=facts.gateway_socket_dir,
        egress_socket_dir=facts.egress_socket_dir,
        loopback_ports=tuple(p for p in facts.model.loopback_ports if p != port),
        keep_visible=program_folders(spec.environment(), spec.argv),
    )
    return sandboxed(spec, sandbox)
