"""The adapter-plugin contract and discovery. The core never names a specific CLI.

Plugins import what they need from here and nothing else of Polter's; see ``docs/adapters.md``.
"""

from polter.adapters._contract import (
    FLOOR_SERVER,
    Adapter,
    AdapterInfo,
    AgentState,
    Detection,
    HookReply,
    Liveness,
    Pane,
    PaneFile,
    PreparedPane,
    ScreenView,
    Skill,
    SkillScope,
    TestMode,
    allow_every_skill,
    ci_markers,
    deny_message,
    state_from_screen,
)
from polter.adapters._discovery import (
    ENTRY_POINT_GROUP,
    AdapterRegistry,
    LoadedAdapter,
    adiscover,
    discover,
    find_adapter,
    load_plugin,
    user_plugins_dir,
)
from polter.adapters._hooks import (
    HOOK_TIMEOUT_SECONDS,
    hook_shell_command,
    mcp_tool_request,
    permission_decision_reply,
    split_tool_name,
    tool_input,
)
from polter.adapters._runtime import RuntimeDir, write_pane_files
from polter.adapters._skills import link_allowed_skills, project_dirs, read_skill, scan_skills, split_by_decision
from polter.protocol import Decision, HookAnswer, HookRequest
from polter.terminal.launch import LaunchSpec

__all__ = [
    "ENTRY_POINT_GROUP",
    "FLOOR_SERVER",
    "HOOK_TIMEOUT_SECONDS",
    "Adapter",
    "AdapterInfo",
    "AdapterRegistry",
    "AgentState",
    "Decision",
    "Detection",
    "HookAnswer",
    "HookReply",
    "HookRequest",
    "LaunchSpec",
    "Liveness",
    "LoadedAdapter",
    "Pane",
    "PaneFile",
    "PreparedPane",
    "RuntimeDir",
    "ScreenView",
    "Skill",
    "SkillScope",
    "TestMode",
    "adiscover",
    "allow_every_skill",
    "ci_markers",
    "deny_message",
    "discover",
    "find_adapter",
    "hook_shell_command",
    "link_allowed_skills",
    "load_plugin",
    "mcp_tool_request",
    "permission_decision_reply",
    "project_dirs",
    "read_skill",
    "scan_skills",
    "split_by_decision",
    "split_tool_name",
    "state_from_screen",
    "tool_input",
    "user_plugins_dir",
    "write_pane_files",
]
