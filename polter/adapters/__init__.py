"""The adapter plugin API: everything an adapter plugin imports, and nothing of Polter's own machinery.

A plugin imports from here and nothing else of Polter's, and declares the version of this API it was
written for (``API_VERSION = 1`` at the top of its module); docs/adapters.md lists these names (a test
checks the list) and says what each version changed. What Polter itself does with plugins (finding and
loading them, the panes' runtime dirs, the CLIs' homes) is :mod:`polter.adapters.plugins`.
"""

from polter.adapters._contract import (
    Adapter,
    AdapterInfo,
    AgentState,
    Detection,
    EditedConfig,
    HookReply,
    Liveness,
    PaneFile,
    PaneToPrepare,
    PreparedPane,
    ScreenView,
    Skill,
    SkillScope,
    StateHome,
    TestMode,
    ci_markers,
    deny_message,
    input_box_ready,
    state_from_screen,
)
from polter.adapters._hooks import (
    HOOK_TIMEOUT_SECONDS,
    hook_shell_command,
    mcp_tool_request,
    permission_decision_reply,
    split_tool_name,
)
from polter.adapters._skills import link_allowed_skills, project_dirs, scan_skills, split_by_decision
from polter.adapters._state_hooks import (
    STATE_HOOK_TIMEOUT_SECONDS,
    claude_style_state,
    one_line,
    state_hook_argv,
    state_hook_url,
)
from polter.adapters._veto import (
    builtin_request,
    claude_style_denies,
    denied_patterns,
    excluded_tools,
    first_text,
    missing_sandbox_notices,
    patch_paths,
    unconfined_notices,
    urls_in,
    veto_hook_argv,
    veto_hook_url,
)
from polter.protocol import Decision, HookAnswer, HookRequest, StateReport
from polter.terminal.launch import LaunchSpec

__all__ = [
    "HOOK_TIMEOUT_SECONDS",
    "STATE_HOOK_TIMEOUT_SECONDS",
    "Adapter",
    "AdapterInfo",
    "AgentState",
    "Decision",
    "Detection",
    "EditedConfig",
    "HookAnswer",
    "HookReply",
    "HookRequest",
    "LaunchSpec",
    "Liveness",
    "PaneFile",
    "PaneToPrepare",
    "PreparedPane",
    "ScreenView",
    "Skill",
    "SkillScope",
    "StateHome",
    "StateReport",
    "TestMode",
    "builtin_request",
    "ci_markers",
    "claude_style_denies",
    "claude_style_state",
    "denied_patterns",
    "deny_message",
    "excluded_tools",
    "first_text",
    "hook_shell_command",
    "input_box_ready",
    "link_allowed_skills",
    "mcp_tool_request",
    "missing_sandbox_notices",
    "one_line",
    "patch_paths",
    "permission_decision_reply",
    "project_dirs",
    "scan_skills",
    "split_by_decision",
    "split_tool_name",
    "state_from_screen",
    "state_hook_argv",
    "state_hook_url",
    "unconfined_notices",
    "urls_in",
    "veto_hook_argv",
    "veto_hook_url",
]
