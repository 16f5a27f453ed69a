"""The egress proxy: a sandboxed pane's only way to the network, deciding each connection by the pane's role.

Each pane gets one Unix socket (bind-mounted into its sandbox, where a socat on 127.0.0.1:PORT pipes to it),
so the socket a connection arrives on *is* the pane: nothing the pane sends can claim another identity.
Per connection (``CONNECT host:port`` or an absolute ``http://`` request), in this order:

1. a target that does not parse → 400;
2. loopback (``localhost``, 127.0.0.0/8, ::1): only a port the pane's CLI declared for its model API, never
   the gateway's; other loopback, link-local, unspecified and multicast addresses → 403, whatever the role;
3. a model API host its CLI declared (``api.anthropic.com``) → allowed by the proxy, audited at the gateway;
4. anything else → the gateway decides by the role's ``web`` rules (``POST /hook/egress``: asks resolved,
   audit written); no answer or a garbled one → 403 (fails closed);
5. a name is then resolved once, every address checked as in 2, and the proxy connects to those addresses
   (no second lookup to rebind); an unreachable upstream → 502.

A refused connection gets an HTTP answer whose body and ``X-Polter-Reason`` say, in one sentence, which role
and which rule refused it. The process is ``polter egress``, driven over stdin (see :func:`run_commands`);
it stays lean (threads, ``splice(2)``, no asyncio, no pydantic) to stay under 10 MB.
"""

from __future__ import annotations

import json
import os
import queue
import socket
import stat
import sys
import threading

from polter.errors import EgressError
from polter.sandbox.egress_gateway import GatewayRefusal, ask_gateway, gateway_address
from polter.sandbox.egress_http import Refusal, forward_head, linger_close, read_request, refusal_answer, relay
from polter.sandbox.egress_panes import PaneSettings, pane_settings, text_field
from polter.sandbox.egress_targets import Resolver, forbidden_kind

TYPE_CHECKING = False  # as typing's, without importing typing: the egress proxy counts its megabytes
if TYPE_CHECKING:  # typing and dataclasses stay out of the process: they would cost 2.5 MB of its 10
    from collections.abc import Callable
    from typing import IO, Any, Final

    from polter.sandbox.egress_http import ProxyRequest
    from polter.sandbox.egress_targets import Address, Target

__all__ = ["READY_LINE", "EgressProxy", "main", "run_commands"]

READY_LINE: Final = "egress ready"
HEAD_TIMEOUT: Final = 30.0
"""Seconds a client has to send its request head (a connection that says nothing is closed)."""
CONNECT_TIMEOUT: Final = 10.0
_THREAD_STACK: Final = 256 * 1024


class _Pane:
    """A pane's listener, its open sockets (cut when the pane goes) and its counts."""

    def __init__(self, settings: PaneSettings, listener: socket.socket, inode: int) -> None:
        self.settings, self.listener, self.inode = settings, listener, inode
        self.connections: set[socket.socket] = set()
        self.closed = False
        self.served = self.refused = 0


def _listen(path: str) -> tuple[socket.socket, int]:
    """A fresh 0600 socket at ``path``, replacing a stale socket there (never any other kind of file)."""
    try:
        if not stat.S_ISSOCK(os.lstat(path).st_mode):
            raise EgressError(f"{path} exists and is not a socket; it is left alone")
        os.unlink(path)
    except FileNotFoundError:
        pass
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    previous = os.umask(0o177)
    try:
        listener.bind(path)
    except OSError as exc:
        listener.close()
        raise EgressError(f"cannot listen at {path}: {exc}") from exc
    finally:
        os.umask(previous)
    os.chmod(path, 0o600)
    listener.listen(128)
    return listener, os.lstat(path).st_ino


class EgressProxy:
    """The panes' listeners and the decision on every connection; thread-safe (commands come from stdin,
    connections each run in a thread of their own)."""

    def __init__(self, *, resolver: Resolver | None = None, log: Callable[[str], None] | None = None) -> None:
        self.resolver = resolver or Resolver()
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self._panes: dict[str, _Pane] = {}
        self._lock = threading.Lock()
        self._audits: queue.SimpleQueue[tuple[PaneSettings, dict[str, Any]]] = queue.SimpleQueue()
        self._auditor: threading.Thread | None = None

    # -- commands --------------------------------------------------------------------------------

    def add(self, settings: PaneSettings) -> None:
        """Listen for a pane (a known pane is updated in place; a new socket path re-creates its socket)."""
        with self._lock:
            existing = self._panes.get(settings.pane)
            if existing is not None and existing.settings.socket == settings.socket:
                existing.settings = settings
                return
        if existing is not None:
            self.remove(settings.pane)
        listener, inode = _listen(settings.socket)
        pane = _Pane(settings, listener, inode)
        with self._lock:
            self._panes[settings.pane] = pane
        threading.Thread(target=self._accept, args=(pane,), name=f"egress-{settings.pane}", daemon=True).start()

    def remove(self, pane_id: str) -> bool:
        """Stop listening for a pane, remove its socket and cut its open connections."""
        with self._lock:
            pane = self._panes.pop(pane_id, None)
        if pane is None:
            return False
        pane.closed = True
        for sock in (pane.listener, *list(pane.connections)):
            try:
                sock.shutdown(socket.SHUT_RDWR)  # wakes a thread blocked in accept() or splice()
            except OSError:
                pass
        pane.listener.close()
        try:
            if os.lstat(pane.settings.socket).st_ino == pane.inode:
                os.unlink(pane.settings.socket)
        except OSError:
            pass
        return True

    def set_gateway(self, url: str) -> None:
        gateway_address(url)
        with self._lock:
            for pane in self._panes.values():
                pane.settings = pane.settings.with_gateway(url)

    def close(self) -> None:
        for pane_id in list(self._panes):
            self.remove(pane_id)

    def stats(self) -> dict[str, Any]:
        with self._lock:
            panes = list(self._panes.values())
        return {
            "panes": len(panes),
            "open": sum(len(pane.connections) for pane in panes),
            "served": {pane.settings.pane: pane.served for pane in panes},
            "refused": {pane.settings.pane: pane.refused for pane in panes},
        }

    # -- connections -----------------------------------------------------------------------------

    def _accept(self, pane: _Pane) -> None:
        while not pane.closed:
            try:
                client, _ = pane.listener.accept()
            except OSError as exc:
                if not pane.closed:
                    self.log(f"egress: pane {pane.settings.pane}: accept failed: {exc}")
                    threading.Event().wait(0.1)  # out of descriptors: do not spin
                continue
            pane.connections.add(client)
            try:
                threading.Thread(target=self._serve, args=(pane, client), name="egress-conn", daemon=True).start()
            except RuntimeError as exc:
                self.log(f"egress: pane {pane.settings.pane}: no thread for a connection: {exc}")
                pane.connections.discard(client)
                client.close()

    def _serve(self, pane: _Pane, client: socket.socket) -> None:
        upstream: socket.socket | None = None
        request: ProxyRequest | None = None
        try:
            client.settimeout(HEAD_TIMEOUT)
            request = read_request(client)
            addresses = self._decide(pane.settings, request)
            upstream = _connect(addresses, request.target)
            pane.connections.add(upstream)
            client.settimeout(None)
            pane.served += 1
            if request.is_connect:
                client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                if request.early_bytes:
                    upstream.sendall(request.early_bytes)
                relay(client, upstream)
            else:
                body = request.early_bytes[: request.body_length]
                upstream.sendall(forward_head(request) + body)
                relay(client, upstream, request_body=request.body_length - len(body))
        except Refusal as refusal:
            pane.refused += 1
            self.log(f"egress: pane {pane.settings.pane}: {refusal.status}: {refusal.sentence}")
            if not refusal.audited and request is not None:
                self._record(pane.settings, request, "deny", refusal.rule or "polter:egress", refusal.sentence)
            linger_close(client, refusal_answer(refusal, pane.settings.role))
        except OSError as exc:
            self.log(f"egress: pane {pane.settings.pane}: connection broke: {exc}")
        finally:
            for sock in (client, upstream):
                if sock is not None:
                    pane.connections.discard(sock)
                    sock.close()

    def _decide(self, settings: PaneSettings, request: ProxyRequest) -> list[Address]:
        """The addresses to connect to, or :class:`Refusal` saying which role and rule refused."""
        target, role = request.target, settings.role
        test_host = self.resolver.is_test_host(target)  # the deliberate test hook: no address check
        if target.is_loopback_name and not test_host:
            gateway_host, gateway_port = gateway_address(settings.gateway)
            if target.port == gateway_port:
                raise Refusal(
                    403,
                    f"Polter: the role {role} cannot reach {target.authority} through the proxy: that is the "
                    "gateway, which a pane reaches only through its own socket (rule polter:egress-gateway).",
                    rule="polter:egress-gateway",
                )
            if target.port not in settings.loopback_ports:
                declared = ", ".join(map(str, sorted(settings.loopback_ports))) or "none"
                raise Refusal(
                    403,
                    f"Polter: the role {role} cannot reach {target.authority}: loopback is this machine, which no "
                    f"role opens except the ports the pane's CLI declares for its model API (declared: {declared}) "
                    "(rule polter:egress-loopback).",
                    rule="polter:egress-loopback",
                )
            self._audit_allowed(settings, request, "a loopback port the pane's CLI declares for its model API")
            return self._resolve(settings, target, check=False)
        if target.address is not None and (kind := forbidden_kind(target.address)) is not None:
            raise _forbidden(role, target, target.address, kind)
        if (target.host, target.port) in settings.model_hosts:
            self._audit_allowed(settings, request, "a model API host the pane's CLI declares")
        else:
            self._ask(settings, request)
        return self._resolve(settings, target, check=not test_host)

    def _ask(self, settings: PaneSettings, request: ProxyRequest) -> None:
        host = request.target.host
        try:
            answer = ask_gateway(settings.gateway, settings.token, self._hook_request(settings, request))
        except GatewayRefusal as exc:
            raise Refusal(
                403,
                f"Polter: the connection to {request.target.authority} is refused because the gateway, which "
                f"decides by the role {settings.role}, gave no verdict: {exc} (rule polter:egress-gateway).",
                rule="polter:egress-gateway",
                audited=True,  # nobody to record it with
            ) from None
        if not answer.allowed:
            reason = answer.reason.rstrip(". ") or "no reason given"
            reason = reason[0].lower() + reason[1:] if reason[:4] == "The " else reason  # it follows a colon
            rule = answer.rule or "none named"
            named = "" if f"role {settings.role}" in reason else f" (role {settings.role})"
            raise Refusal(
                403,
                f"Polter: the web host {host} is not allowed{named}: {reason} (rule {rule}).",
                rule=answer.rule,
                audited=True,
            )

    def _resolve(self, settings: PaneSettings, target: Target, *, check: bool) -> list[Address]:
        try:
            addresses = self.resolver.resolve(target)
        except OSError as exc:
            raise Refusal(502, f"Polter: the host {target.host} cannot be resolved ({exc}).") from None
        if not addresses:
            raise Refusal(502, f"Polter: the host {target.host} has no address.")
        if check:
            for address in addresses:
                kind = forbidden_kind(address)
                if kind is not None:
                    raise _forbidden(settings.role, target, address, kind)
        return addresses

    @staticmethod
    def _hook_request(settings: PaneSettings, request: ProxyRequest) -> dict[str, Any]:
        """The HookRequest the gateway judges: ``builtin: web``, by the role's web rules."""
        common = {"cwd": settings.project, "project": settings.project, "arguments": {"url": request.url}}
        return {"kind": "builtin", "builtin": "web", "cli_tool": "network", "urls": [request.url], **common}

    def _audit_allowed(self, settings: PaneSettings, request: ProxyRequest, because: str) -> None:
        self._record(settings, request, "allow", "polter:egress-model-api", f"allowed: {because}")

    def _record(self, settings: PaneSettings, request: ProxyRequest, verdict: str, rule: str, reason: str) -> None:
        """An audit row for a connection the proxy decided by itself, written off the connection's path (a lost
        row is logged)."""
        self._audits.put(
            (
                settings,
                {
                    "kind": "network",
                    "cli_tool": f"network {request.target.authority}",
                    "arguments": {"url": request.url},
                    "verdict": verdict,
                    "rule": rule,
                    "reason": reason,
                },
            )
        )
        if self._auditor is None:
            with self._lock:
                if self._auditor is None:
                    self._auditor = threading.Thread(target=self._write_audits, name="egress-audit", daemon=True)
                    self._auditor.start()

    def _write_audits(self) -> None:
        while True:
            settings, hook_request = self._audits.get()
            try:
                ask_gateway(settings.gateway, settings.token, hook_request, timeout=30.0)
            except GatewayRefusal as exc:
                self.log(f"egress: pane {settings.pane}: the audit row for {hook_request['cli_tool']} is lost: {exc}")


def _forbidden(role: str, target: Target, address: Address, kind: str) -> Refusal:
    via = "" if target.address is not None else f" (it resolves to {address})"
    return Refusal(
        403,
        f"Polter: the role {role} cannot reach {target.authority}{via}: it is a {kind} address, which no role opens "
        f"(rule polter:egress-{kind}).",
        rule=f"polter:egress-{kind}",
    )


def _connect(addresses: list[Address], target: Target) -> socket.socket:
    """A connection to the first of ``addresses`` that answers (exactly the addresses that were checked)."""
    failures: list[str] = []
    for address in addresses:
        family = socket.AF_INET6 if address.version == 6 else socket.AF_INET
        upstream = socket.socket(family, socket.SOCK_STREAM)
        upstream.settimeout(CONNECT_TIMEOUT)
        try:
            upstream.connect((str(address), target.port))
        except OSError as exc:
            upstream.close()
            failures.append(f"{address}: {exc.strerror or exc}")
            continue
        upstream.settimeout(None)
        upstream.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return upstream
    raise Refusal(502, f"Polter: {target.authority} cannot be reached ({'; '.join(failures)}).")


def run_commands(proxy: EgressProxy, commands: IO[str], replies: IO[str]) -> None:
    """Serve the host's JSON-line commands until ``commands`` closes; one JSON reply line per command.

    - ``{"op": "add", "pane", "socket", "token", "gateway", "project", "role", "model_hosts", "loopback_ports"}``
    - ``{"op": "remove", "pane": ID}``; ``{"op": "gateway", "url": URL}``; ``{"op": "stats"}``

    A reply is ``{"op": ..., "pane": ..., "ok": true}`` or ``{..., "ok": false, "error": "..."}``; a bad
    command is answered and logged, never fatal."""
    for line in commands:
        if not line.strip():
            continue
        reply: dict[str, Any] = {"ok": True}
        try:
            message = json.loads(line)
            if not isinstance(message, dict):
                raise EgressError("a command is a JSON object")
            op = reply["op"] = message.get("op")
            if "pane" in message:
                reply["pane"] = message["pane"]
            if op == "add":
                proxy.add(pane_settings(message))
            elif op == "remove":
                proxy.remove(text_field(message, "pane"))
            elif op == "gateway":
                proxy.set_gateway(text_field(message, "url"))
            elif op == "stats":
                reply["stats"] = proxy.stats()
            else:
                raise EgressError(f"unknown op {op!r} (add, remove, gateway, stats)")
        except (ValueError, EgressError) as exc:
            reply.update(ok=False, error=str(exc))
            proxy.log(f"egress: command refused: {exc}: {line.strip()[:200]}")
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


def main(argv: list[str]) -> int:
    """``polter egress [--test-host NAME=ADDRESS ...]``: serve the commands on stdin until it closes."""
    test_hosts: dict[str, str] = {}
    arguments = iter(argv)
    for argument in arguments:
        if argument != "--test-host":
            print(f"polter egress: unknown argument {argument!r}", file=sys.stderr)
            return 2
        name, equals, address = next(arguments, "").partition("=")
        if not equals:
            print("polter egress: --test-host takes NAME=ADDRESS", file=sys.stderr)
            return 2
        test_hosts[name] = address
    threading.stack_size(_THREAD_STACK)  # a relay thread needs little; many open tunnels then cost little
    proxy = EgressProxy(resolver=Resolver(test_hosts))
    print(READY_LINE, flush=True)
    try:
        run_commands(proxy, sys.stdin, sys.stdout)
    except KeyboardInterrupt:
        pass
    finally:
        proxy.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
