"""What Polter itself does with adapter plugins: find and load them (checking the plugin API version each
declares), write and clean up the panes' runtime dirs, link the CLIs' homes, scaffold a new plugin.

The session host, the CLI and the gateway's hook endpoint import this; a plugin imports
:mod:`polter.adapters` only (its tests may use ``load_plugin`` and ``write_pane_files`` from here).
"""

from polter.adapters._discovery import (
    API_VERSION,
    ENTRY_POINT_GROUP,
    AdapterRegistry,
    LoadedAdapter,
    declared_api_version,
    discover,
    find_adapter,
    load_plugin,
    plugin_paths,
    user_plugins_dir,
)
from polter.adapters._homes import Rescue, link_homes, remove_runtime_dir, rescue_homes
from polter.adapters._runtime import RuntimeDir, write_pane_files
from polter.adapters._scaffold import scaffold_adapter
from polter.adapters._veto import HOOK_CLIENT

__all__ = [
    "API_VERSION",
    "ENTRY_POINT_GROUP",
    "HOOK_CLIENT",
    "AdapterRegistry",
    "LoadedAdapter",
    "Rescue",
    "RuntimeDir",
    "declared_api_version",
    "discover",
    "find_adapter",
    "link_homes",
    "load_plugin",
    "plugin_paths",
    "remove_runtime_dir",
    "rescue_homes",
    "scaffold_adapter",
    "user_plugins_dir",
    "write_pane_files",
]
