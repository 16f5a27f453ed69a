"""Every place the gateway relies on the MCP SDK beyond its stable public API, in one module.

mcp 2.3 offers no public way, or only a provisional one, to do four things the gateway needs. Each is one
small function or class here, and ``tests/gateway/test_sdk.py`` checks each against the installed SDK and
fails naming its version, so an upgrade that breaks one breaks here, loudly, rather than as a pane that
quietly stops hearing ``list_changed``. ``pyproject.toml`` pins ``mcp`` to the minor release they were
checked with.

1. :func:`session_connection` reads ``ServerSession._connection`` (private): a 2025-era session's
   connection, whose ``exit_stack`` says when the session ends. The SDK's ``Context.connection`` is the
   public form, but the runner hands handlers and middleware a ``ServerRequestContext`` without it.
2. :func:`use_middleware` replaces ``Server.middleware``, which mcp 2.3 marks provisional ("signature and
   semantics may change in a 2.x minor release"). The types a middleware is written with
   (:data:`CallNext`, :data:`HandlerResult`) come from the same provisional API.
3. :class:`GatewayServer` shadows ``Server.instructions`` with a property, so an endpoint passes on its
   upstream's instructions as they are now (an upstream restarts with new ones); the SDK reads the
   attribute on every ``initialize`` and ``server/discover``.
4. :class:`GatewayServer` overrides ``Server.create_initialization_options``, which the SDK's runner calls
   for each 2025-era session, to advertise ``list_changed`` (the SDK's default options say it is not sent).

How ``polter gateway`` imports the SDK (its packages' ``__init__`` files run only when a name of theirs is
used, which saves the client, ``MCPServer`` and cryptography: 11.6 MB) is in :mod:`polter.gateway.sdk_imports`;
it touches no internal, only the packages' layout. The SDK is imported here from the modules that define
what the gateway uses, never from a package's ``__init__``.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable
from importlib.metadata import version
from typing import Any

from mcp.server.connection import Connection
from mcp.server.context import CallNext, HandlerResult, ServerMiddleware
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.session import ServerSession
from mcp.shared.exceptions import MCPDeprecationWarning

__all__ = [
    "SDK_VERSION",
    "CallNext",
    "GatewayServer",
    "HandlerResult",
    "ServerMiddleware",
    "session_connection",
    "use_middleware",
]

logger = logging.getLogger(__name__)

SDK_VERSION = version("mcp")
"""The installed SDK's version, named by every complaint about it."""

_missing_reported: set[str] = set()


def _report_missing(what: str) -> None:
    """Log once per process that the SDK lacks something the gateway relies on (listing fails open: the
    gateway goes on without the feature; the test suite fails on it)."""
    if what not in _missing_reported:
        _missing_reported.add(what)
        logger.error("mcp %s: %s; see polter/gateway/sdk.py", SDK_VERSION, what)


def session_connection(session: ServerSession) -> Connection | None:
    """The connection behind a 2025-era session (its ``exit_stack`` runs when the session ends), or
    ``None`` when this SDK no longer keeps it where 2.3 did (logged once: the panes then get no
    ``list_changed`` on their GET stream)."""
    connection = getattr(session, "_connection", None)  # no public accessor on ServerSession in mcp 2.3
    if not isinstance(connection, Connection):
        _report_missing("ServerSession._connection is gone or not a Connection: 2025-era sessions get no list_changed")
        return None
    return connection


def use_middleware(server: Server[Any], *middleware: ServerMiddleware[Any]) -> None:
    """Wrap every request to ``server`` in ``middleware`` (outermost first), and in nothing else: this drops
    the SDK's default OpenTelemetry middleware, which costs time on every call and exports nothing here."""
    server.middleware = list(middleware)


class GatewayServer(Server[Any]):
    """A low-level server that tells 2025-era clients it sends ``list_changed``, whose instructions may be a
    callable, asked each time a client connects, and whose capabilities may be trimmed to what its upstream
    serves (``trim``: the SDK derives them from the handlers, and every endpoint has the same handlers)."""

    def __init__(
        self,
        name: str,
        *,
        instructions: str | Callable[[], str | None] | None = None,
        trim: Callable[[Any], Any] | None = None,
        **options: Any,
    ) -> None:
        self._instructions = instructions
        self._trim = trim
        with warnings.catch_warnings():  # mcp 2.3 marks logging/setLevel deprecated; 2025-era clients still use it
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            super().__init__(name, **options)

    def get_capabilities(self, *args: Any, **kwargs: Any) -> Any:
        capabilities = super().get_capabilities(*args, **kwargs)
        return self._trim(capabilities) if self._trim is not None else capabilities

    @property  # an attribute in Server; read on every initialize and discover
    def instructions(self) -> str | None:
        return self._instructions() if callable(self._instructions) else self._instructions

    @instructions.setter
    def instructions(self, value: str | None) -> None:
        pass  # Server.__init__ assigns None (it was not given ours); the constructor's argument counts

    def create_initialization_options(
        self,
        notification_options: NotificationOptions | None = None,
        experimental_capabilities: dict[str, dict[str, Any]] | None = None,
        extensions: dict[str, dict[str, Any]] | None = None,
    ) -> Any:
        return super().create_initialization_options(
            notification_options
            or NotificationOptions(tools_changed=True, prompts_changed=True, resources_changed=True),
            experimental_capabilities,
            extensions,
        )
