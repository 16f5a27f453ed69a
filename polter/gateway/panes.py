"""The pane registry: who may talk to the gateway, under which role, with what recent human input.

A pane is known only by its bearer token. Tokens are 256-bit random strings; the registry keeps
their SHA-256 hashes and forgets the tokens themselves as soon as it has handed them out. Nothing
here takes a pane id from an agent: the MCP and hook layers look a pane up by the token of the
request they serve, and only the admin-token control API addresses panes by id.
"""

from __future__ import annotations

import asyncio
import hashlib
import itertools
import secrets
import time
from collections import deque
from collections.abc import Iterator
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from typing import TYPE_CHECKING

from polter.gateway.models import McpClient, PaneInfo, PaneRegistration, Phase

if TYPE_CHECKING:
    from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser

__all__ = [
    "INPUT_LINES_KEPT",
    "PANE_SCOPE_KEY",
    "PaneConflict",
    "PaneRegistry",
    "RegisteredPane",
    "current_pane",
    "hash_token",
    "new_token",
]

INPUT_LINES_KEPT = 20
"""How many of the human's latest lines a pane remembers for keyword gates."""
CLIENTS_KEPT = 16
"""How many distinct MCP clients a pane remembers having seen (what each declared)."""
PANE_SCOPE_KEY = "polter.pane"
"""Where the ASGI auth layer leaves the authenticated pane in the request scope."""


def new_token() -> str:
    """A fresh 256-bit bearer token, URL-safe (43 characters)."""
    return secrets.token_urlsafe(32)


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


class PaneConflict(ValueError):
    """A registration reuses a pane id or a token that another pane holds."""


@dataclass(eq=False)
class RegisteredPane:
    """One pane's identity and policy state. Mutated only by the gateway's control layer."""

    id: str
    title: str | None
    role: str
    token_hash: str
    created_at: datetime
    phase: Phase | None = None
    skills: list[str] = field(default_factory=list)
    grants: set[tuple[str, str]] = field(default_factory=set)
    """``(server, name)`` pairs the human allowed for this pane; cleared when the role changes."""
    argument_grants: set[tuple[str, str, str]] = field(default_factory=set)
    """``(server, tool, arguments digest)``: calls the human allowed for this pane where a rule on the arguments
    asked (the same tool with other arguments asks again); cleared when the role changes."""
    notice: str | None = None
    """A one-line notice prefixed to the pane's next tool result (its tool surface changed)."""
    last_input_at: datetime | None = None
    awaiting_input: int = 0
    """Calls waiting for a line the human may be typing right now (see ``next_input``)."""
    _input_arrived: asyncio.Event = field(default_factory=asyncio.Event, repr=False)
    inputs: deque[tuple[float, str]] = field(default_factory=lambda: deque(maxlen=INPUT_LINES_KEPT))
    preapproved: dict[tuple[str, str, str], float] = field(default_factory=dict)
    """``(server, tool, args digest)`` → deadline: calls a hook ask already approved once."""
    clients: list[McpClient] = field(default_factory=list)
    """The distinct MCP clients the pane's CLI opened sessions with (what each declared), first seen first."""

    @cached_property
    def principal(self) -> AuthenticatedUser:
        """Who the pane is to the SDK's MCP transport, which binds each session to the principal that opened it:
        the pane's id plus token hash, so a session cannot be reused by another pane. Built at the pane's first MCP
        request, with the SDK's auth models (``sdk_imports.py``)."""
        # lazy: the SDK's auth models, at the pane's first MCP request (sdk_imports.py)
        from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
        from mcp.server.auth.provider import AccessToken

        return AuthenticatedUser(
            AccessToken(token=self.token_hash, client_id=self.id, subject=self.token_hash, scopes=[])
        )

    def recent_input(self, window_seconds: float, now: float | None = None) -> tuple[str, ...]:
        """The human's lines typed within the window, oldest first."""
        now = time.monotonic() if now is None else now
        return tuple(text for stamp, text in self.inputs if now - stamp <= window_seconds)

    def record_input(self, text: str) -> None:
        self.inputs.append((time.monotonic(), text))
        self.last_input_at = datetime.now(UTC)
        self._input_arrived.set()
        self._input_arrived = asyncio.Event()

    def saw_client(self, client: McpClient) -> None:
        if client not in self.clients and len(self.clients) < CLIENTS_KEPT:
            self.clients.append(client)

    async def next_input(self, timeout: float) -> bool:
        """Wait up to ``timeout`` seconds for the human's next line; say whether one came."""
        arrived = self._input_arrived
        self.awaiting_input += 1
        try:
            await asyncio.wait_for(arrived.wait(), timeout)
            return True
        except TimeoutError:
            return False
        finally:
            self.awaiting_input -= 1

    def info(self, *, role_found: bool, sessions: int, pending_asks: int) -> PaneInfo:
        return PaneInfo(
            id=self.id,
            title=self.title,
            role=self.role,
            role_found=role_found,
            phase=self.phase,
            created_at=self.created_at,
            sessions=sessions,
            pending_asks=pending_asks,
            skills=list(self.skills),
            grants=sorted(f"{server}/{name}" for server, name in self.grants),
            last_input_at=self.last_input_at,
            clients=list(self.clients),
        )


current_pane: ContextVar[RegisteredPane | None] = ContextVar("polter_current_pane", default=None)
"""The pane whose token made the request being handled (set by the ASGI auth layer)."""


class PaneRegistry:
    """Panes by id and by token hash."""

    def __init__(self) -> None:
        self._by_id: dict[str, RegisteredPane] = {}
        self._by_hash: dict[str, RegisteredPane] = {}
        self._numbers = itertools.count(1)

    def __len__(self) -> int:
        return len(self._by_id)

    def __iter__(self) -> Iterator[RegisteredPane]:
        return iter(list(self._by_id.values()))

    def __contains__(self, pane: object) -> bool:
        """Whether ``pane`` is registered: this very pane, not one registered again under its id."""
        return isinstance(pane, RegisteredPane) and self._by_id.get(pane.id) is pane

    def register(self, registration: PaneRegistration) -> tuple[RegisteredPane, str]:
        """Add a pane; returns it with its token (the only time the token is known in clear)."""
        token = registration.token or new_token()
        digest = hash_token(token)
        if digest in self._by_hash:
            raise PaneConflict("this token already belongs to a registered pane")
        pane_id = registration.id or self._next_id()
        if pane_id in self._by_id:
            raise PaneConflict(f"pane id {pane_id!r} is already registered")
        pane = RegisteredPane(
            id=pane_id,
            title=registration.title,
            role=registration.role,
            token_hash=digest,
            created_at=datetime.now(UTC),
            skills=list(registration.skills),
        )
        self._by_id[pane.id] = pane
        self._by_hash[digest] = pane
        return pane, token

    def _next_id(self) -> str:
        while True:
            candidate = f"p{next(self._numbers)}"
            if candidate not in self._by_id:
                return candidate

    def by_token(self, token: str) -> RegisteredPane | None:
        """The pane holding this token. The dict lookup is on a SHA-256 digest, so timing reveals
        nothing useful about the token itself."""
        return self._by_hash.get(hash_token(token))

    def get(self, pane_id: str) -> RegisteredPane | None:
        return self._by_id.get(pane_id)

    def remove(self, pane_id: str) -> RegisteredPane | None:
        pane = self._by_id.pop(pane_id, None)
        if pane is not None:
            self._by_hash.pop(pane.token_hash, None)
        return pane
