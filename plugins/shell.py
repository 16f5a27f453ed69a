"""A plain shell: the user's ``$SHELL`` with ``POLTER_TOKEN`` and ``POLTER_GATEWAY_URL`` set, so
``polter tools`` and ``polter call`` work by hand in the pane (and any MCP client started there can use
the gateway with the pane's token)."""

from __future__ import annotations

import os
from pathlib import Path

from polter.adapters import Adapter, AdapterInfo, Detection, Liveness, PaneToPrepare, PreparedPane

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


adapter = Shell
