"""Gemini CLI: a per-pane settings home (``GEMINI_CLI_HOME``) whose ``settings.json`` lists the gateway's
endpoints, allows only their names, runs ``polter hook gemini-cli`` as a BeforeTool veto, and disables
denied skills. The user's settings and allowed skills are carried over; the CLI's own state (chats, prompt
history, logins, trusted folders, memory, commands, extensions) stays in the user's ``~/.gemini``
(:meth:`GeminiCli.state_home`), and ``polter --restore`` resumes the latest chat in the folder.

Verified against Gemini CLI 0.61.0 (see ``docs/adapters.md``).

Qwen Code (:class:`QwenCode`) is a fork of Gemini CLI and its adapter a subclass of Gemini CLI's: a plugin
imports only the plugin API, never another plugin, so the two share this file.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from polter.adapters import (
    HOOK_TIMEOUT_SECONDS,
    STATE_HOOK_TIMEOUT_SECONDS,
    Adapter,
    AdapterInfo,
    AgentState,
    EditedConfig,
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
    ci_markers,
    claude_style_denies,
    claude_style_state,
    deny_message,
    excluded_tools,
    first_text,
    hook_shell_command,
    input_box_ready,
    link_allowed_skills,
    mcp_tool_request,
    one_line,
    permission_decision_reply,
    project_dirs,
    scan_skills,
    split_by_decision,
    split_tool_name,
    state_from_screen,
    state_hook_argv,
    unconfined_notices,
    urls_in,
    veto_hook_argv,
)

API_VERSION = 1
"""The version of the plugin API (polter.adapters) this plugin is written for."""

SKILL_TOOL = "activate_skill"
GEMINI_KINDS = {
    "run_shell_command": "shell",
    **dict.fromkeys(
        ("read_file", "read_many_files", "list_directory", "glob", "grep_search", "search_file_content"), "read"
    ),
    **dict.fromkeys(("write_file", "replace"), "write"),
    **dict.fromkeys(("web_fetch", "google_web_search"), "web"),
    "invoke_agent": "agent",
    **dict.fromkeys(
        ("write_todos", "ask_user", "enter_plan_mode", "exit_plan_mode", "update_topic", "get_internal_docs"), "meta"
    ),
}
"""Gemini CLI 0.61.0's built-in tools by the role's kinds; others are kinds of their own."""
QWEN_KINDS = {
    **dict.fromkeys(("run_shell_command", "monitor"), "shell"),
    **dict.fromkeys(("read_file", "read_many_files", "glob", "grep_search", "list_directory", "lsp"), "read"),
    **dict.fromkeys(("write_file", "edit", "notebook_edit"), "write"),
    **dict.fromkeys(("web_fetch", "web_search"), "web"),
    **dict.fromkeys(("agent", "task"), "agent"),
    **dict.fromkeys(("todo_write", "tool_search", "exit_plan_mode", "ask_user_question"), "meta"),
}
"""Qwen Code 0.24.4's built-in tools by the role's kinds."""
HOOK_NAME = "polter-veto"
STATE_HOOK_NAME = "polter-state"
BUILTIN_SKILLS = ("antigravity-support", "skill-creator")
"""Skills built into Gemini CLI 0.61.0."""
REPLACED_KEYS = ("mcpServers", "mcp")
KEPT = (
    "oauth_creds.json",
    "gemini-credentials.json",
    "google_accounts.json",
    "mcp-oauth-tokens.json",
    "a2a-oauth-tokens.json",
    "installation_id",
    "trustedFolders.json",
    "trusted_hooks.json",
    "projects.json",
    "state.json",
    "tmp/",
    "history/",
    "GEMINI.md",
    "system.md",
    ".env",
    "commands/",
    "agents/",
    "policies/",
    "acknowledgments/",
    "extensions/",
    "keybindings.json",
    "policy_integrity.json",
    "extension_integrity.json",
)
"""What Gemini CLI 0.61.0 keeps in ``~/.gemini`` besides settings.json: logins (OAuth, its encrypted store, MCP
servers' tokens), trusted folders and hooks, the project registry, chats and logs (``tmp/<project>/``), prompt
history, memory (GEMINI.md, which its save_memory tool writes), and the user's commands, agents, policies
(``always allow`` saved there) and extensions. Linked from the user's folder into every pane's."""
SHARED = (
    "trustedFolders.json",
    "trusted_hooks.json",
    "system.md",
    ".env",
    "commands/",
    "agents/",
    "policies/",
    "acknowledgments/",
    "extensions/",
    "keybindings.json",
    "skills/*",
)
"""What the human's own Gemini CLI runs or trusts from ``~/.gemini``: trusted folders and hooks, the system
prompt, its .env, the user's commands, agents, policies (``always allow`` is saved there), acknowledged agents,
extensions (with their MCP servers), key bindings and skills. No pane writes them."""
TEST_MODE_UNSET = (
    "GOOGLE_API_KEY",
    "GOOGLE_GENAI_USE_VERTEXAI",
    "GOOGLE_GENAI_USE_GCA",
    "GOOGLE_CLOUD_PROJECT",
    "GOOGLE_CLOUD_LOCATION",
    "GOOGLE_APPLICATION_CREDENTIALS",
    "GEMINI_MODEL",
)


class GeminiCli(Adapter):
    info = AdapterInfo(
        name="gemini-cli",
        display_name="Gemini CLI",
        model_hosts=("generativelanguage.googleapis.com", "cloudcode-pa.googleapis.com", "oauth2.googleapis.com"),
        model_url_variables=("GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL"),
        command="gemini",
        description="Google's coding agent CLI.",
        mcp_liveness=Liveness.HOT,
        skills_liveness=Liveness.COLD,
        skill_veto=True,
        tool_veto=True,
        resume=True,
        tested_versions=("0.61.0",),
        limitations=(
            "Built-in tools (run_shell_command, write_file, web_fetch, ...) are decided by the role through the veto "
            "hook, and tools the role denies outright are excluded (tools.exclude); a shell rule is a seatbelt, not "
            "a sandbox, and Polter sets no OS sandbox (Gemini CLI's tool sandbox keeps the project writable), so "
            "even under a role that writes nothing an allowed program (python -c) can write. Gemini CLI validates "
            "paths first: a call it refuses itself never reaches the hook.",
            "A trusted workspace's .gemini/settings.json can switch hooks off (hooksConfig), which removes the "
            "veto hook; the gateway still refuses MCP calls the role denies, but skill use is then unchecked "
            "(Polter warns when it finds such a file).",
            "Extensions' context files and commands still load; their MCP servers are blocked by name.",
            "A skill denied by the role is disabled when the pane starts; a role change while it runs shows a "
            "stale skill list until restart, but activating a denied skill is still refused by the veto hook.",
        ),
    )
    home_env = "GEMINI_CLI_HOME"
    """Moves the CLI's home: Gemini CLI reads ``$GEMINI_CLI_HOME/.gemini``."""
    settings_dir = ".gemini"
    """The config folder under the user's home (and in a project)."""
    pane_settings_dir = ".gemini"
    """Where the settings file sits under the moved home."""
    tool_prefix = "mcp_"
    skill_tool = SKILL_TOOL
    builtin_skills: tuple[str, ...] = BUILTIN_SKILLS
    default_test_model = "gemini-2.5-flash"
    input_box: re.Pattern[str] = re.compile(r"^▄+\n [>*](?: |$)(?![\s\S]*^▄+$)", re.MULTILINE)
    """The input box: its top edge, then its prompt (``>``, ``*`` in YOLO mode; shell mode's ``!`` would run a
    message as a command), in the lowest such box (the conversation shows each prompt sent in one too)."""
    kept: tuple[str, ...] = KEPT
    copied: tuple[str, ...] = ("projects.json",)
    """Locked as ``projects.json.lock`` beside the file its link points to (proper-lockfile follows links), which no
    pane may write: the pane locks its own copy."""
    shared: tuple[str, ...] = SHARED
    scratch: tuple[str, ...] = ("projects.json.lock",)
    """A lock of the pane's own projects.json, left behind by a CLI that was killed."""
    polter_keys: tuple[str, ...] = (*REPLACED_KEYS, "skills", "hooks", "hooksConfig")
    """Keys of the pane's settings.json that Polter sets; a setting the CLI adds elsewhere (the sign-in chosen at
    the first start, a theme) is added to the user's settings.json when the pane ends."""

    # -- state -------------------------------------------------------------------------------------------

    def user_folder(self, home: Path) -> Path:
        """The CLI's own folder without Polter: ``~/.gemini`` (under ``$GEMINI_CLI_HOME`` when the user set it)."""
        override = os.environ.get(self.home_env)
        return Path(override) / self.settings_dir if override else home / self.settings_dir

    def human_config(self, home: Path) -> tuple[Path, ...]:
        """The CLI's folder (``~/.gemini``, ``~/.qwen``): settings and hooks, extensions, trusted folders, policies."""
        return (self.user_folder(home),)

    def state_home(self, pane: PaneToPrepare) -> StateHome:
        """The pane's settings home holds Polter's settings.json; the CLI's own state in it is the user's."""
        folder = f"{self.name}/{self.pane_settings_dir}".rstrip("/")
        return StateHome(
            folder=folder,
            user_folder=self.user_folder(pane.user_home),
            keep=self.kept,
            copied=self.copied,
            shared=self.shared,
            scratch=self.scratch,
            edited_configs=(EditedConfig(file="settings.json", polter_keys=self.polter_keys),),
        )

    def has_conversation(self, cwd: Path, home: Path) -> bool:
        """Whether a chat was recorded for ``cwd``: its id in ``projects.json``, a session file under ``tmp/<id>/chats``
        (``--resume latest`` fails when there is none)."""
        folder = self.user_folder(home)
        try:
            projects = json.loads((folder / "projects.json").read_text(encoding="utf-8")).get("projects") or {}
        except (OSError, ValueError, AttributeError):
            return False
        short_id = projects.get(str(cwd)) if isinstance(projects, dict) else None
        return isinstance(short_id, str) and any((folder / "tmp" / short_id / "chats").glob("session-*"))

    def resume_args(self, pane: PaneToPrepare) -> list[str]:
        """The CLI's flag to continue its latest conversation in the pane's folder, if it has one there."""
        return ["--resume", "latest"] if pane.resume and self.has_conversation(pane.cwd, pane.user_home) else []

    # -- skills ------------------------------------------------------------------------------------------

    def skills(self, cwd: Path, home: Path | None = None) -> list[Skill]:
        home = home or Path.home()
        found = [
            Skill(name=name, scope="bundled", origin=f"built into {self.display_name}") for name in self.builtin_skills
        ]
        extensions = self.user_folder(home) / "extensions"
        if extensions.is_dir():
            for extension in sorted(extensions.iterdir()):
                found += scan_skills(extension / "skills", "extension", origin=f"extension {extension.name}")
        found += scan_skills(self.user_folder(home) / "skills", "user")
        found += scan_skills(home / ".agents" / "skills", "user")
        for directory in project_dirs(cwd, home)[:1]:
            found += scan_skills(directory / self.settings_dir / "skills", "project")
            found += scan_skills(directory / ".agents" / "skills", "project")
        return found

    # -- launch ------------------------------------------------------------------------------------------

    def _user_settings(self, home: Path) -> tuple[dict[str, Any], list[str]]:
        path = self.user_folder(home) / "settings.json"
        try:
            settings = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}, []
        except (OSError, ValueError) as exc:
            return {}, [f"{path}: not carried over into the pane ({exc})"]
        if not isinstance(settings, dict):
            return {}, [f"{path}: not a JSON object; not carried over"]
        return {key: value for key, value in settings.items() if key not in REPLACED_KEYS}, []

    def _workspace_warnings(self, pane: PaneToPrepare) -> list[str]:
        warnings = []
        for directory in project_dirs(pane.cwd, pane.user_home)[:1]:
            path = directory / self.settings_dir / "settings.json"
            try:
                settings = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):
                continue
            hooks = settings.get("hooksConfig") if isinstance(settings, dict) else None
            if isinstance(hooks, dict) and (
                hooks.get("enabled") is False or HOOK_NAME in (hooks.get("disabled") or [])
            ):
                warnings.append(f"{path} switches hooks off when the folder is trusted: skill use is then not vetoed")
        return warnings

    def hook_matcher(self, pane: PaneToPrepare) -> str:
        """Every tool: MCP tools, skills and the CLI's own (shell, file, web...)."""
        return ".*"

    def hook_entry(self, pane: PaneToPrepare) -> tuple[str, dict[str, Any]]:
        """The hook event and its entry: a BeforeTool command hook named so it can be recognised."""
        command = {
            "type": "command",
            "command": hook_shell_command(veto_hook_argv(pane, self.name)),
            "name": HOOK_NAME,
            "timeout": HOOK_TIMEOUT_SECONDS * 1000,
        }
        return "BeforeTool", {"matcher": self.hook_matcher(pane), "hooks": [command]}

    state_events: tuple[str, ...] = ("BeforeAgent", "Notification", "AfterAgent")
    """The CLI's hook events that say what its agent does (a turn began, a dialog waits, the turn ended)."""

    def state_hook_entries(self, pane: PaneToPrepare) -> list[tuple[str, dict[str, Any]]]:
        """Command hooks that report the agent's state: the forwarder in its report mode (prints nothing, exits 0)."""
        command = {
            "type": "command",
            "command": hook_shell_command(state_hook_argv(pane, self.name)),
            "name": STATE_HOOK_NAME,
            "timeout": STATE_HOOK_TIMEOUT_SECONDS * 1000,
        }
        return [(event, {"hooks": [command]}) for event in self.state_events]

    def state_report(self, payload: Mapping[str, Any]) -> StateReport | None:
        """BeforeAgent: a turn began; Notification ``ToolPermission``: its confirmation waits for the human;
        AfterAgent: the turn ended (``prompt_response`` is what it answered)."""
        event = str(payload.get("hook_event_name") or "")
        if event == "BeforeAgent":
            return StateReport(state=AgentState.WORKING, event=event)
        if event == "Notification" and payload.get("notification_type") == "ToolPermission":
            message = one_line(payload.get("message")) or f"{self.display_name} asks for a confirmation"
            return StateReport(state=AgentState.WAITING, event="Notification:ToolPermission", message=message)
        if event == "AfterAgent":
            said = one_line(payload.get("prompt_response"))
            return StateReport(state=AgentState.IDLE, event=event, message=said, turn_ended=True)
        return None

    def settings(self, pane: PaneToPrepare, base: dict[str, Any], hidden: Sequence[str]) -> dict[str, Any]:
        settings = dict(base)
        settings["mcpServers"] = {
            name: {"httpUrl": url, "headers": {"Authorization": "Bearer ${POLTER_TOKEN}"}, "trust": True}
            for name, url in pane.endpoints.items()
        }
        settings["mcp"] = {"allowed": list(pane.endpoints)}
        skills = dict(settings.get("skills") or {})
        skills["disabled"] = sorted({*(skills.get("disabled") or []), *hidden})
        settings["skills"] = skills
        hooks = dict(settings.get("hooks") or {})
        for event, entry in (self.hook_entry(pane), *self.state_hook_entries(pane)):
            hooks[event] = [*(hooks.get(event) or []), entry]
        settings["hooks"] = hooks
        hooks_config = dict(settings.get("hooksConfig") or {})
        hooks_config["enabled"] = True
        ours = (HOOK_NAME, STATE_HOOK_NAME)
        hooks_config["disabled"] = [name for name in hooks_config.get("disabled") or [] if name not in ours]
        settings["hooksConfig"] = hooks_config
        return self.native_layer(pane, settings)

    builtin_kinds: Mapping[str, str] = GEMINI_KINDS
    no_sandbox = (
        "its tool sandbox, security.toolSandboxing, keeps the project writable outside plan mode and creates "
        ".gitignore, .geminiignore and .git in it"
    )
    """Why Polter sets no OS sandbox for a role that writes nothing (Gemini CLI 0.61.0): the tool sandbox makes the
    project read-only only in plan mode (which refuses shell commands altogether) or through
    ``~/.gemini/policies/sandbox.toml`` in the user's real home, which the plain CLI reads too."""

    def native_layer(self, pane: PaneToPrepare, settings: dict[str, Any]) -> dict[str, Any]:
        """The tools the role denies outright are excluded (``tools.exclude``): the model is not offered them."""
        by_kind: dict[str, list[str]] = {}
        for tool, kind in self.builtin_kinds.items():
            by_kind.setdefault(kind, []).append(tool)
        excluded = excluded_tools(pane.builtins, by_kind)
        if excluded:
            tools = dict(settings.get("tools") or {})
            tools["exclude"] = sorted({*(tools.get("exclude") or []), *excluded})
            settings["tools"] = tools
        return settings

    def builtin_hook_request(self, tool_name: str, payload: Mapping[str, Any]) -> HookRequest:
        """One of the CLI's own tools; its paths arrive raw (relative to the project, ``..`` kept)."""
        tool_input = payload.get("tool_input")
        args = tool_input if isinstance(tool_input, Mapping) else {}
        kind = self.builtin_kinds.get(tool_name, tool_name)
        cwd = first_text(payload, "cwd")
        if kind == "shell":
            folder = first_text(args, "dir_path", "directory")
            where = str(Path(cwd or ".") / folder) if folder else cwd
            return builtin_request(payload, tool_name, kind, command=args.get("command"), cwd=where)
        if kind in ("read", "write"):
            paths = args.get("paths") if isinstance(args.get("paths"), list) else None
            one = first_text(args, "file_path", "absolute_path", "dir_path", "path", "notebook_path")
            found = [str(p) for p in paths] if paths else [one or cwd or "."]
            return builtin_request(payload, tool_name, kind, paths=found, cwd=cwd)
        if kind == "web":
            url = first_text(args, "url")
            urls = [url] if url else urls_in(first_text(args, "prompt") or "")
            return builtin_request(payload, tool_name, kind, urls=urls, query=first_text(args, "query"))
        if kind == "agent":
            return builtin_request(payload, tool_name, kind, agent=first_text(args, "agent_name", "subagent_type"))
        return builtin_request(payload, tool_name, kind, cwd=cwd)

    def test_settings(self, pane: PaneToPrepare) -> dict[str, Any]:
        return {
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "privacy": {"usageStatisticsEnabled": False},
        }

    def launch_args(self) -> list[str]:
        return []

    def test_args(self, pane: PaneToPrepare) -> list[str]:
        """Trust the folder (no MCP server starts in an untrusted one) and pin the model (no router model)."""
        assert pane.test_mode is not None
        return ["--skip-trust", "-m", pane.test_mode.model or self.default_test_model]

    def test_env(self, pane: PaneToPrepare) -> dict[str, str]:
        assert pane.test_mode is not None
        return {"GEMINI_API_KEY": pane.test_mode.api_key, "GOOGLE_GEMINI_BASE_URL": pane.test_mode.model_base_url}

    def prepare(self, pane: PaneToPrepare) -> PreparedPane:
        home = pane.user_home
        root = self.name  # the pane's settings home inside the runtime dir
        skills = self.skills(pane.cwd, home)
        _shown, hidden = split_by_decision(skills, pane)
        hidden_names = sorted({skill.name for skill in hidden})
        if pane.test_mode is None:
            base, warnings = self._user_settings(home)
        else:
            base, warnings = self.test_settings(pane), []
        warnings += self._workspace_warnings(pane)
        warnings += unconfined_notices(self.display_name, pane.builtins, self.no_sandbox)
        config_dir = f"{root}/{self.pane_settings_dir}".rstrip("/")
        files: dict[str, PaneFile] = {
            f"{config_dir}/settings.json": PaneFile(text=json.dumps(self.settings(pane, base, hidden_names), indent=2))
        }
        # The home moved, so the user's own skills are linked in (allowed ones only).
        user_skills = [s for s in skills if s.scope == "user"]
        files |= dict(link_allowed_skills(user_skills, pane, f"{config_dir}/skills"))
        env = {**pane.polter_env(), self.home_env: str(pane.file(root))}
        argv = [self.executable(), *self.launch_args()]
        for name in pane.endpoints:
            argv += ["--allowed-mcp-server-names", name]
        unset = ci_markers()  # under CI=true it would refuse its interactive UI
        argv += self.resume_args(pane)
        if pane.test_mode is not None:
            env |= self.test_env(pane)
            argv += self.test_args(pane)
            unset += TEST_MODE_UNSET
        launch = self.launch(pane, argv, env=env, unset=unset)
        return PreparedPane(
            launch=launch,
            files=files,
            hidden_skills=tuple(hidden_names),
            warnings=tuple(warnings),
            homes=(self.state_home(pane),),
        )

    # -- hook --------------------------------------------------------------------------------------------

    def hook_request(self, payload: Mapping[str, Any]) -> HookRequest:
        tool_name = str(payload.get("tool_name") or "")
        tool_input = payload.get("tool_input")
        if tool_name == self.skill_tool:
            skill = str(tool_input.get("name") or "") if isinstance(tool_input, dict) else ""
            return HookRequest(kind="skill", cli_tool=tool_name, skill=skill, arguments={"name": skill})
        context = payload.get("mcp_context")
        if isinstance(context, dict) and context.get("server_name") and context.get("tool_name"):
            return mcp_tool_request(tool_name, str(context["server_name"]), str(context["tool_name"]), payload)
        if tool_name.startswith(self.tool_prefix):
            server, sep, tool = tool_name[len(self.tool_prefix) :].partition("_")
            if sep and server and tool:
                return mcp_tool_request(tool_name, server, tool, payload)
        return self.builtin_hook_request(tool_name, payload)

    def hook_answer(self, answer: HookAnswer) -> HookReply:
        if answer.decision == "allow":
            return HookReply()
        return HookReply(stdout=json.dumps({"decision": "deny", "reason": deny_message(answer)}))

    # -- screen ------------------------------------------------------------------------------------------

    def state(self, screen: ScreenView) -> AgentState | None:
        return state_from_screen(screen.display(), waiting=_WAITING, working=_WORKING, idle=_IDLE)

    def ready_for_prompt(self, screen: ScreenView) -> bool:
        """The CLI's input box is drawn and it asked for bracketed paste. Gemini CLI draws its first frame, input
        box included, before it asks for bracketed paste; Qwen Code asks for it while it still initializes, with no
        input box yet. A message typed before the CLI took the terminal went to the tty's line discipline and was
        lost."""
        return input_box_ready(screen, self.input_box)


QWEN_KEPT = (
    "oauth_creds.json",
    "google_accounts.json",
    "mcp-oauth-tokens.json",
    "mcpApprovals.json",
    "installation_id",
    "trustedFolders.json",
    "projects/",
    "sessions/",
    "tmp/",
    "todos/",
    "debug/",
    "plans/",
    "file-history/",
    "memories/",
    "memory.md",
    "QWEN.md",
    "output-language.md",
    "tip_history.json",
    "usage_record.jsonl",
    "usage/",
    "insights/",
    ".env",
    "commands/",
    "agents/",
    "rules/",
    "output-styles/",
    "extensions/",
    "extension-store/",
    "channels/",
    "tasks/",
    "teams/",
    "boards/",
    "workflows/",
    "artifacts/",
    "arena/",
)
"""What Qwen Code 0.24.4 keeps in ``~/.qwen`` besides settings.json: logins (its OAuth file, written by a rename
over the link and so moved back when the pane ends), trusted folders, MCP approvals, chats and memory per project
(``projects/<cwd>/``), running sessions, logs, todos, plans, file history, global memory, usage, its extension
store (written at every start), and the user's commands, agents, rules, output styles and extensions. (``audits/``
refuses a link: it is moved back at the end.)"""
QWEN_SHARED = (
    "mcpApprovals.json",
    "trustedFolders.json",
    "output-language.md",
    ".env",
    "commands/",
    "agents/",
    "rules/",
    "output-styles/",
    "extensions/",
    "channels/",
    "teams/",
    "boards/",
    "workflows/",
    "skills/*",
)
"""What the human's own Qwen Code runs or trusts from ``~/.qwen``: MCP approvals, trusted folders, its .env, the
user's commands, agents, rules, output styles, extensions, channels, teams, boards, workflows and skills. No pane
writes them."""


class QwenCode(GeminiCli):
    """Qwen Code began as a Gemini CLI fork: the same MCP settings (``mcpServers``, ``mcp.allowed``,
    ``--allowed-mcp-server-names``, ``skills.disabled``), but its home is ``$QWEN_HOME`` itself
    (``~/.qwen``) and its hooks, tool names and skill tool follow Claude Code's shapes."""

    info = AdapterInfo(
        name="qwen-code",
        display_name="Qwen Code",
        model_hosts=("dashscope.aliyuncs.com", "dashscope-intl.aliyuncs.com", "chat.qwen.ai"),
        model_url_variables=("OPENAI_BASE_URL",),
        command="qwen",
        description="Alibaba's coding agent CLI (a Gemini CLI fork).",
        mcp_liveness=Liveness.COLD,
        skills_liveness=Liveness.COLD,
        skill_veto=True,
        tool_veto=True,
        resume=True,
        tested_versions=("0.24.4",),
        limitations=(
            "Qwen Code does not re-list tools on MCP tools/list_changed (cold): after a role change the old "
            "tool list stays visible until restart, but every call is decided by the hook and the gateway.",
            "Polter pre-approves the skill tool and starts Qwen Code in the `default` approval mode (Auto Mode "
            "would strip that rule and classify the call first); the veto hook then decides each skill.",
            "Built-in tools are decided by the role through the veto hook, and the role's denies are also Qwen Code's "
            "permissions.deny (which it applies before the hook); `--bare`, `--safe-mode` or a user's "
            "`disableAllHooks` drop the veto hook (the gateway still refuses MCP calls).",
            "Polter sets no OS sandbox (Qwen Code's tools.executionSandbox refuses MCP servers and hooks), so even "
            "under a role that writes nothing an allowed program (python -c) can write.",
        ),
    )
    home_env = "QWEN_HOME"
    settings_dir = ".qwen"
    pane_settings_dir = ""
    tool_prefix = "mcp__"
    skill_tool = "skill"
    builtin_skills = ()
    default_test_model = "qwen-fake"
    input_box = re.compile(r"^─+\n[>*](?: |$)", re.MULTILINE)
    """The input box: its top rule, then its prompt as Gemini CLI's (the conversation shows a prompt sent indented,
    with no rule)."""
    kept = QWEN_KEPT
    copied = ()
    shared = QWEN_SHARED
    scratch = ("oauth_creds.lock",)
    polter_keys = (*GeminiCli.polter_keys, "permissions", "disableAllHooks")

    def user_folder(self, home: Path) -> Path:
        """``~/.qwen``, or ``$QWEN_HOME`` when the user set it."""
        override = os.environ.get(self.home_env)
        return Path(override) if override else home / self.settings_dir

    def has_conversation(self, cwd: Path, home: Path) -> bool:
        """Whether a chat was recorded for ``cwd`` (``projects/<cwd with '-' for every other character>/chats``)."""
        chats = self.user_folder(home) / "projects" / re.sub(r"[^A-Za-z0-9]", "-", str(cwd)) / "chats"
        return any(chats.glob("*.jsonl"))

    def resume_args(self, pane: PaneToPrepare) -> list[str]:
        return ["--continue"] if pane.resume and self.has_conversation(pane.cwd, pane.user_home) else []

    builtin_kinds = QWEN_KINDS
    no_sandbox = "its tools.executionSandbox refuses to start with MCP servers, and turns hooks off"
    """Qwen Code 0.24.4's bwrap sandbox (``tools.executionSandbox``) would drop the gateway and the veto hook."""
    state_events = ("UserPromptSubmit", "Notification", "Stop")

    def state_hook_entries(self, pane: PaneToPrepare) -> list[tuple[str, dict[str, Any]]]:
        command = {
            "type": "command",
            "command": hook_shell_command(state_hook_argv(pane, self.name)),
            "timeout": STATE_HOOK_TIMEOUT_SECONDS,
        }
        return [(event, {"hooks": [command]}) for event in self.state_events]

    def state_report(self, payload: Mapping[str, Any]) -> StateReport | None:
        """Qwen Code copies Claude Code's events: UserPromptSubmit, Notification (``permission_prompt``), Stop."""
        return claude_style_state(payload, cli=self.display_name)

    def hook_entry(self, pane: PaneToPrepare) -> tuple[str, dict[str, Any]]:
        command = {
            "type": "command",
            "command": hook_shell_command(veto_hook_argv(pane, self.name)),
            "timeout": HOOK_TIMEOUT_SECONDS,
        }
        return "PreToolUse", {"matcher": self.hook_matcher(pane), "hooks": [command]}

    def settings(self, pane: PaneToPrepare, base: dict[str, Any], hidden: Sequence[str]) -> dict[str, Any]:
        settings = super().settings(pane, base, hidden)
        for entry in settings["mcpServers"].values():  # offer the gateway's tools up front, not behind tool_search
            entry["alwaysLoadTools"] = True
        settings.pop("hooksConfig", None)
        settings["disableAllHooks"] = False
        # Polter decides skills (through the hook, asking the human in Polter when the role says ask), so
        # Qwen Code need not ask first: its own prompt (or Auto Mode's classifier, which also strips this
        # rule, hence --approval-mode default) would come before the hook and hide it.
        permissions = dict(settings.get("permissions") or {})
        permissions["allow"] = sorted({*(permissions.get("allow") or []), "Skill"})
        settings["permissions"] = permissions
        return settings

    def native_layer(self, pane: PaneToPrepare, settings: dict[str, Any]) -> dict[str, Any]:
        """Qwen Code reads Claude Code's rule syntax: the role's denies go into ``permissions.deny``."""
        denies = claude_style_denies(pane, pane.builtins)
        if denies:
            permissions = dict(settings.get("permissions") or {})
            permissions["deny"] = sorted({*(permissions.get("deny") or []), *denies})
            settings["permissions"] = permissions
        return settings

    def test_settings(self, pane: PaneToPrepare) -> dict[str, Any]:
        return {
            "security": {"auth": {"selectedType": "openai"}},
            "general": {"enableAutoUpdate": False},
            "privacy": {"usageStatisticsEnabled": False},
        }

    def launch_args(self) -> list[str]:
        return ["--approval-mode", "default"]

    def test_args(self, pane: PaneToPrepare) -> list[str]:
        assert pane.test_mode is not None
        return ["-m", pane.test_mode.model or self.default_test_model]

    def test_env(self, pane: PaneToPrepare) -> dict[str, str]:
        assert pane.test_mode is not None
        return {
            "OPENAI_API_KEY": pane.test_mode.api_key,
            "OPENAI_BASE_URL": f"{pane.test_mode.model_base_url}/v1",
            "OPENAI_MODEL": pane.test_mode.model or self.default_test_model,
        }

    def hook_request(self, payload: Mapping[str, Any]) -> HookRequest:
        tool_name = str(payload.get("tool_name") or "")
        tool_input = payload.get("tool_input")
        if tool_name == self.skill_tool:
            args = tool_input if isinstance(tool_input, dict) else {}
            skill = str(args.get("skill") or args.get("name") or "")
            return HookRequest(kind="skill", cli_tool=tool_name, skill=skill, arguments={"skill": skill})
        parts = split_tool_name(tool_name, prefix="mcp__", separator="__")
        if parts is None:
            return self.builtin_hook_request(tool_name, payload)
        return mcp_tool_request(tool_name, *parts, payload)

    def hook_answer(self, answer: HookAnswer) -> HookReply:
        return permission_decision_reply(answer)


# Gemini CLI's main-screen UI: a confirmation box, the "(esc to cancel, Ns)" spinner, or the input box. Qwen Code's
# spinner reads "(0s · esc to cancel)" (or "(3s · ↑ 12 tokens · esc to cancel)"), over its input box.
_WAITING = re.compile(
    r"Allow execution|Waiting for user confirmation|Apply this change\?|Do you want to proceed|Allow once"
)
_WORKING = re.compile(r"\(esc to cancel|· esc to cancel\)")
_IDLE = re.compile(r"Type your message|\? for shortcuts|^▄+\n > .*\n▀+$", re.MULTILINE)


adapters = (GeminiCli, QwenCode)
