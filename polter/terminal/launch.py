"""What a pane runs: the launch spec that adapters produce and the PTY process consumes."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

__all__ = ["LaunchSpec"]


class LaunchSpec(BaseModel):
    """A command to run in a pane, with its environment and working directory."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    argv: tuple[str, ...] = Field(min_length=1, description="The program and its arguments.")
    env: dict[str, str] = Field(default_factory=dict, description="Variables set over the inherited environment.")
    unset_env: tuple[str, ...] = Field(
        default=(), description="Inherited variables to remove (e.g. a user's own API endpoints in test mode)."
    )
    cwd: Path | None = Field(default=None, description="Working directory; None means Polter's own.")
    title: str | None = Field(default=None, description="Pane title until the program sets one (OSC 0/2).")
    launchers: int = Field(
        default=0,
        ge=0,
        description="Processes between the one started and the pane's own program (a sandbox's two): the program is "
        "found that many generations down, to tell a job in the foreground from the program itself.",
    )
    refused: str | None = Field(
        default=None,
        description="Why this must not start (a sandbox that cannot be set up): the pane shows it instead of running.",
    )

    @classmethod
    def shell(cls, *, cwd: Path | None = None, env: dict[str, str] | None = None) -> LaunchSpec:
        """The user's login shell (``$SHELL``, falling back to ``/bin/sh``)."""
        shell = os.environ.get("SHELL") or "/bin/sh"
        return cls(argv=(shell,), cwd=cwd, env=env or {}, title=Path(shell).name)

    def environment(self, base: dict[str, str] | None = None) -> dict[str, str]:
        """The full environment for the child: ``base`` (default ``os.environ``) with our changes applied."""
        merged = dict(os.environ if base is None else base)
        for name in self.unset_env:
            merged.pop(name, None)
        merged.update(self.env)
        return merged
