"""The gateway's front door (pure ASGI): Host/Origin validation, then bearer-token authentication.

- ``Host`` and ``Origin`` are checked on every route with the SDK's own validator and explicit
  settings (loopback names only): a bad Host is 421, a bad Origin 403 (DNS-rebinding protection).
- ``/mcp/*`` and ``/hook/*`` need a pane token; the pane goes into the request scope (and the
  :data:`~polter.gateway.panes.current_pane` ContextVar) and becomes the request's principal, so
  the MCP session manager refuses a session to anyone but the pane that opened it.
- ``/control/*`` needs the admin token. A pane token there is 403, an unknown or missing token 401.
- The panes' socket (``GatewayConfig.pane_socket``, the only way into the gateway from a pane's sandbox) never
  serves ``/control/*``: 403 whatever the token, so a copied admin token is worth nothing inside a pane.
"""

from __future__ import annotations

import hashlib
import hmac
from pathlib import Path
from typing import Any

from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Receive, Scope, Send

from polter.gateway.panes import PANE_SCOPE_KEY, PaneRegistry, current_pane

__all__ = ["ADMIN_SCOPE_KEY", "GatewayAuth", "loopback_security"]

ADMIN_SCOPE_KEY = "polter.admin"


def loopback_security() -> TransportSecuritySettings:
    """Explicit DNS-rebinding protection: only loopback hosts and origins (any port)."""
    return TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=["127.0.0.1:*", "localhost:*", "[::1]:*"],
        allowed_origins=["http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*"],
    )


def _deny(status: int, message: str) -> JSONResponse:
    headers = {"WWW-Authenticate": 'Bearer realm="polter"'} if status == 401 else None
    return JSONResponse({"error": message}, status_code=status, headers=headers)


def _bearer(scope: Scope) -> str | None:
    for key, value in scope["headers"]:
        if key == b"authorization":
            scheme, _, token = value.decode("latin-1").partition(" ")
            return token.strip() or None if scheme.lower() == "bearer" else None
    return None


class GatewayAuth:
    def __init__(
        self,
        app: ASGIApp,
        *,
        panes: PaneRegistry,
        admin_token_hash: str,
        security: TransportSecuritySettings,
        pane_socket: Path | None = None,
    ) -> None:
        self.app = app
        self.panes = panes
        self.admin_token_hash = admin_token_hash
        self.security = TransportSecurityMiddleware(security)
        self.pane_socket = str(pane_socket) if pane_socket is not None else None

    def _from_pane_socket(self, scope: Scope) -> bool:
        """Whether the request came in on the panes' socket (uvicorn names a Unix socket's path, with no port)."""
        server = scope.get("server")
        return self.pane_socket is not None and server is not None and tuple(server) == (self.pane_socket, None)

    def _is_admin(self, token: str) -> bool:
        return hmac.compare_digest(hashlib.sha256(token.encode()).hexdigest(), self.admin_token_hash)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        rejected: Any = await self.security.validate_request(Request(scope), is_post=False)
        if rejected is not None:
            await rejected(scope, receive, send)
            return
        path: str = scope["path"]
        token = _bearer(scope)
        if path.startswith("/control"):
            if self._from_pane_socket(scope):
                response = _deny(
                    403, "the control API cannot be reached from inside a pane; the human uses Polter's window"
                )
            elif token is None:
                response = _deny(401, "the control API needs the admin token (Authorization: Bearer ...)")
            elif self._is_admin(token):
                scope[ADMIN_SCOPE_KEY] = True
                await self.app(scope, receive, send)
                return
            elif self.panes.by_token(token) is not None:
                response = _deny(403, "a pane token cannot use the control API")
            else:
                response = _deny(401, "unknown token")
            await response(scope, receive, send)
            return
        if path.startswith(("/mcp/", "/hook/")):
            pane = self.panes.by_token(token) if token is not None else None
            if pane is None:
                message = (
                    "this endpoint needs a pane token"
                    if token is None or not self._is_admin(token)
                    else "the admin token is not a pane token"
                )
                await _deny(401, message)(scope, receive, send)
                return
            scope[PANE_SCOPE_KEY] = pane
            if path.startswith("/mcp/"):
                scope["user"] = pane.principal
            reset = current_pane.set(pane)
            try:
                await self.app(scope, receive, send)
            finally:
                current_pane.reset(reset)
            return
        await _deny(404, "not found")(scope, receive, send)
