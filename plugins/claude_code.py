"""Claude Code: strict MCP config with every gateway endpoint, a PreToolUse veto hook that blocks when it
fails, denied skills switched off, and the classic main-screen renderer.

Verified against Claude Code 2.1.332 (see ``docs/adapters.md``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from polter.adapters import (
    HOOK_TIMEOUT_SECONDS,
    STATE_HOOK_TIMEOUT_SECONDS,
    Adapter,
    AdapterInfo,
    AgentState,
    HookAnswer,
    HookReply,
    HookRequest,
    Liveness,
    PaneFile,
    PaneToPrepare,
    PreparedPane,
    ScreenView,
    Skill,
    StateHome,
    StateReport,
    builtin_request,
    claude_style_denies,
    claude_style_state,
    denied_patterns,
    first_text,
    input_box_ready,
    mcp_tool_request,
    missing_sandbox_notices,
    permission_decision_reply,
    project_dirs,
    scan_skills,
    split_by_decision,
    split_tool_name,
    state_from_screen,
    state_hook_url,
    veto_hook_url,
)

API_VERSION = 1
"""The version of the plugin API (polter.adapters) this plugin is written for."""

BUNDLED_SKILLS = (
    "claude-api",
    "code-review",
    "dataviz",
    "fewer-permission-prompts",
    "init",
    "keybindings-help",
    "loop",
    "plugin-authoring",
    "run",
    "security-review",
    "simplify",
    "update-config",
    "workflow-authoring",
)
"""Skills built into Claude Code 2.1.332 (``plugin-authoring`` comes from a built-in plugin)."""

TEST_MODE_KEPT = (
    "projects/",
    "history.jsonl",
    ".credentials.json",
    "todos/",
    "tasks/",
    "plans/",
    "file-history/",
    "session-env/",
    "shell-snapshots/",
    "paste-cache/",
    "debug/",
    "statsig/",
    "agents/",
    "commands/",
    "skills/",
    "plugins/",
    "CLAUDE.md",
)
"""Claude Code's own state under its config dir (conversations per project, prompt history, the login, todos,
plans, file history) and the user's agents, commands, skills, plugins and CLAUDE.md. Only test mode moves the
config dir (to seed onboarding); there these stay the user's all the same."""

SHARED_WITH_THE_HUMAN = (
    "agents/",
    "commands/",
    "skills/",
    "plugins/",
    "output-styles/",
    "CLAUDE.md",
    "settings.json",
    "settings.local.json",
    "keybindings.json",
)
"""What the human's own Claude Code runs or reads as instructions from its config dir outside Polter (agents,
commands, skills, plugins, output styles, CLAUDE.md, settings with their hooks): never a pane's to write."""
STATE_ENTRIES = tuple(entry for entry in TEST_MODE_KEPT if entry not in SHARED_WITH_THE_HUMAN)
"""What Claude Code writes of its own state under its config dir (conversations, history, the login, todos...)."""

SANDBOX_PROGRAMS = ("bwrap", "socat")
"""What Claude Code's sandbox runs on Linux (bubblewrap confines, socat relays the network to its proxy)."""

SKILL_TOOL = "Skill"
HOOK_MATCHER = "*"
"""The hook runs before every tool: MCP tools, skills and Claude Code's own (Bash, Read, Edit, WebFetch...)."""

BUILTIN_KINDS = {
    **dict.fromkeys(("Bash", "Monitor", "PowerShell"), "shell"),
    **dict.fromkeys(("Read", "Glob", "Grep", "LSP", "NotebookRead"), "read"),
    **dict.fromkeys(("Write", "Edit", "MultiEdit", "NotebookEdit"), "write"),
    **dict.fromkeys(("WebFetch", "WebSearch"), "web"),
    **dict.fromkeys(("Agent", "Task", "Workflow", "SendMessage"), "agent"),
    **dict.fromkeys(
        ("TodoWrite", "AskUserQuestion", "ToolSearch", "EnterPlanMode", "ExitPlanMode", "TaskStop", "TaskOutput"),
        "meta",
    ),
}
"""Claude Code 2.1.332's built-in tools by the role's kinds (docs/adapters.md); any other
tool is a kind of its own (CronCreate, ScheduleWakeup, EnterWorktree)."""

TEST_MODE_UNSET = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_MODEL",
    "CLAUDE_CODE_USE_BEDROCK",
    "CLAUDE_CODE_USE_VERTEX",
    "CLAUDE_CODE_USE_FOUNDRY",
    "ANTHROPIC_BEDROCK_BASE_URL",
    "ANTHROPIC_VERTEX_BASE_URL",
    "CLAUDE_CODE_OAUTH_TOKEN",
)


def server_key(name: str) -> str:
    """How Claude Code spells a server inside tool names (``mcp__<key>__<tool>``)."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)


class ClaudeCode(Adapter):
    info = AdapterInfo(
        name="claude-code",
        display_name="Claude Code",
        model_hosts=("api.anthropic.com",),
        model_url_variables=("ANTHROPIC_BASE_URL",),
        command="claude",
        description="Anthropic's coding agent CLI.",
        mcp_liveness=Liveness.HOT,
        skills_liveness=Liveness.COLD,
        skill_veto=True,
        tool_veto=True,
        resume=True,
        tested_versions=("2.1.332",),
        limitations=(
            "Tools the role adds appear on the next turn. A tool the role takes away is withdrawn at once: Claude "
            "Code 2.1.332 tells the model it is no longer offered and refuses a call to it, but keeps its definition "
            "in the conversation's tool list until a new conversation (/clear) or a restart.",
            "Built-in tools (Bash, Read, Edit, WebFetch, ...) are decided by the role through the veto hook, and the "
            "role's denies are also Claude Code's permissions.deny; a shell rule is a seatbelt, not a sandbox: an "
            "allowed program (python, make) can still do what its arguments say, unless the role writes nothing: "
            "then Claude Code's own sandbox runs every Bash command with the project and the home read-only (on "
            "Linux it needs bwrap and socat, and Claude Code refuses to start without them). A call Claude Code "
            "refuses by its own rules or validation never reaches the hook (no audit row).",
            "The user's and the project's settings, CLAUDE.md files, hooks, plugins' commands and agents still "
            "load (only MCP servers are restricted to the gateway's).",
            "An enterprise managed-mcp.json makes Claude Code refuse --strict-mcp-config; the pane then fails to "
            "start.",
            "A skill denied by the role is switched off when the pane starts; a role change while it runs shows a "
            "stale skill list until restart, but using a denied skill is still refused by the veto hook.",
            "A human typing /skill-name runs the skill without the Skill tool, so the veto hook does not see it "
            "(skills switched off with skillOverrides cannot be typed either).",
        ),
    )

    # -- skills ------------------------------------------------------------------------------------------

    def state_folders(self, home: Path) -> tuple[Path, ...]:
        """Where Claude Code keeps its state when it runs in place (not in test mode): each state entry of its config
        dir and ``~/.claude.json``, writable in a confined pane (its settings, plugins and skills beside them are
        not)."""
        config = self.config_dir(home)
        return tuple(config / entry.rstrip("/") for entry in STATE_ENTRIES)

    def state_file(self, home: Path) -> Path:
        """``~/.claude.json``: Claude Code's state (onboarding, tips, each project's last session) and also the
        user's MCP servers and trusted folders, which the human's own Claude Code runs: a confined pane works on a
        copy of its own."""
        return self.config_dir(home) / ".claude.json" if os.environ.get("CLAUDE_CONFIG_DIR") else home / ".claude.json"

    def human_config(self, home: Path) -> tuple[Path, ...]:
        """``~/.claude`` (settings and their hooks, plugins, skills, agents, commands) and ``~/.claude.json`` (the
        user's MCP servers, trusted folders)."""
        return (self.config_dir(home), self.state_file(home))

    def config_dir(self, home: Path) -> Path:
        override = os.environ.get("CLAUDE_CONFIG_DIR")
        return Path(override) if override else home / ".claude"

    def skills(self, cwd: Path, home: Path | None = None) -> list[Skill]:
        home = home or Path.home()
        config = self.config_dir(home)
        found = [Skill(name=name, scope="bundled", origin="built into Claude Code") for name in BUNDLED_SKILLS]
        found += scan_skills(config / "skills", "user")
        found += self._plugin_skills(config)
        for directory in project_dirs(cwd, home):
            found += scan_skills(directory / ".claude" / "skills", "project")
        return found

    def _plugin_skills(self, config: Path) -> list[Skill]:
        """Skills of installed plugins (``installed_plugins.json``), named ``<plugin>:<skill>``."""
        try:
            registry = json.loads((config / "plugins" / "installed_plugins.json").read_text())
        except (OSError, ValueError):
            return []
        found = []
        plugins = registry.get("plugins") if isinstance(registry, dict) else None
        for key, installs in (plugins or {}).items():
            plugin = str(key).split("@", 1)[0]
            for install in installs if isinstance(installs, list) else [installs]:
                path = install.get("installPath") if isinstance(install, dict) else None
                if path:
                    found += scan_skills(Path(path) / "skills", "plugin", prefix=f"{plugin}:", origin=f"plugin {key}")
        return found

    def state_home(self, pane: PaneToPrepare) -> StateHome:
        """Test mode's config dir holds Polter's seeded .claude.json; Claude Code's own state in it is the user's."""
        return StateHome(
            folder="claude/config",
            user_folder=self.config_dir(pane.user_home),
            keep=TEST_MODE_KEPT,
            shared=SHARED_WITH_THE_HUMAN,
            scratch=("backups",),
        )

    def has_conversation(self, cwd: Path, home: Path) -> bool:
        """Whether Claude Code recorded a conversation in ``cwd`` (``--continue`` refuses to start otherwise)."""
        folder = self.config_dir(home) / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(cwd))
        return any(folder.glob("*.jsonl"))

    # -- launch ------------------------------------------------------------------------------------------

    def prepare(self, pane: PaneToPrepare) -> PreparedPane:
        _shown, hidden = split_by_decision(self.skills(pane.cwd, pane.user_home), pane)
        hidden_names = sorted({skill.name for skill in hidden})
        mcp = {
            "mcpServers": {
                name: {
                    "type": "http",
                    "url": url,
                    "headers": {"Authorization": "Bearer ${POLTER_TOKEN}"},
                    "alwaysLoad": True,
                }
                for name, url in pane.endpoints.items()
            }
        }
        settings: dict[str, Any] = {
            "disableAllHooks": False,
            "disableClaudeAiConnectors": True,
            "hooks": {**self.veto_hooks(pane), **self.state_hooks(pane)},
            # The gateway is the authority for its tools (asks come up in Polter), so Claude need not ask too.
            "permissions": {
                "allow": [f"mcp__{server_key(name)}" for name in pane.endpoints],
                "deny": [f"{SKILL_TOOL}({name})" for name in hidden_names] + claude_style_denies(pane, pane.builtins),
            },
            "skillOverrides": {name: "off" for name in hidden_names},
            "tui": "default",
        }
        sandbox = self.sandbox(pane)
        if sandbox:
            settings["sandbox"] = sandbox
        files = {
            "claude/mcp.json": PaneFile(text=json.dumps(mcp, indent=2)),
            "claude/settings.json": PaneFile(text=json.dumps(settings, indent=2)),
        }
        env = {
            **pane.polter_env(),
            "DISABLE_AUTOUPDATER": "1",
            "ENABLE_CLAUDEAI_MCP_SERVERS": "false",
        }
        unset: tuple[str, ...] = ()
        homes: tuple[StateHome, ...] = ()
        if pane.test_mode is not None:
            test = pane.test_mode
            config_dir = pane.file("claude/config")
            homes = (self.state_home(pane),)
            trusted = {str(path): {"hasTrustDialogAccepted": True} for path in {pane.cwd, pane.cwd.resolve()}}
            files["claude/config/.claude.json"] = PaneFile(
                text=json.dumps({"hasCompletedOnboarding": True, "projects": trusted}, indent=2)
            )
            env |= {
                "CLAUDE_CONFIG_DIR": str(config_dir),
                "ANTHROPIC_BASE_URL": test.model_base_url,
                "ANTHROPIC_AUTH_TOKEN": test.api_key,
                "DISABLE_TELEMETRY": "1",
                "DISABLE_ERROR_REPORTING": "1",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            }
            if test.model:
                env["ANTHROPIC_MODEL"] = test.model
            unset = TEST_MODE_UNSET
        argv: tuple[str, ...] = (
            self.executable(),
            "--mcp-config",
            str(pane.file("claude/mcp.json")),
            "--strict-mcp-config",
            "--settings",
            str(pane.file("claude/settings.json")),
            "--permission-mode",
            "default",
        )
        if pane.resume and self.has_conversation(pane.cwd, pane.user_home):
            argv += ("--continue",)
        launch = self.launch(pane, argv, env=env, unset=unset)
        warnings = self._warnings()
        if sandbox:
            warnings += tuple(
                missing_sandbox_notices(
                    self.display_name,
                    SANDBOX_PROGRAMS,
                    "it refuses to start a pane whose role writes nothing (sandbox.failIfUnavailable)",
                )
            )
        return PreparedPane(
            launch=launch,
            files=files,
            hidden_skills=tuple(hidden_names),
            warnings=warnings,
            homes=homes,
            state_folders=() if homes else self.state_folders(pane.user_home),
            private_files=() if homes else (self.state_file(pane.user_home),),
        )

    def _warnings(self) -> tuple[str, ...]:
        managed = Path("/etc/claude-code/managed-mcp.json")
        if managed.exists():
            return (
                f"{managed} exists: Claude Code refuses --strict-mcp-config while an enterprise MCP config is present",
            )
        return ()

    def sandbox(self, pane: PaneToPrepare) -> dict[str, Any]:
        """Claude Code's own OS sandbox (bubblewrap on Linux, Seatbelt on macOS) for a role that writes nothing, so
        that not even an allowed program (``python3 -c``, ``find -fprint``) writes: every Bash command runs
        confined, the pane's directory and the home are not writable (only Claude Code's own temporary folder
        is), the model cannot ask to run a command outside it (``dangerouslyDisableSandbox`` is ignored), and
        Claude Code refuses to start rather than run unconfined when the sandbox cannot start. Empty (no
        sandbox) for a role that writes, without the role's builtins, or inside Polter's own sandbox (which holds
        the same promise for the whole pane, and in which Claude Code's cannot start)."""
        policy = pane.builtins
        if policy is None or not policy.writes_nothing() or pane.confined:
            return {}
        folders = dict.fromkeys(str(path) for path in (pane.cwd, pane.cwd.resolve(), pane.user_home))
        denied = denied_patterns(policy)
        if ("web", None) in denied:  # only the gateway, which Claude Code's HTTP hooks reach through the sandbox
            network: dict[str, Any] = {"allowedDomains": [urlsplit(pane.gateway_url).netloc], "strictAllowlist": True}
        else:  # the network as before: the sandbox is for writes; the role's web rules are the hook's
            network = {"allowedDomains": ["*"]}
        domains = [
            arg.removeprefix("domain:") for kind, arg in denied if kind == "web" and arg and arg.startswith("domain:")
        ]
        if domains:
            network["deniedDomains"] = domains
        return {
            "enabled": True,
            "failIfUnavailable": True,
            "allowUnsandboxedCommands": False,
            "filesystem": {"denyWrite": [f"/{folder}" for folder in folders]},
            "network": network,
        }

    # -- hook --------------------------------------------------------------------------------------------

    def veto_hooks(self, pane: PaneToPrepare) -> dict[str, Any]:
        """A PreToolUse HTTP hook on every tool: Claude Code posts the payload to the gateway itself (no process),
        with the pane's token from its environment, and blocks the call when the gateway cannot answer."""
        hook = {
            "type": "http",
            "url": veto_hook_url(pane, self.name),
            "headers": {"Authorization": "Bearer $POLTER_TOKEN"},
            "allowedEnvVars": ["POLTER_TOKEN"],
            "timeout": HOOK_TIMEOUT_SECONDS,
            "onFailure": "block",
        }
        return {"PreToolUse": [{"matcher": HOOK_MATCHER, "hooks": [hook]}]}

    def state_hooks(self, pane: PaneToPrepare) -> dict[str, Any]:
        """HTTP hooks that tell the gateway what the agent does (no process either): a turn began
        (UserPromptSubmit), a tool ran (PostToolUse), the approval dialog opens (PermissionRequest), Claude Code
        waits for the human (Notification), the turn ended (Stop, StopFailure). No ``onFailure``: a report that
        does not arrive changes nothing, and the gateway's empty answer decides nothing."""
        hook = {
            "type": "http",
            "url": state_hook_url(pane, self.name),
            "headers": {"Authorization": "Bearer $POLTER_TOKEN"},
            "allowedEnvVars": ["POLTER_TOKEN"],
            "timeout": STATE_HOOK_TIMEOUT_SECONDS,
        }
        with_tools = ("PostToolUse", "PermissionRequest")
        events = ("UserPromptSubmit", *with_tools, "Notification", "Stop", "StopFailure")
        return {
            event: [{"matcher": HOOK_MATCHER, "hooks": [hook]} if event in with_tools else {"hooks": [hook]}]
            for event in events
        }

    def state_report(self, payload: Mapping[str, Any]) -> StateReport | None:
        return claude_style_state(payload, cli=self.display_name)

    def builtin_hook_request(self, tool_name: str, payload: Mapping[str, Any]) -> HookRequest:
        """One of Claude Code's own tools (``file_path`` arrives absolute; Glob and Grep may name no path)."""
        tool_input = payload.get("tool_input")
        args = tool_input if isinstance(tool_input, Mapping) else {}
        kind = BUILTIN_KINDS.get(tool_name, tool_name)
        cwd = first_text(payload, "cwd")
        if kind == "shell":
            return builtin_request(payload, tool_name, kind, command=args.get("command"), cwd=cwd)
        if kind in ("read", "write"):
            path = first_text(args, "file_path", "notebook_path", "path", "filePath")
            return builtin_request(payload, tool_name, kind, paths=[path or cwd or "."], cwd=cwd)
        if kind == "web":
            url = first_text(args, "url")
            return builtin_request(payload, tool_name, kind, urls=[url] if url else [], query=first_text(args, "query"))
        if kind == "agent":
            return builtin_request(
                payload, tool_name, kind, agent=first_text(args, "subagent_type", "name") or tool_name
            )
        return builtin_request(payload, tool_name, kind, cwd=cwd)

    def hook_request(self, payload: Mapping[str, Any]) -> HookRequest:
        tool_name = str(payload.get("tool_name") or "")
        if tool_name == SKILL_TOOL:
            tool_input = payload.get("tool_input") or {}
            skill = str(tool_input.get("skill") or tool_input.get("name") or "") if isinstance(tool_input, dict) else ""
            return HookRequest(kind="skill", cli_tool=tool_name, skill=skill.lstrip("/"), arguments={"skill": skill})
        parts = split_tool_name(tool_name, prefix="mcp__", separator="__")
        if parts is None:
            return self.builtin_hook_request(tool_name, payload)
        server, tool = parts
        announced = payload.get("mcp_server")
        if isinstance(announced, dict) and announced.get("name"):
            server = str(announced["name"])
        return mcp_tool_request(tool_name, server, tool, payload)

    def hook_answer(self, answer: HookAnswer) -> HookReply:
        """A deny vetoes; an allow says so, so that Claude Code does not ask again for a tool the role allows
        (its own deny and ask rules still apply: the role's denies are among them)."""
        if answer.decision == "allow":
            output = {"hookEventName": "PreToolUse", "permissionDecision": "allow"}
            if answer.reason:
                output["permissionDecisionReason"] = f"Polter: {answer.reason}"
            return HookReply(stdout=json.dumps({"hookSpecificOutput": output}))
        return permission_decision_reply(answer)

    # -- screen ------------------------------------------------------------------------------------------

    def state(self, screen: ScreenView) -> AgentState | None:
        return state_from_screen(screen.display(), waiting=_WAITING, working=_WORKING, idle=_IDLE)

    def ready_for_prompt(self, screen: ScreenView) -> bool:
        """Claude Code's prompt box is drawn and it asked for bracketed paste. Before it has the terminal, a message
        goes to the tty's line discipline: echoed there (so it looks drawn), then read by Claude Code as typed keys
        into its box, where the Enter that came with them (a newline by then) does not submit it."""
        return input_box_ready(screen, _PROMPT_BOX)


# Claude Code's classic and fullscreen renderers: an approval dialog, a spinner or "esc to interrupt",
# or the empty prompt box.
_WAITING = re.compile(
    r"Do you want to |Waiting for permission|Esc to cancel|^\s*Tool use\s*$|^\s*(❯\s*)?\d\.\s+(Yes|No)\b", re.MULTILINE
)
_WORKING = re.compile(r"esc to interrupt|^\S\s\w[\w ]*…", re.MULTILINE)
_PROMPT_BOX = re.compile(r"^─+\n❯.*\n─+$", re.MULTILINE)
"""The prompt box between its two rules, its prompt ``❯`` (bash mode's ``!`` would run a message as a command)."""
_IDLE = re.compile(rf"\? for shortcuts|{_PROMPT_BOX.pattern}", re.MULTILINE)


adapter = ClaudeCode
