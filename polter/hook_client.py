"""The veto hook a CLI runs before each tool call: forwards its payload to Polter's gateway and prints the
answer. Standard library only, and nothing of Polter's: it runs before every Read and Grep, so it must
start in a few milliseconds (adapters run it as ``python -I -S /path/to/hook_client.py``).

    hook_client.py ADAPTER [PROJECT [RUNTIME_DIR]]
    hook_client.py --state ADAPTER

Reads the CLI's hook payload on stdin, POSTs it to ``$POLTER_GATEWAY_URL/hook/ADAPTER/payload`` with
``$POLTER_TOKEN``; the gateway judges it (the adapter's translation runs there) and returns the CLI's reply:
the exit code, then stdout and stderr (see :mod:`polter.gateway.hook_payloads`). Fails closed: a missing
variable, an unreachable gateway, an HTTP error or an unreadable answer exits 2 with the reason on stderr
(``Polter: the gateway answered HTTP 404: ...; the call is refused``), which every supported CLI takes as a veto.

With ``--state`` it is no veto but a state report (a turn began, a permission dialog opened, the turn ended):
the payload goes to ``/hook/ADAPTER/state``, and whatever happens it prints nothing and exits 0, so the CLI
carries on exactly as without it (a Stop hook that exits 2 would make the agent continue its turn).
"""

import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (17 ms cold)
if TYPE_CHECKING:
    import _socket

TIMEOUT_SECONDS = 590.0
"""A little under the CLIs' hook timeout (600 s): the gateway holds an ask open until a human answers."""
STATE_TIMEOUT_SECONDS = 5.0
"""A state report is taken at once; a gateway that does not answer in this long is not waited for."""

_UNRESERVED = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/")


def _quote(text: str) -> str:
    return "".join(
        chr(byte) if byte in _UNRESERVED else f"%{byte:02X}" for byte in text.encode("utf-8", "surrogateescape")
    )


def _veto(reason: str) -> int:
    sys.stderr.write(f"Polter: {reason}; the call is refused\n")
    return 2


CONNECT_TIMEOUT = 5.0
MAX_ANSWER = 1 << 20
"""Bytes of an answer read at most: no verdict is larger."""


def gateway_address(url: str) -> tuple[str, int]:
    """``http://127.0.0.1:PORT`` → (host, port); the gateway binds loopback only, over plain HTTP."""
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


class Refused(Exception):
    """The gateway gave no verdict: the reason, in words, for the veto."""


def _dechunk(body: bytes) -> bytes:
    """A ``Transfer-Encoding: chunked`` body, joined (raises ValueError when it is cut short)."""
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


def _connect(host: str, port: int, timeout: float) -> "_socket.socket":
    """A TCP connection to ``host``:``port`` (each of its addresses tried in turn), as
    ``socket.create_connection`` makes it, from the C module: ``import socket`` builds its enums at
    import, and a host name given as ``str`` loads the IDNA codec (with ``re`` and ``enum``): 3–12 ms
    each of a hook that runs before every tool call."""
    import _socket  # lazy: refusals and a missing variable need no socket

    try:
        name = host.encode("ascii")  # the gateway binds a loopback address
    except UnicodeEncodeError:
        raise OSError(f"{host!r} is not an address the gateway listens on") from None
    error: OSError | None = None
    for family, kind, protocol, _, address in _socket.getaddrinfo(name, port, 0, _socket.SOCK_STREAM):
        connection = _socket.socket(family, kind, protocol)
        try:
            connection.settimeout(timeout)
            connection.connect(address)
            return connection
        except OSError as exc:
            connection.close()
            error = exc
    raise error or OSError(f"{host} has no address")


def post(url: str, path: str, token: str, body: bytes, *, timeout: float) -> tuple[int, bytes]:
    """One ``POST`` of JSON to the gateway (``path`` already quoted) with a pane's token, over a plain socket:
    (status, body). Raises OSError (unreachable) or ValueError (not a readable HTTP answer). Also the egress
    proxy's way to the gateway: ``http.client`` would cost the hook its start and the proxy its memory."""
    host, port = gateway_address(url)
    head = (
        f"POST {path} HTTP/1.1\r\nHost: {url[len('http://') :].split('/', 1)[0]}\r\n"
        f"Authorization: Bearer {token}\r\nContent-Type: application/json\r\nContent-Length: {len(body)}\r\n"
        "Connection: close\r\n\r\n"
    )
    connection = _connect(host, port, min(timeout, CONNECT_TIMEOUT))
    try:
        connection.settimeout(timeout)
        connection.sendall(head.encode("latin-1") + body)
        chunks: list[bytes] = []
        received = 0
        while chunk := connection.recv(65536):
            chunks.append(chunk)
            received += len(chunk)
            if received > MAX_ANSWER:
                raise ValueError("the answer is larger than any verdict")
    finally:
        connection.close()
    header, separator, payload = b"".join(chunks).partition(b"\r\n\r\n")
    if not separator:
        raise ValueError("the answer ends before its headers do")
    lines = header.split(b"\r\n")
    status = lines[0].split(b" ", 2)
    if len(status) < 2 or not status[0].startswith(b"HTTP/1.") or not status[1].isdigit():
        raise ValueError(f"not an HTTP status line: {lines[0][:80]!r}")
    headers = {name.strip().lower(): value.strip() for name, _, value in (line.partition(b":") for line in lines[1:])}
    if headers.get(b"transfer-encoding", b"").lower() == b"chunked":
        payload = _dechunk(payload)
    elif b"content-length" in headers:
        length = int(headers[b"content-length"])
        if len(payload) < length:
            raise ValueError("the answer is shorter than it says")
        payload = payload[:length]
    return int(status[1]), payload


def ask(
    url: str,
    token: str,
    adapter: str,
    payload: bytes,
    project: str,
    runtime: str,
    *,
    endpoint: str = "payload",
    timeout: float = TIMEOUT_SECONDS,
) -> tuple[int, bytes, bytes]:
    """POST the payload to ``/hook/ADAPTER/ENDPOINT``; (exit code, stdout, stderr) of the gateway's reply.

    Raises :class:`Refused` with the reason when there is no verdict: unreachable, an HTTP error, or garbage."""
    query = "reply=command"
    if project:
        query += "&project=" + _quote(project)
    if runtime:
        query += "&runtime=" + _quote(runtime)
    try:
        status, body = post(url, f"/hook/{_quote(adapter)}/{endpoint}?{query}", token, payload, timeout=timeout)
    except OSError as exc:
        raise Refused(f"the gateway at {url} cannot be reached ({exc})") from exc
    except ValueError as exc:
        raise Refused(f"the gateway's answer cannot be read ({exc})") from exc
    if status != 200:
        detail = body[:300].decode("utf-8", "replace").strip()
        raise Refused(f"the gateway answered HTTP {status}{': ' + detail if detail else ''}")
    try:
        code, _, rest = body.partition(b"\n")
        length, _, rest = rest.partition(b"\n")
        size = int(length)
        if size > len(rest):
            raise ValueError("the reply is shorter than it says")
        return int(code), rest[:size], rest[size:]
    except ValueError as exc:
        raise Refused(f"the gateway's answer cannot be read ({exc}): {body[:100]!r}") from exc


def report_state(argv: list[str]) -> int:
    """``--state ADAPTER``: pass the payload on as a state report; silent, and exit 0 whatever happens."""
    url, token = os.environ.get("POLTER_GATEWAY_URL"), os.environ.get("POLTER_TOKEN")
    if not argv or not argv[0] or not url or not token:
        return 0
    try:
        payload = sys.stdin.buffer.read()
        ask(url, token, argv[0], payload, "", "", endpoint="state", timeout=STATE_TIMEOUT_SECONDS)
    except (Refused, OSError, ValueError):
        pass
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["--state"]:
        return report_state(argv[1:])
    if not argv or not argv[0]:
        return _veto("the hook was started without an adapter name")
    adapter = argv[0]
    project = argv[1] if len(argv) > 1 else ""
    runtime = argv[2] if len(argv) > 2 else ""
    url, token = os.environ.get("POLTER_GATEWAY_URL"), os.environ.get("POLTER_TOKEN")
    if not url or not token:
        missing = " and ".join(
            name for name, value in (("POLTER_GATEWAY_URL", url), ("POLTER_TOKEN", token)) if not value
        )
        return _veto(f"{missing} not set (this CLI was not started by Polter)")
    try:
        payload = sys.stdin.buffer.read()
    except OSError as exc:
        return _veto(f"the hook payload cannot be read ({exc})")
    try:
        code, stdout, stderr = ask(url, token, adapter, payload, project, runtime)
    except Refused as exc:
        return _veto(str(exc))
    sys.stdout.buffer.write(stdout)
    sys.stderr.buffer.write(stderr)
    sys.stdout.flush()
    sys.stderr.flush()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
