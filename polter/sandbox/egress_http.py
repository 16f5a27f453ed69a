"""The HTTP/1.1 the egress proxy speaks with a pane: the request head it reads, the answer a refusal gets, the
head a plain ``http://`` request is forwarded with, and the relay of the bytes once a connection is allowed.

A pane gets exactly two forms: ``CONNECT host:port`` (HTTPS and anything tunnelled) and an absolute-form
``http://`` request, forwarded once with ``Connection: close``. The relay moves bytes socket → pipe → socket
with ``splice(2)`` where the kernel has it, so a tunnel's payload never enters Python.
"""

from __future__ import annotations

import fcntl
import os
import socket
import threading

from polter.errors import EgressError
from polter.sandbox.egress_targets import BadTarget, parse_authority, parse_http_url

TYPE_CHECKING = False  # as typing's, without importing typing: the egress proxy counts its megabytes
if TYPE_CHECKING:
    from typing import Final

    from polter.sandbox.egress_targets import Target

__all__ = [
    "ProxyRequest",
    "Refusal",
    "forward_head",
    "linger_close",
    "read_request",
    "refusal_answer",
    "relay",
]

MAX_HEAD: Final = 32 * 1024
"""A request head larger than this is refused (400): no client a pane runs needs more."""
PIPE_SIZE: Final = 1 << 20
"""The relay's pipe (``F_SETPIPE_SZ``; Linux caps it at /proc/sys/fs/pipe-max-size, 1 MiB by default)."""
COPY_CHUNK: Final = 256 * 1024
LINGER_SECONDS: Final = 1.0
LINGER_BYTES: Final = 1 << 20
_HOP_BY_HOP: Final = frozenset(
    {"connection", "proxy-connection", "keep-alive", "proxy-authorization", "proxy-authenticate", "te", "trailer"}
    | {"upgrade", "host", "transfer-encoding"}
)
_REASONS: Final = {400: "Bad Request", 403: "Forbidden", 411: "Length Required", 502: "Bad Gateway"}


class Refusal(EgressError):
    """A connection the proxy will not make: the HTTP status, one readable sentence, and the rule behind it."""

    def __init__(self, status: int, sentence: str, *, rule: str | None = None, audited: bool = False) -> None:
        self.status, self.sentence, self.rule = status, sentence, rule
        self.audited = audited
        """The gateway decided it, so its audit row is written (the proxy records its own refusals)."""
        super().__init__(sentence)


class ProxyRequest:
    """What a pane asked for: the target, the URL the role judges, and what came with the head
    (``early_bytes``: a TLS hello or a request body sent before the answer, forwarded once connected)."""

    __slots__ = ("body_length", "early_bytes", "headers", "method", "path", "target", "url")

    def __init__(
        self,
        method: str,
        target: Target,
        url: str,
        path: str = "/",
        headers: list[tuple[str, str]] | None = None,
        body_length: int = 0,
        early_bytes: bytes = b"",
    ) -> None:
        self.method, self.target, self.url, self.path = method, target, url, path
        self.headers = headers or []
        self.body_length, self.early_bytes = body_length, early_bytes

    @property
    def is_connect(self) -> bool:
        return self.method == "CONNECT"


def _bad(message: str) -> Refusal:
    return Refusal(400, f"Polter's egress proxy cannot read this request: {message}.", rule="polter:egress-request")


def read_request(client: socket.socket) -> ProxyRequest:
    """Read and parse one request head; raises :class:`Refusal` (400 or 411) for anything else."""
    buffer = bytearray()
    while (end := buffer.find(b"\r\n\r\n")) < 0:
        if len(buffer) > MAX_HEAD:
            raise _bad(f"its head is longer than {MAX_HEAD} bytes")
        try:
            chunk = client.recv(65536)
        except TimeoutError:
            raise _bad("its head did not arrive in time") from None
        if not chunk:
            raise _bad("the connection closed before the request head ended")
        buffer += chunk
    if end > MAX_HEAD:
        raise _bad(f"its head is longer than {MAX_HEAD} bytes")
    head, early = bytes(buffer[:end]), bytes(buffer[end + 4 :])
    try:
        lines = head.decode("ascii").split("\r\n")
    except UnicodeDecodeError:
        raise _bad("its head is not ASCII") from None
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise _bad(f"{lines[0][:100]!r} is not an HTTP/1.1 request line")
    method, request_target, _version = parts
    headers: list[tuple[str, str]] = []
    for line in lines[1:]:
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip() or line[:1] in (" ", "\t"):
            raise _bad(f"{line[:100]!r} is not a header")
        headers.append((name, value.strip()))
    try:
        if method == "CONNECT":
            target = parse_authority(request_target)
            return ProxyRequest(method, target, f"https://{target.authority}/", early_bytes=early)
        if request_target.lower().startswith("https://"):
            raise _bad("an https:// URL goes through CONNECT host:443, not a plain request")
        if not request_target.lower().startswith("http://"):
            raise _bad("a proxy takes CONNECT host:port or an absolute http:// URL")
        target, path = parse_http_url(request_target)
    except BadTarget as exc:
        raise _bad(str(exc)) from None
    names = {name.lower() for name, _ in headers}
    if "transfer-encoding" in names:
        raise Refusal(411, "Polter's egress proxy forwards plain http:// bodies only with a Content-Length.")
    lengths = {value for name, value in headers if name.lower() == "content-length"}
    if len(lengths) > 1 or lengths and not next(iter(lengths)).isdigit():
        raise _bad("its Content-Length is not one number")
    length = int(next(iter(lengths))) if lengths else 0
    port = "" if target.port == 80 else f":{target.port}"
    host = target.authority.rsplit(":", 1)[0]
    return ProxyRequest(method, target, f"http://{host}{port}{path}", path, headers, length, early)


def forward_head(request: ProxyRequest) -> bytes:
    """The head sent upstream for a plain request: origin-form, ``Host`` from the URL (the host the role
    judged, whatever ``Host`` the client wrote), hop-by-hop headers dropped, ``Connection: close``."""
    dropped = set(_HOP_BY_HOP)
    for name, value in request.headers:
        if name.lower() in ("connection", "proxy-connection"):
            dropped.update(token.strip().lower() for token in value.split(","))
    host = request.target.authority if request.target.port != 80 else request.target.authority.rsplit(":", 1)[0]
    lines = [f"{request.method} {request.path} HTTP/1.1", f"Host: {host}"]
    lines += [f"{name}: {value}" for name, value in request.headers if name.lower() not in dropped]
    lines.append("Connection: close")
    return ("\r\n".join(lines) + "\r\n\r\n").encode("ascii")


def _header_value(text: str) -> str:
    return "".join(char if " " <= char <= "~" else "?" for char in text)[:1000]


def refusal_answer(refusal: Refusal, role: str) -> bytes:
    """The HTTP answer a refused connection gets: the sentence as the body and in ``X-Polter-Reason``."""
    body = (refusal.sentence + "\n").encode()
    headers = [
        f"HTTP/1.1 {refusal.status} {_REASONS.get(refusal.status, 'Refused')}",
        "Content-Type: text/plain; charset=utf-8",
        f"Content-Length: {len(body)}",
        f"X-Polter-Reason: {_header_value(refusal.sentence)}",
        f"X-Polter-Role: {_header_value(role)}",
        *([f"X-Polter-Rule: {_header_value(refusal.rule)}"] if refusal.rule else []),
        "Connection: close",
    ]
    return ("\r\n".join(headers) + "\r\n\r\n").encode("ascii") + body


def linger_close(client: socket.socket, answer: bytes) -> None:
    """Send a refusal, then read what the client still sends for a moment before closing: a socket closed
    with unread data resets the connection, and the client would lose the answer that explains why."""
    try:
        client.sendall(answer)
        client.shutdown(socket.SHUT_WR)
        client.settimeout(LINGER_SECONDS)
        drained = 0
        while drained < LINGER_BYTES and (chunk := client.recv(65536)):
            drained += len(chunk)
    except OSError:
        pass


def _pump(source: socket.socket, destination: socket.socket, limit: int | None = None) -> None:
    """Copy until EOF (or ``limit`` bytes): spliced through a pipe on Linux, recv_into/sendall elsewhere."""
    if limit is None and hasattr(os, "splice"):
        read_end, write_end = os.pipe2(os.O_CLOEXEC)
        try:
            try:
                fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
            except (OSError, AttributeError):
                pass
            source_fd, destination_fd = source.fileno(), destination.fileno()
            while moved := os.splice(source_fd, write_end, PIPE_SIZE):
                while moved:
                    moved -= os.splice(read_end, destination_fd, moved)
        finally:
            os.close(read_end)
            os.close(write_end)
        return
    buffer = bytearray(COPY_CHUNK)
    view = memoryview(buffer)
    left = limit
    while left is None or left > 0:
        received = source.recv_into(buffer, COPY_CHUNK if left is None else min(left, COPY_CHUNK))
        if not received:
            return
        destination.sendall(view[:received])
        if left is not None:
            left -= received


def _half(source: socket.socket, destination: socket.socket, limit: int | None) -> None:
    """One direction: copy, then tell the other side this direction is done (or break both on an error)."""
    try:
        _pump(source, destination, limit)
        if limit is None:
            destination.shutdown(socket.SHUT_WR)
    except OSError:
        for side in (source, destination):
            try:
                side.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def relay(client: socket.socket, upstream: socket.socket, *, request_body: int | None = None) -> None:
    """Move bytes both ways until both directions end. ``request_body`` (a plain request) bounds what the
    client may still send to that many bytes: a second request on the connection goes nowhere."""
    back = threading.Thread(target=_half, args=(upstream, client, None), name="egress-relay", daemon=True)
    back.start()
    _half(client, upstream, request_body)
    back.join()
