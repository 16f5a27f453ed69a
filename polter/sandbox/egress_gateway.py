"""The egress proxy's questions to the gateway: one ``POST /hook/egress`` per connection, over a plain socket.

The gateway decides with the pane's role (its ``web`` rules), resolves an ask with the human, writes the audit
row, and answers a :class:`~polter.protocol.HookAnswer`. This module speaks just enough HTTP/1.1 for that
(``http.client`` and pydantic would double the proxy's memory) and validates the answer by hand. Anything but
a well-formed answer raises :class:`GatewayRefusal`, which the proxy turns into a refused connection: the
execution layer fails closed.
"""

from __future__ import annotations

import json

from polter.errors import EgressError
from polter.hook_client import gateway_address, post

TYPE_CHECKING = False  # as typing's, without importing typing: the egress proxy counts its megabytes
if TYPE_CHECKING:
    from typing import Any, Final

__all__ = ["ADAPTER", "ASK_TIMEOUT", "GatewayAnswer", "GatewayRefusal", "ask_gateway", "gateway_address"]

ADAPTER: Final = "egress"
"""The name the proxy's requests carry in ``/hook/<adapter>``; the audit rows say ``[egress]``."""
ASK_TIMEOUT: Final = 590.0
"""How long a connection waits for the verdict: the gateway holds an ask open until a human answers."""


class GatewayRefusal(EgressError):
    """The gateway gave no verdict (unreachable, an HTTP error, an unreadable answer); the message says which."""


class GatewayAnswer:
    """The gateway's verdict: allowed or not, in its words, by which rule."""

    __slots__ = ("allowed", "reason", "rule")

    def __init__(self, allowed: bool, reason: str, rule: str | None) -> None:
        self.allowed, self.reason, self.rule = allowed, reason, rule


def ask_gateway(url: str, token: str, request: dict[str, Any], *, timeout: float = ASK_TIMEOUT) -> GatewayAnswer:
    """The gateway's verdict on ``request`` (a HookRequest as JSON); raises :class:`GatewayRefusal` otherwise."""
    try:
        status, payload = post(url, f"/hook/{ADAPTER}", token, json.dumps(request).encode(), timeout=timeout)
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
