"""Polter's one exception tree. Dependencies' errors are translated at the boundary (``raise ... from exc``).

    PolterError
    ├── ConfigError                bad input in a file or on the command line; names file, line and field
    │   └── RoleError              a role file that cannot be loaded (syntax, unknown key, pattern, extends, cycle)
    ├── GatewayError
    │   ├── GatewayUnavailable     the gateway cannot be reached (hooks deny on it)
    │   ├── AuthError              a missing or wrong token
    │   ├── ControlError           the control API refused a request (unknown pane, bad body...)
    │   └── UpstreamError          a managed MCP server failed or is not running
    │       └── UpstreamTimeout    it did not answer a request in time (the request was cancelled there)
    ├── AdapterError
    │   └── AdapterLoadError       a plugin that fails to import or breaks the contract
    ├── WorktreeError              a pane's git worktree cannot be made, reviewed, merged or removed
    │   ├── NotARepository         the pane's directory is in no git repository
    │   ├── GitError               a git command failed (carries the command and git's message)
    │   └── WorktreeRefused        a merge or removal refused: it would conflict or lose work (carries why)
    ├── TerminalError
    │   └── SpawnError             a pane's command cannot start (not found, bad cwd)
    ├── SessionError               a session cannot be started, found or reached (name taken, no such session)
    │   ├── SessionLost            the connection to a session's host broke (the host ended or was killed)
    │   └── SessionMissing         no session of that name runs where it was looked for (here, or on a host)
    ├── EgressError                the egress proxy cannot start, or refused a pane's socket (carries its words)
    └── BackendError
        └── TShockError            the TShock REST API refused or failed a request

Misuse of an object's lifecycle (writing to a closed pane, say) raises ``RuntimeError`` subclasses
next to the object, as httpx does for streams: those are bugs, not user errors.
"""

from __future__ import annotations

TYPE_CHECKING = False  # as typing's, without importing typing: the egress proxy counts its megabytes
if TYPE_CHECKING:
    from pathlib import Path

__all__ = [
    "AdapterError",
    "AdapterLoadError",
    "AuthError",
    "BackendError",
    "ConfigError",
    "ControlError",
    "EgressError",
    "GatewayError",
    "GatewayUnavailable",
    "GitError",
    "NotARepository",
    "PolterError",
    "RoleError",
    "SessionError",
    "SessionLost",
    "SessionMissing",
    "SpawnError",
    "TShockError",
    "TerminalError",
    "UpstreamError",
    "UpstreamTimeout",
    "WorktreeError",
    "WorktreeRefused",
]


class PolterError(Exception):
    """Base of every error Polter raises on purpose."""

    exit_code: int = 1


class ConfigError(PolterError):
    """Bad user input. Formats as ``file:line: field: message`` with whatever parts are known."""

    exit_code = 2

    def __init__(
        self,
        message: str,
        *,
        path: str | Path | None = None,
        line: int | None = None,
        field: str | None = None,
    ) -> None:
        self.message = message
        self.path = str(path) if path is not None else None
        self.line = line
        self.field = field
        super().__init__(self.location_prefix() + message)

    def location_prefix(self) -> str:
        parts = []
        if self.path is not None:
            parts.append(self.path if self.line is None else f"{self.path}:{self.line}")
        if self.field:
            parts.append(self.field)
        return "".join(f"{part}: " for part in parts)


class RoleError(ConfigError):
    """A role file that cannot be loaded."""


class GatewayError(PolterError):
    """Something went wrong talking to or inside the gateway."""


class GatewayUnavailable(GatewayError):
    """The gateway cannot be reached."""


class AuthError(GatewayError):
    """A request carried no token or a token the gateway does not know."""


class ControlError(GatewayError):
    """The control API refused a request; carries the HTTP status."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        self.status = status
        super().__init__(message)


class UpstreamError(GatewayError):
    """A managed MCP server failed, crashed or is restarting."""


class UpstreamTimeout(UpstreamError):
    """A managed MCP server did not answer a request within its timeout; the request was cancelled there."""


class AdapterError(PolterError):
    """An adapter plugin misbehaved."""


class AdapterLoadError(AdapterError):
    """A plugin failed to import or does not fulfil the adapter contract."""

    def __init__(self, message: str, *, path: str | Path | None = None) -> None:
        self.path = str(path) if path is not None else None
        super().__init__(f"{self.path}: {message}" if self.path else message)


class WorktreeError(PolterError):
    """A pane's git worktree cannot be made, reviewed, merged or removed."""


class NotARepository(WorktreeError):
    """A directory that is in no git repository was asked for a worktree."""


class GitError(WorktreeError):
    """A git command failed; the message names the command and quotes git."""

    def __init__(self, message: str, *, command: tuple[str, ...] = (), stderr: str = "") -> None:
        self.command = command
        self.stderr = stderr
        super().__init__(message)


class WorktreeRefused(WorktreeError):
    """A merge or removal was refused before anything changed; ``reasons`` says why, one per line."""

    def __init__(self, message: str, *, reasons: tuple[str, ...] = ()) -> None:
        self.reasons = reasons
        super().__init__("\n  ".join((message, *reasons)))


class TerminalError(PolterError):
    """A pane's terminal failed."""


class SpawnError(TerminalError):
    """A pane's command could not be started."""


class HumanOnly(PolterError):
    """An action only the human may take (the controls, a session's window) was tried from inside a pane."""


class SessionError(PolterError):
    """A session cannot be started, found or reached; the message says what to do instead."""


class SessionLost(SessionError):
    """The connection to a session's host broke: the host ended, was killed, or the socket went away."""


class SessionMissing(SessionError):
    """No session of that name runs where it was looked for (a window that reconnects stops trying)."""


class EgressError(PolterError):
    """The egress proxy (the panes' only way to the network) cannot start, or cannot listen for a pane."""


class BackendError(PolterError):
    """A bundled backend (MCP server) failed."""


class TShockError(BackendError):
    """The TShock REST API refused or failed a request; carries its status and message."""

    def __init__(self, message: str, *, status: int | None = None) -> None:
        self.status = status
        super().__init__(message if status is None else f"TShock {status}: {message}")
