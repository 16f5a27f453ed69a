"""How a gateway is set up: where it keeps state, which servers it manages, where roles come from."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from polter.gateway.asks import DEFAULT_ASK_TIMEOUT
from polter.gateway.policy import DEFAULT_INPUT_WINDOW
from polter.servers import ServerConfig

__all__ = ["GatewayConfig"]


class GatewayConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    state_dir: Path = Field(description="gateway.json, the audit log and upstream logs go here.")
    servers: dict[str, ServerConfig] = Field(default_factory=dict, description="The managed upstream servers.")
    servers_file: Path | None = Field(default=None, description="Where ``servers`` came from: reloads read it again.")
    watch_servers: bool = Field(default=True, description="Reload the servers file when it changes.")
    roles_dirs: list[Path] | None = Field(
        default=None, description="Role folders, later overriding earlier; None means Polter's usual three."
    )
    host: str = Field(
        default="127.0.0.1", pattern=r"^(127\.0\.0\.1|localhost|::1)$", description="Only loopback is ever bound."
    )
    port: int = Field(default=0, ge=0, le=65535, description="0 picks a free port.")
    pane_socket: Path | None = Field(
        default=None,
        description="A Unix socket for the panes' sandboxes: it serves the panes' endpoints and never the control "
        "API, so no process inside a pane reaches the controls, whatever token it holds.",
    )
    ask_timeout: float = Field(default=DEFAULT_ASK_TIMEOUT, gt=0, description="Seconds an ask waits before denying.")
    input_window: float = Field(
        default=DEFAULT_INPUT_WINDOW, gt=0, description="Seconds a line the human typed counts for keyword gates."
    )
    audit_arguments: bool = Field(default=False, description="Keep raw call arguments in the audit log.")
    watch_roles: bool = Field(default=True, description="Reload roles when their files change.")
