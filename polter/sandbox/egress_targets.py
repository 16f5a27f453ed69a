"""Where a pane's connection goes, as the connection names it, and the addresses no role can open.

A target's host is compared in one form everywhere (the decision, the audit row, the refusal): lowercase,
one trailing dot stripped, IDNA to ASCII; an IP literal becomes an address. A host name whose last label is
a number (``127.1``, ``0x7f.1``, ``2130706433``) is an address in disguise that resolvers accept, so it is
refused as malformed rather than judged as a name.

Loopback, link-local (cloud metadata at 169.254.169.254 included), unspecified and multicast addresses are
out of reach whatever the role says: they are this machine and its neighbourhood (the gateway, the session
host's sockets, a local model API), not "the web". The only way to loopback is a port its CLI declared for
its model API. Names are resolved once and the proxy connects to exactly the addresses it checked, so a
name that resolves elsewhere on a second lookup (DNS rebinding) gains nothing.
"""

from __future__ import annotations

import ipaddress
import re
import socket

from polter.errors import EgressError

TYPE_CHECKING = False  # as typing's, without importing typing: the egress proxy counts its megabytes
if TYPE_CHECKING:  # the proxy process imports neither typing nor dataclasses (its memory budget is 10 MB)
    from collections.abc import Mapping
    from typing import Final

__all__ = [
    "LOOPBACK_NAMES",
    "Address",
    "BadTarget",
    "Resolver",
    "Target",
    "forbidden_kind",
    "parse_authority",
    "parse_http_url",
]

Address = ipaddress.IPv4Address | ipaddress.IPv6Address

LOOPBACK_NAMES: Final = {"localhost": ("127.0.0.1", "::1")}
"""Names that are loopback by definition, answered without asking any resolver."""
_MODEL_LOOPBACK: Final = frozenset({"localhost", "127.0.0.1", "::1"})

_NAME = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(?<!-)(\.(?!-)[a-z0-9_-]{1,63}(?<!-))*$")
_NUMERIC_LABEL = re.compile(r"^(0x[0-9a-f]*|[0-9]+)$")


class BadTarget(EgressError):
    """A CONNECT authority or an absolute URL that does not name a host and port Polter can judge."""


class Target:
    """A host and port as the connection named them, normalised; ``address`` is set for an IP literal."""

    __slots__ = ("address", "host", "port")

    def __init__(self, host: str, port: int, address: Address | None = None) -> None:
        self.host, self.port, self.address = host, port, address

    def __repr__(self) -> str:
        return f"Target({self.authority})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Target) and (self.host, self.port) == (other.host, other.port)

    def __hash__(self) -> int:
        return hash((self.host, self.port))

    @property
    def authority(self) -> str:
        host = f"[{self.host}]" if self.address is not None and self.address.version == 6 else self.host
        return f"{host}:{self.port}"

    @property
    def is_loopback_name(self) -> bool:
        """``localhost``, 127.0.0.1 or ::1: what a CLI's local model API is reached by (no other loopback)."""
        return self.host in _MODEL_LOOPBACK


def normalise_host(text: str) -> tuple[str, Address | None]:
    """The host as it is compared: an IP literal as an address, a name lowercase ASCII without a trailing dot."""
    if text.startswith("["):
        if not text.endswith("]"):
            raise BadTarget(f"{text!r} opens an IPv6 literal it does not close")
        try:
            address = ipaddress.IPv6Address(text[1:-1])
        except ValueError:
            raise BadTarget(f"{text!r} is not an IPv6 address") from None
        if address.scope_id:
            raise BadTarget(f"{text!r} names a network interface, which a pane may not choose")
        return str(address), address
    try:
        version4 = ipaddress.IPv4Address(text)
    except ValueError:
        pass
    else:
        return str(version4), version4
    name = text.lower()
    name = name[:-1] if name.endswith(".") else name
    if not name:
        raise BadTarget("the host is empty")
    if not name.isascii():
        try:
            name = name.encode("idna").decode("ascii")
        except UnicodeError as exc:
            raise BadTarget(f"{text!r} is not a host name IDNA can spell in ASCII ({exc})") from None
    if len(name) > 253 or not _NAME.match(name):
        raise BadTarget(f"{text!r} is not a host name")
    if _NUMERIC_LABEL.match(name.rsplit(".", 1)[-1]):
        raise BadTarget(f"{text!r} is an IP address in disguise (its last label is a number); write the address")
    return name, None


def _port(text: str, what: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise BadTarget(f"{what} has no valid port ({text!r})")
    return int(text)


def parse_authority(authority: str, *, default_port: int | None = None) -> Target:
    """``host:port`` or ``[v6]:port`` (a CONNECT target); the port may be left out only with ``default_port``."""
    if authority.startswith("["):
        closing = authority.find("]")
        host_text, rest = authority[: closing + 1], authority[closing + 1 :]
        if closing < 0 or rest and not rest.startswith(":"):
            raise BadTarget(f"{authority!r} is not [IPv6]:port")
        port_text = rest[1:]
    elif authority.count(":") == 1:
        host_text, _, port_text = authority.partition(":")
    elif ":" in authority:
        raise BadTarget(f"{authority!r} is not host:port (an IPv6 address goes in brackets)")
    else:
        host_text, port_text = authority, ""
    if not port_text:
        if default_port is None:
            raise BadTarget(f"{authority!r} names no port")
        port = default_port
    else:
        port = _port(port_text, repr(authority))
    host, address = normalise_host(host_text)
    return Target(host, port, address)


def parse_http_url(url: str) -> tuple[Target, str]:
    """An absolute-form ``http://`` request target → (target, path with query, never empty)."""
    scheme, separator, rest = url.partition("://")
    if not separator or scheme.lower() != "http":
        raise BadTarget(f"{url[:200]!r} is not an absolute http:// URL")
    end = min((index for index in (rest.find("/"), rest.find("?"), rest.find("#")) if index >= 0), default=len(rest))
    authority, path = rest[:end], rest[end:].split("#", 1)[0]
    if "@" in authority:
        raise BadTarget("a URL with credentials before its host is refused (it hides which host it names)")
    target = parse_authority(authority, default_port=80)
    return target, path if path.startswith("/") else "/" + path


def forbidden_kind(address: Address) -> str | None:
    """Which kind of address no role can open this is (``loopback``, ``link-local``...), or None."""
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if address.is_loopback:
        return "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_unspecified:
        return "unspecified"
    if address.is_multicast:
        return "multicast"
    return None


class Resolver:
    """Host names → the addresses to connect to, asked of the system resolver once per connection.

    ``test_hosts`` is a deliberate test hook, set only by ``polter egress --test-host NAME=ADDRESS``: those
    names resolve to the given address and skip the forbidden-address check, so a test can stand a loopback
    server in for a web host. Production never passes it."""

    def __init__(self, test_hosts: Mapping[str, str] | None = None) -> None:
        self.test_hosts: dict[str, Address] = {}
        for name, address in (test_hosts or {}).items():
            self.test_hosts[normalise_host(name)[0]] = ipaddress.ip_address(address)

    def is_test_host(self, target: Target) -> bool:
        return target.host in self.test_hosts

    def resolve(self, target: Target) -> list[Address]:
        """Every address the target's name has, in the resolver's order (raises OSError when it has none)."""
        if target.address is not None:
            return [target.address]
        mapped = self.test_hosts.get(target.host)
        if mapped is not None:
            return [mapped]
        if target.host in LOOPBACK_NAMES:
            return [ipaddress.ip_address(text) for text in LOOPBACK_NAMES[target.host]]
        found: list[Address] = []
        for *_, sockaddr in socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM):
            address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
            if address not in found:
                found.append(address)
        return found
