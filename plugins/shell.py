"""A plain shell: the user's ``$SHELL`` with ``POLTER_TOKEN`` and ``POLTER_GATEWAY_URL`` set, so
``polter tools`` and ``polter call`` work by hand in the pane (and any MCP client started there can use
the gateway with the pane's token). A shell has no hooks of its own; a program the pane runs in its place (the
bundled scripted agent) may report its turns to ``/hook/shell/state`` in Claude Code's hook payloads."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from polter.adapters import (
    Adapter,
    AdapterInfo,
    Detection,
    Liveness,
    PaneToPrepare,
    PreparedPane,
    StateReport,
    claude_style_state,
)

API_VERSION = 1
"""The version of the plugin API (polter.adapters) this plugin is written for."""


class Shell(Adapter):
    info = AdapterInfo(
        name="shell",
        display_name="Shell",
        command="sh",
        description="The user's login shell, with the pane's gateway token in its environment.",
        mcp_liveness=Liveness.HOT,
        skills_liveness=Liveness.HOT,
        agent=False,
        limitations=(
            "A shell runs whatever the user types; only what goes through the gateway (polter tools, polter call, "
            "MCP clients pointed at $POLTER_GATEWAY_URL) is decided by the role.",
        ),
    )

    def shell(self) -> str:
        return self._executable or os.environ.get("SHELL") or "/bin/sh"

    def executable(self) -> str:
        return self.shell()

    def detect(self) -> Detection:
        path = Path(self.shell())
        if not path.is_file() or not os.access(path, os.X_OK):
            return Detection(installed=False, path=path, error=f"{path} is not an executable file")
        return Detection(installed=True, path=path, version=path.name)

    def prepare(self, pane: PaneToPrepare) -> PreparedPane:
        launch = self.launch(pane, (self.shell(),), title=Path(self.shell()).name)
        return PreparedPane(launch=launch)

    def state_report(self, payload: Mapping[str, Any]) -> StateReport | None:
        """What the pane's program said of its turn (``UserPromptSubmit``, ``Stop``: Claude Code's payloads), which
        only a program that reports does: the bundled scripted agent. The report speaks for the pane whose token
        came with it, and can neither allow nor refuse anything; a shell that reports nothing is read from its
        screen."""
        return claude_style_state(payload, cli="the pane's program")


adapter = Shell
