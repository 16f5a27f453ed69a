"""Codex CLI: a per-pane ``CODEX_HOME`` whose ``config.toml`` lists the gateway's endpoints as the only MCP
servers, runs ``polter hook codex`` before MCP tools, and switches off denied skills. The user's own
config (model, providers, project trust, ...) is carried over; Codex's own state (login, sessions, history,
its databases, logs, memories, rules) stays in the user's ``~/.codex`` (:meth:`Codex.state_home`).

Verified against Codex CLI 0.171.0 (see ``docs/adapters.md``).
"""

from __future__ import annotations

import json
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import tomli_w

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
    claude_style_state,
    denied_patterns,
    first_text,
    hook_shell_command,
    input_box_ready,
    link_allowed_skills,
    mcp_tool_request,
    patch_paths,
    permission_decision_reply,
    project_dirs,
    scan_skills,
    split_by_decision,
    split_tool_name,
    state_from_screen,
    state_hook_argv,
    veto_hook_argv,
)

API_VERSION = 1
"""The version of the plugin API (polter.adapters) this plugin is written for."""

BUNDLED_SKILLS = ("imagegen", "openai-docs", "skill-creator", "skill-installer")
"""Skills Codex 0.171.0 installs into ``$CODEX_HOME/skills/.system`` (so into every pane's own home too)."""
FAKE_PROVIDER = "polter-test"
FAKE_KEY_ENV = "POLTER_TEST_MODEL_KEY"
REPLACED_KEYS = ("mcp_servers", "hooks")
"""Parts of the user's config.toml Polter replaces; everything else is kept."""
KEPT = (
    "auth.json",
    "history.jsonl",
    "sessions/",
    "archived_sessions/",
    "session_index.jsonl",
    "session_index.jsonl.lock",
    "state_5.sqlite",
    "logs_2.sqlite",
    "goals_1.sqlite",
    "memories_1.sqlite",
    "queue_1.sqlite",
    "thread_history_1.sqlite",
    "thread-writer-locks/",
    "tui-thread-reference-capabilities/",
    "log/",
    "memories/",
    "rules/",
    "prompts/",
    "AGENTS.md",
    "installation_id",
    "version.json",
    "models_cache.json",
    ".sandbox_migration",
)
"""What Codex 0.171.0 keeps in its home besides config.toml: the login, conversations (``codex resume``), prompt
history, its SQLite state (thread list, logs, goals, memories), the exec-policy rules approved "always", the user's
prompts and global AGENTS.md. Linked from the user's ``~/.codex`` into every pane's."""
SHARED = ("rules/", "prompts/", "AGENTS.md", "hooks.json", "skills/*", "*.config.toml", "managed_config.toml")
"""What the human's own Codex runs or trusts from ``~/.codex``: the exec-policy rules approved "always", the user's
prompts, global AGENTS.md, hooks (never linked: Polter runs hooks unreviewed), skills and profiles. No pane writes
them."""
POLTER_KEYS = (*REPLACED_KEYS, "features", "skills")
"""Keys of the pane's config.toml that Polter sets; what Codex adds elsewhere (a folder's trust, in ``projects``)
is added to the user's config.toml when the pane ends."""
SCRATCH = ("skills/.system", "shell_snapshots")
"""Codex installs its bundled skills into ``$CODEX_HOME/skills/.system`` at every start; its shell snapshots
(a cache of the shell's environment, per session) hold the pane's environment, its token included, so they
go with the pane instead of into ``~/.codex``."""
# state_5.sqlite records each conversation's file by its path under CODEX_HOME (threads.rollout_path): after the
# pane, `codex resume` would look for it in the gone runtime dir ("no rollout found"); the host repoints them.
TEST_MODE_UNSET = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_API_KEY")
BUILTIN_KINDS = {
    **dict.fromkeys(("Bash", "shell", "shell_command", "exec_command", "local_shell", "unified_exec"), "shell"),
    **dict.fromkeys(("apply_patch", "Edit", "Write"), "write"),
    **dict.fromkeys(("view_image", "read_file", "list_dir", "grep_files"), "read"),
    **dict.fromkeys(("web_search", "web_fetch"), "web"),
    **dict.fromkeys(("update_plan", "request_user_input", "tool_search", "get_goal", "set_goal"), "meta"),
    "send_input": "agent",
}
"""Codex 0.171.0's built-in tools as its hooks name them, by the role's kinds; its
sub-agent tools (spawn_agent, wait_agent, send_input, close_agent, whatever else names an agent) are agents,
anything else a kind of its own."""
BYPASSING_FEATURES = ("apps", "plugins")
"""Codex features that add MCP servers besides the pane's: switched off in every pane."""


def _toml_key(name: str) -> str:
    return name if re.fullmatch(r"[A-Za-z0-9_-]+", name) else '"' + name.replace('"', '\\"') + '"'


class Codex(Adapter):
    info = AdapterInfo(
        name="codex",
        display_name="Codex CLI",
        model_hosts=("api.openai.com", "chatgpt.com", "auth.openai.com"),
        model_url_variables=("OPENAI_BASE_URL",),
        command="codex",
        description="OpenAI's coding agent CLI.",
        mcp_liveness=Liveness.COLD,
        skills_liveness=Liveness.COLD,
        skill_veto=False,
        tool_veto=True,
        resume=True,
        tested_versions=("0.171.0",),
        limitations=(
            "Codex ignores MCP tools/list_changed: a role change shows as 'takes effect on restart'; until then "
            "the old tool list stays visible, but calls are still decided by the gateway and the veto hook.",
            "Codex has no skill tool: a skill is only hidden (skills.config enabled=false), and the model could "
            "still read a hidden SKILL.md with a shell command.",
            "Shell commands, patches and Codex's other built-in tools are decided by the role through the veto hook; "
            "Codex's sandbox is set from the role too (read-only for a role that writes nothing). write_stdin (typing "
            "into a running terminal session) is not hooked by Codex: only the sandbox applies to it.",
            "Hooks run with --dangerously-bypass-hook-trust, so a trusted project's own .codex hooks also run "
            "unreviewed; a trusted project's .codex/config.toml MCP servers are switched off by name.",
            "Codex's apps (ChatGPT connectors, its built-in codex_apps MCP server) and plugins are switched off in a "
            "pane, since both bring MCP servers past the gateway.",
            "/etc/codex/config.toml and requirements.toml (admin layers) still apply, so an MCP server an admin "
            "defines there may load besides the gateway's.",
        ),
    )

    def codex_home(self, home: Path) -> Path:
        override = os.environ.get("CODEX_HOME")
        return Path(override) if override else home / ".codex"

    def human_config(self, home: Path) -> tuple[Path, ...]:
        """``~/.codex`` (or ``$CODEX_HOME``): config.toml, hooks, rules approved "always", prompts, skills."""
        return (self.codex_home(home),)

    def state_home(self, pane: PaneToPrepare) -> StateHome:
        """The pane's CODEX_HOME holds Polter's config.toml; Codex's own state in it is the user's ~/.codex."""
        return StateHome(
            folder="codex",
            user_folder=self.codex_home(pane.user_home),
            keep=KEPT,
            shared=SHARED,
            scratch=SCRATCH,
            edited_configs=(EditedConfig(file="config.toml", polter_keys=POLTER_KEYS),),
            sqlite_path_records=("state_5.sqlite",),
        )

    # -- skills ------------------------------------------------------------------------------------------

    def skills(self, cwd: Path, home: Path | None = None) -> list[Skill]:
        home = home or Path.home()
        codex_home = self.codex_home(home)
        found = scan_skills(codex_home / "skills" / ".system", "bundled", origin="bundled with Codex")
        known = {skill.name for skill in found}
        found += [
            Skill(name=name, scope="bundled", origin="bundled with Codex")
            for name in BUNDLED_SKILLS
            if name not in known
        ]
        found += scan_skills(codex_home / "skills", "user")
        found += scan_skills(home / ".agents" / "skills", "user")
        for directory in project_dirs(cwd, home):
            found += scan_skills(directory / ".agents" / "skills", "project")
        found += scan_skills(Path("/etc/codex/skills"), "admin")
        return found

    # -- launch ------------------------------------------------------------------------------------------

    def _user_config(self, codex_home: Path) -> tuple[dict[str, Any], list[str]]:
        path = codex_home / "config.toml"
        try:
            config = tomllib.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}, []
        except (OSError, tomllib.TOMLDecodeError) as exc:
            return {}, [f"{path}: not carried over into the pane ({exc})"]
        return {key: value for key, value in config.items() if key not in REPLACED_KEYS}, []

    def _project_servers(self, pane: PaneToPrepare) -> set[str]:
        """MCP servers a (trusted) project's .codex/config.toml would add."""
        names: set[str] = set()
        for directory in project_dirs(pane.cwd, pane.user_home):
            try:
                config = tomllib.loads((directory / ".codex" / "config.toml").read_text(encoding="utf-8"))
            except (OSError, tomllib.TOMLDecodeError):
                continue
            names |= set((config.get("mcp_servers") or {}).keys())
        return names

    def has_session(self, cwd: Path, codex_home: Path, newest: int = 200) -> bool:
        """Whether one of Codex's latest recorded sessions ran in ``cwd`` (what ``codex resume --last`` picks)."""
        files = sorted((codex_home / "sessions").glob("**/rollout-*.jsonl"), reverse=True)[:newest]
        needle = json.dumps(str(cwd))
        for path in files:
            try:
                with path.open(encoding="utf-8") as handle:
                    if needle in handle.readline():
                        return True
            except OSError:
                continue
        return False

    def prepare(self, pane: PaneToPrepare) -> PreparedPane:
        user_home = self.codex_home(pane.user_home)
        skills = self.skills(pane.cwd, pane.user_home)
        _shown, hidden = split_by_decision(skills, pane)
        hidden_names = sorted({skill.name for skill in hidden})
        config, warnings = ({}, []) if pane.test_mode else self._user_config(user_home)
        config["mcp_servers"] = {
            name: {"url": url, "bearer_token_env_var": "POLTER_TOKEN", "default_tools_approval_mode": "approve"}
            for name, url in pane.endpoints.items()
        }
        config["hooks"] = {**self.veto_hooks(pane), **self.state_hooks(pane)}
        config |= self.native_layer(pane)
        # Apps (ChatGPT connectors, served by Codex's built-in codex_apps MCP server) and plugins (which bring
        # their own MCP servers) would reach past the gateway.
        config["features"] = {**(config.get("features") or {}), **{name: False for name in BYPASSING_FEATURES}}
        skills_config = dict(config.get("skills") or {})
        kept = [entry for entry in skills_config.get("config") or [] if entry.get("name") not in hidden_names]
        skills_config["config"] = kept + [{"name": name, "enabled": False} for name in hidden_names]
        config["skills"] = skills_config
        files: dict[str, PaneFile] = dict(
            link_allowed_skills(
                (s for s in skills if s.scope == "user" and s.path and s.path.is_relative_to(user_home)),
                pane,
                "codex/skills",
            )
        )
        env = {**pane.polter_env(), "CODEX_HOME": str(pane.file("codex"))}
        unset: tuple[str, ...] = ()
        if pane.test_mode is not None:
            test = pane.test_mode
            config |= {
                "model": test.model or "gpt-fake",
                "model_provider": FAKE_PROVIDER,
                "model_providers": {
                    FAKE_PROVIDER: {
                        "name": "Polter test model",
                        "base_url": f"{test.model_base_url.rstrip('/')}/v1",
                        "env_key": FAKE_KEY_ENV,
                        "wire_api": "responses",
                    }
                },
                "check_for_update_on_startup": False,
                "analytics": {"enabled": False},
                "feedback": {"enabled": False},
                "projects": {str(path): {"trust_level": "trusted"} for path in {pane.cwd, pane.cwd.resolve()}},
            }
            env[FAKE_KEY_ENV] = test.api_key
            unset = TEST_MODE_UNSET
        files["codex/config.toml"] = PaneFile(text=tomli_w.dumps(config))
        argv = [self.executable(), "--dangerously-bypass-hook-trust"]
        if pane.resume and self.has_session(pane.cwd, user_home):
            argv[1:1] = ["resume", "--last"]
        for name in sorted(self._project_servers(pane)):
            if name in pane.endpoints:
                warnings.append(
                    f"the project's .codex/config.toml also defines MCP server {name!r}; "
                    "its settings merge into the gateway's entry"
                )
            else:
                argv += ["-c", f"mcp_servers.{_toml_key(name)}.enabled=false"]
        launch = self.launch(pane, argv, env=env, unset=unset)
        return PreparedPane(
            launch=launch,
            files=files,
            hidden_skills=tuple(hidden_names),
            warnings=tuple(warnings),
            homes=(self.state_home(pane),),
        )

    # -- hook --------------------------------------------------------------------------------------------

    def veto_hooks(self, pane: PaneToPrepare) -> dict[str, Any]:
        """A PreToolUse command hook on every tool (Codex has no HTTP hooks): the stdlib-only forwarder."""
        hook = {
            "type": "command",
            "command": hook_shell_command(veto_hook_argv(pane, self.name)),
            "timeout": HOOK_TIMEOUT_SECONDS,
        }
        return {"PreToolUse": [{"matcher": ".*", "hooks": [hook]}]}

    def state_hooks(self, pane: PaneToPrepare) -> dict[str, Any]:
        """Command hooks that tell the gateway what the agent does: a turn began (UserPromptSubmit), Codex asks for
        approval (PermissionRequest), the turn ended (Stop). They run the forwarder in its report mode, which
        prints nothing and exits 0 (a Stop hook that blocks would make Codex carry on)."""
        hook = {
            "type": "command",
            "command": hook_shell_command(state_hook_argv(pane, self.name)),
            "timeout": STATE_HOOK_TIMEOUT_SECONDS,
        }
        return {
            "UserPromptSubmit": [{"hooks": [hook]}],
            "PermissionRequest": [{"matcher": ".*", "hooks": [hook]}],
            "Stop": [{"hooks": [hook]}],
        }

    def state_report(self, payload: Mapping[str, Any]) -> StateReport | None:
        return claude_style_state(payload, cli=self.display_name)

    def native_layer(self, pane: PaneToPrepare) -> dict[str, Any]:
        """Codex's own sandbox from the role: read-only for a role that writes nothing (then not even
        ``python -c`` can write), else the workspace, none inside Polter's own sandbox (which holds the same
        promise for the whole pane); web search off when the role denies the web."""
        policy = pane.builtins
        if policy is None:
            return {}
        if pane.confined:  # Polter's sandbox holds the role's writes for the whole pane; Codex's cannot nest in it
            mode = "danger-full-access"
        else:
            mode = "read-only" if policy.writes_nothing() else "workspace-write"
        layer: dict[str, Any] = {"sandbox_mode": mode}
        if ("web", None) in denied_patterns(policy):
            layer["web_search"] = "disabled"
        return layer

    def builtin_hook_request(self, tool_name: str, payload: Mapping[str, Any]) -> HookRequest:
        tool_input = payload.get("tool_input")
        args = tool_input if isinstance(tool_input, Mapping) else {}
        kind = BUILTIN_KINDS.get(tool_name) or ("agent" if "agent" in tool_name else tool_name)
        cwd = first_text(args, "workdir") or first_text(payload, "cwd")
        if kind == "shell":
            return builtin_request(payload, tool_name, kind, command=args.get("command", args.get("cmd")), cwd=cwd)
        if kind == "write":
            patch = first_text(args, "command", "patch", "input") or (tool_input if isinstance(tool_input, str) else "")
            return builtin_request(payload, tool_name, kind, paths=patch_paths(patch), cwd=cwd)
        if kind == "read":
            return builtin_request(
                payload, tool_name, kind, paths=[first_text(args, "path", "file_path", "dir_path")], cwd=cwd
            )
        if kind == "web":
            url = first_text(args, "url")
            return builtin_request(payload, tool_name, kind, urls=[url] if url else [], query=first_text(args, "query"))
        if kind == "agent":
            return builtin_request(payload, tool_name, kind, agent=first_text(args, "agent_type", "role") or tool_name)
        return builtin_request(payload, tool_name, kind, cwd=cwd)

    def hook_request(self, payload: Mapping[str, Any]) -> HookRequest:
        tool_name = str(payload.get("tool_name") or "")
        parts = split_tool_name(tool_name, prefix="mcp__", separator="__")
        if parts is None:
            return self.builtin_hook_request(tool_name, payload)
        return mcp_tool_request(tool_name, *parts, payload)

    def hook_answer(self, answer: HookAnswer) -> HookReply:
        return permission_decision_reply(answer)

    # -- screen ------------------------------------------------------------------------------------------

    def state(self, screen: ScreenView) -> AgentState | None:
        return state_from_screen(screen.display(), waiting=_WAITING, working=_WORKING, idle=_IDLE)

    def ready_for_prompt(self, screen: ScreenView) -> bool:
        """Codex's composer is drawn and it asked for bracketed paste. Before its TUI has the terminal, a message
        goes to the tty's line discipline: echoed there (so it looks drawn), then read by Codex as typed keys with
        the Enter that followed, which it takes as a newline (its paste-burst heuristic gathers keys that come at
        once; an Enter the line discipline made ``\\n`` is Ctrl+J). A bracketed paste is one paste to Codex, and
        the Enter after it submits."""
        return input_box_ready(screen, _COMPOSER)


# Codex's TUI: an approval form, the "Working (… esc to interrupt)" status, or the composer prompt.
_WAITING = re.compile(
    r"Allow the .* to run tool|Would you like to run|enter to submit \| esc to cancel|^\s*› 1\. ", re.MULTILINE
)
_WORKING = re.compile(r"\bWorking \(|esc to interrupt|^• (Calling|Running) ", re.MULTILINE)
_COMPOSER = re.compile(r"^› |\? for shortcuts", re.MULTILINE)
_IDLE = _COMPOSER


adapter = Codex
