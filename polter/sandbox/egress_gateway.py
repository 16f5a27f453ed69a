"""The egress proxy's questions to the gateway: one ``POST /hook/egress`` per connection, over a plain socket.

The gateway decides with the pane's role (its ``web`` rules), resolves an ask with the human, writes the audit
row, and answers a :class:`~polter.protocol.HookAnswer`. This module speaks just enough HTTP/1.1 for that
(``http.client`` and pydantic would double the proxy's memory) and validates the answer by hand. Anything but
a well-formed answer raises :class:`GatewayRefusal`, which the proxy turns into a refused connection: the
execution layer fails closed.
"""

from __future__ import annotations

import json
import socket

from polter.errors import EgressError

TYPE_CHECKING = False  # as typing's, without importing typing: the egress proxy counts its megabytes
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = ["ADAPTER", "ASK_TIMEOUT", "GatewayAnswer", "GatewayRefusal", "ask_gateway", "gateway_address"]

ADAPTER: Final = "egress"
"""The name the proxy's requests carry in ``/hook/<adapter>``; the audit rows say ``[egress]``."""
ASK_TIMEOUT: Final = 590.0
"""How long a connection waits for the verdict: the gateway holds an ask open until a human answers."""
CONNECT_TIMEOUT: Final = 5.0
MAX_ANSWER: Final = 1 << 20


class GatewayRefusal(EgressError):
    """The gateway gave no verdict (unreachable, an HTTP error, an unreadable answer); the message says which."""


class GatewayAnswer:
    """The gateway's verdict: allowed or not, in its words, by which rule."""

    __slots__ = ("allowed", "reason", "rule")

    def __init__(self, allowed: bool, reason: str, rule: str | None) -> None:
        self.allowed, self.reason, self.rule = allowed, reason, rule


def gateway_address(url: str) -> tuple[str, int]:
    """``http://HOST:PORT`` → (host, port); the gateway serves plain HTTP on loopback only."""
    if not url.startswith("http://"):
        raise ValueError(f"the gateway URL {url!r} is not http://HOST:PORT")
    authority = url[len("http://") :].split("/", 1)[0]
    if authority.startswith("["):
        host, _, port = authority[1:].partition("]:")
    else:
        host, _, port = authority.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise ValueError(f"the gateway URL {url!r} is not http://HOST:PORT")
    return host, int(port)


def _dechunk(body: bytes) -> bytes:
    parts: list[bytes] = []
    while True:
        size_line, _, body = body.partition(b"\r\n")
        size = int(size_line.split(b";", 1)[0], 16)
        if size == 0:
            return b"".join(parts)
        if len(body) < size:
            raise ValueError("a chunked body cut short")
        parts.append(body[:size])
        body = body[size + 2 :]


def _post(url: str, token: str, request: dict[str, Any], timeout: float) -> tuple[int, bytes]:
    host, port = gateway_address(url)
    body = json.dumps(request).encode()
    head = (
        f"POST /hook/{ADAPTER} HTTP/1.1\r\nHost: {host if ':' not in host else f'[{host}]'}:{port}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode()
    with socket.create_connection((host, port), timeout=CONNECT_TIMEOUT) as connection:
        connection.settimeout(timeout)
        connection.sendall(head + body)
        chunks: list[bytes] = []
        received = 0
        while chunk := connection.recv(65536):
            chunks.append(chunk)
            received += len(chunk)
            if received > MAX_ANSWER:
                raise ValueError("the answer is larger than any verdict")
    answer = b"".join(chunks)
    head_bytes, separator, payload = answer.partition(b"\r\n\r\n")
    if not separator:
        raise ValueError("the answer ends before its headers do")
    lines = head_bytes.split(b"\r\n")
    status_parts = lines[0].split(b" ", 2)
    if len(status_parts) < 2 or not status_parts[0].startswith(b"HTTP/1.") or not status_parts[1].isdigit():
        raise ValueError(f"not an HTTP status line: {lines[0][:80]!r}")
    headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(b":") for line in lines[1:])}
    if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
        payload = _dechunk(payload)
    elif b"content-length" in headers:
        length = int(headers[b"content-length"])
        if len(payload) < length:
            raise ValueError("the answer is shorter than it says")
        payload = payload[:length]
    return int(status_parts[1]), payload


def ask_gateway(url: str, token: str, request: dict[str, Any], *, timeout: float = ASK_TIMEOUT) -> GatewayAnswer:
    """The gateway's verdict on ``request`` (a HookRequest as JSON); raises :class:`GatewayRefusal` otherwise."""
    try:
        status, payload = _post(url, token, request, timeout)
    except (OSError, ValueError) as exc:
        raise GatewayRefusal(f"the gateway cannot be reached ({exc})") from exc
    if status == 401:
        raise GatewayRefusal("the gateway does not know this pane's token")
    if status != 200:
        detail = payload[:200].decode("utf-8", "replace")
        raise GatewayRefusal(f"the gateway answered HTTP {status}: {detail}")
    try:
        verdict = json.loads(payload)
    except ValueError as exc:
        raise GatewayRefusal(f"the gateway's answer is not JSON ({exc})") from None
    decision = verdict.get("decision") if isinstance(verdict, dict) else None
    reason, rule = (verdict.get("reason", ""), verdict.get("rule")) if isinstance(verdict, dict) else ("", None)
    if decision not in ("allow", "deny") or not isinstance(reason, str) or not isinstance(rule, str | None):
        raise GatewayRefusal(f"the gateway's answer is not a verdict: {payload[:200]!r}")
    return GatewayAnswer(decision == "allow", reason, rule)
