"""What the session host tells the egress proxy about a pane (the ``add`` command), validated by hand:
pydantic alone would cost the proxy more than its whole memory budget."""

from __future__ import annotations

import os

from polter.errors import EgressError
from polter.sandbox.egress_gateway import gateway_address
from polter.sandbox.egress_targets import BadTarget, parse_authority

TYPE_CHECKING = False  # as typing's, without importing typing: the egress proxy counts its megabytes
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = ["MODEL_HOST_PORT", "PaneSettings", "pane_settings", "text_field"]

MODEL_HOST_PORT: Final = 443
"""The port of a declared model API host named without one."""


class PaneSettings:
    """What the session host tells the proxy about one pane (the ``add`` command)."""

    __slots__ = ("gateway", "loopback_ports", "model_hosts", "pane", "project", "role", "socket", "token")

    def __init__(
        self,
        *,
        pane: str,
        socket: str,
        token: str,
        gateway: str,
        project: str,
        role: str,
        model_hosts: frozenset[tuple[str, int]] = frozenset(),
        loopback_ports: frozenset[int] = frozenset(),
    ) -> None:
        self.pane, self.socket, self.token, self.gateway = pane, socket, token, gateway
        self.project, self.role, self.model_hosts, self.loopback_ports = project, role, model_hosts, loopback_ports

    def with_gateway(self, url: str) -> PaneSettings:
        fields = {name: getattr(self, name) for name in self.__slots__}
        return PaneSettings(**{**fields, "gateway": url})


def text_field(message: dict[str, Any], key: str) -> str:
    value = message.get(key)
    if not isinstance(value, str) or not value:
        raise EgressError(f"{key!r} must be a non-empty string, not {value!r}")
    return value


def pane_settings(message: dict[str, Any]) -> PaneSettings:
    """Validate an ``add`` command by hand (pydantic would cost the proxy more than its whole budget)."""
    known = {"op", "pane", "socket", "token", "gateway", "project", "role", "model_hosts", "loopback_ports"}
    unknown = sorted(set(message) - known)
    if unknown:
        raise EgressError(f"unknown field(s) {', '.join(unknown)}")
    path = text_field(message, "socket")
    if not os.path.isabs(path):
        raise EgressError(f"'socket' must be an absolute path, not {path!r}")
    gateway = text_field(message, "gateway")
    try:
        gateway_address(gateway)
    except ValueError as exc:
        raise EgressError(str(exc)) from None
    hosts, ports = message.get("model_hosts", []), message.get("loopback_ports", [])
    if not isinstance(hosts, list) or not all(isinstance(host, str) for host in hosts):
        raise EgressError(f"'model_hosts' must be a list of host names, not {hosts!r}")
    if not isinstance(ports, list) or not all(type(port) is int and 0 < port < 65536 for port in ports):
        raise EgressError(f"'loopback_ports' must be a list of port numbers, not {ports!r}")
    try:
        declared = [parse_authority(host, default_port=MODEL_HOST_PORT) for host in hosts]
    except BadTarget as exc:
        raise EgressError(f"'model_hosts': {exc}") from None
    return PaneSettings(
        pane=text_field(message, "pane"),
        socket=path,
        token=text_field(message, "token"),
        gateway=gateway,
        project=text_field(message, "project"),
        role=text_field(message, "role"),
        model_hosts=frozenset((target.host, target.port) for target in declared),
        loopback_ports=frozenset(ports),
    )
