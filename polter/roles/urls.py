"""A URL's host as a browser (and the CLIs' fetch tools) read it: the WHATWG URL rules, not a regex.

``https://evil.io\\@good.com/`` goes to evil.io (a backslash is a slash in a special scheme), ``https://a@b/``
to b, ``https://a.evil.io./`` to a.evil.io, ``http://0x7f.1/`` to 127.0.0.1, ``https://EXAMPLE.%63om`` to
example.com, ``https://bücher.de`` to xn--bcher-kva.de. A host that cannot be read for sure is None: the
caller asks. Pure.
"""

from __future__ import annotations

import ipaddress
import re
from urllib.parse import unquote

__all__ = ["parse_url"]

_SPECIAL = {"http": 80, "https": 443, "ws": 80, "wss": 443, "ftp": 21, "file": None}
_FORBIDDEN = re.compile(r"[\x00-\x20#%/:<>?@\[\\\]^|\x7f]")
"""Code points a host may not contain once percent-decoded (WHATWG's forbidden domain code points)."""


def parse_url(url: str) -> tuple[str, str] | None:
    """``(scheme://host[:port]/path…, host)`` as the WHATWG parser reads ``url`` (userinfo dropped, host in
    its canonical form), or None when the host cannot be read for sure."""
    text = re.sub(r"[\t\n\r]", "", url.strip("\x00- "))
    match = re.match(r"([a-zA-Z][a-zA-Z0-9+.-]*):(.*)", text, re.DOTALL)
    if match is None:
        return None
    scheme, rest = match[1].lower(), match[2]
    special = scheme in _SPECIAL
    if special:
        rest = rest.replace("\\", "/")
        rest = rest.lstrip("/")
    elif rest.startswith("//"):
        rest = rest[2:]
    else:
        return None  # no authority (mailto:, data:): no host to judge
    end = min((rest.find(mark) for mark in "/?#" if mark in rest), default=len(rest))
    authority, path = rest[:end], rest[end:]
    authority = authority.rsplit("@", 1)[-1]
    if authority.startswith("["):
        close = authority.find("]")
        if close < 0:
            return None
        try:
            host = f"[{ipaddress.IPv6Address(authority[1:close]).compressed}]"
        except ValueError:
            return None
        port = authority[close + 1 :].removeprefix(":")
    else:
        written, _, port = authority.partition(":")
        parsed = _domain(written) if special else (written.lower() or None)
        if parsed is None:
            return None
        host = parsed
    if port and not port.isdigit():
        return None
    shown_port = f":{int(port)}" if port and int(port) != _SPECIAL.get(scheme) else ""
    return f"{scheme}://{host}{shown_port}{path or '/'}", host.strip("[]")


def _domain(host: str) -> str | None:
    """A special URL's host: percent-decoded, IDNA to ASCII, lower case, no trailing dot, IPv4 canonical."""
    decoded = unquote(host, errors="strict") if "%" in host else host
    if not decoded or _FORBIDDEN.search(decoded):
        return None
    try:
        ascii_host = decoded.encode("idna").decode("ascii").lower()
    except UnicodeError:
        return None
    ascii_host = ascii_host.removesuffix(".")
    if not ascii_host or ".." in ascii_host:
        return None
    last = ascii_host.rsplit(".", 1)[-1]
    if re.fullmatch(r"[0-9]+|0[xX][0-9a-fA-F]*", last):
        return _ipv4(ascii_host)
    return ascii_host


def _ipv4(host: str) -> str | None:
    """WHATWG's IPv4 parser: 1 to 4 parts, each decimal, ``0x`` hex or ``0`` octal; the last fills the rest."""
    parts = host.split(".")
    if len(parts) > 4:
        return None
    numbers = []
    for part in parts:
        try:
            if part.lower().startswith("0x"):
                numbers.append(int(part[2:] or "0", 16))
            elif len(part) > 1 and part.startswith("0"):
                numbers.append(int(part, 8))
            else:
                numbers.append(int(part, 10))
        except ValueError:
            return None
    if any(number > 255 for number in numbers[:-1]) or numbers[-1] >= 256 ** (5 - len(numbers)):
        return None
    value = numbers[-1]
    for position, number in enumerate(numbers[:-1]):
        value += number * 256 ** (3 - position)
    return str(ipaddress.IPv4Address(value))
