"""opencode (1.x): the gateway's endpoints as remote MCP servers in ``OPENCODE_CONFIG_CONTENT`` (the highest
config layer), every other MCP server the user or the project configures switched off by name, denied
skills set to ``deny`` in ``permission.skill``, the role's denies in opencode's ``permission``, and a small
opencode plugin that posts every tool call to the gateway's ``/hook/opencode/payload`` before it runs (its
``tool.execute.before`` throws to veto, also when the gateway gives no verdict).

Proven against opencode 1.18.33: its TUI in a PTY pane and ``opencode run``, against a fake Anthropic API
through the provider package opencode bundles (it re-lists on MCP ``tools/list_changed``), and
``opencode mcp list``, ``opencode debug agent``; its state read from the screens its TUI drew there
(``tests/adapters/screens/opencode-1.18.33``).
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from polter.adapters import (
    HOOK_TIMEOUT_SECONDS,
    Adapter,
    AdapterInfo,
    AgentState,
    HookRequest,
    Liveness,
    PaneFile,
    PaneToPrepare,
    PreparedPane,
    ScreenView,
    Skill,
    StateReport,
    builtin_request,
    denied_patterns,
    first_text,
    input_box_ready,
    mcp_tool_request,
    one_line,
    patch_paths,
    project_dirs,
    scan_skills,
    split_by_decision,
    state_from_screen,
    state_hook_url,
    unconfined_notices,
    veto_hook_url,
)

API_VERSION = 1
"""The version of the plugin API (polter.adapters) this plugin is written for."""

CONFIG_NAMES = ("opencode.json", "opencode.jsonc", "config.json")
FAKE_PROVIDER = "polter-test"
TEST_MODE_UNSET = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENCODE_CONFIG")
SKILL_TOOL = "skill"

VETO_PLUGIN = """\
// Written by Polter for one pane: asks Polter's gateway before every tool call (MCP tools, skills and
// opencode's own: bash, read, edit, webfetch...), and refuses the call when the gateway denies or cannot answer.
// It also tells the gateway what the agent does (busy, a permission or a question waits, idle): reports that
// decide nothing, sent without waiting for an answer.
const URL = __URL__;
const STATE_URL = __STATE_URL__;
const STATE_EVENTS = new Set([
  "session.status", "session.idle", "session.error", "permission.asked", "permission.replied",
  "question.asked", "question.replied", "question.rejected",
]);
const subagents = new Set();  // sessions of sub-agents (the task tool): their idle is not the pane's

function report(event) {
  const p = event.properties ?? {};
  const question = Array.isArray(p.questions) && p.questions.length ? p.questions[0].question : undefined;
  const payload = {
    type: event.type, status: p.status?.type, permission: p.permission, patterns: p.patterns, question,
    error: p.error?.data?.message ?? p.error?.name,
  };
  fetch(STATE_URL, {
    method: "POST",
    headers: { "Authorization": "Bearer " + (process.env.POLTER_TOKEN ?? ""), "Content-Type": "application/json" },
    body: JSON.stringify(payload),
    signal: AbortSignal.timeout(5000),
  }).catch(() => {});
}
const SERVERS = __SERVERS__;
const TIMEOUT_MS = __TIMEOUT__;

function serverOf(tool) {
  for (const server of SERVERS) {
    if (tool.startsWith(server.key + "_")) return { server: server.name, tool: tool.slice(server.key.length + 1) };
  }
  return null;
}

export const PolterVeto = async ({ directory }) => ({
  "tool.execute.before": async (input, output) => {
    const mcp = serverOf(input.tool);
    const payload = { tool_name: input.tool, tool_input: output.args ?? {}, cwd: directory, ...(mcp ? { mcp } : {}) };
    let answer;
    try {
      answer = await fetch(URL, {
        method: "POST",
        headers: { "Authorization": "Bearer " + (process.env.POLTER_TOKEN ?? ""), "Content-Type": "application/json" },
        body: JSON.stringify(payload),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      throw new Error("Polter: the gateway cannot be reached (" + error + "), so the call is refused");
    }
    if (!answer.ok) {
      // 403 with "Polter: ..." is the gateway's veto; anything else is no verdict at all, refused all the same.
      const text = (await answer.text().catch(() => "")).trim();
      if (answer.status === 403 && text.startsWith("Polter:")) throw new Error(text);
      const detail = text ? ": " + text : "";
      throw new Error("Polter: the gateway answered HTTP " + answer.status + detail + "; the call is refused");
    }
  },
  event: async ({ event }) => {
    const info = event.properties?.info;
    if ((event.type === "session.created" || event.type === "session.updated") && info?.parentID) {
      subagents.add(info.id);
    }
    if (STATE_EVENTS.has(event.type) && !subagents.has(event.properties?.sessionID)) report(event);
  },
});
"""
OPENCODE_KINDS = {
    "bash": "shell",
    **dict.fromkeys(("read", "glob", "grep", "list", "lsp"), "read"),
    **dict.fromkeys(("edit", "write", "apply_patch", "patch", "multiedit"), "write"),
    **dict.fromkeys(("webfetch", "websearch", "codesearch"), "web"),
    "task": "agent",
    **dict.fromkeys(("todowrite", "todoread", "question"), "meta"),
}
"""opencode 1.18.33's built-in tools by the role's kinds."""


def _xdg_folder(variable: str, default: Path) -> Path:
    """An XDG base folder: the variable's value where it is set, else the default."""
    base = os.environ.get(variable)
    return Path(base) if base else default


def _key(name: str) -> str:
    """How opencode spells a server in tool ids (``<server>_<tool>``)."""
    return re.sub(r"[^a-zA-Z0-9_-]", "_", name)


def _read_json(path: Path) -> dict[str, Any]:
    """A JSON or JSONC config (comments and trailing commas stripped, strings kept)."""
    text = path.read_text(encoding="utf-8")
    text = re.sub(r'("(?:\\.|[^"\\])*")|//[^\n]*|/\*.*?\*/', lambda m: m.group(1) or "", text, flags=re.S)
    text = re.sub(r",(\s*[}\]])", r"\1", text)
    value = json.loads(text)
    return value if isinstance(value, dict) else {}


class Opencode(Adapter):
    info = AdapterInfo(
        name="opencode",
        display_name="opencode",
        model_hosts=("opencode.ai", "models.dev", "api.anthropic.com", "api.openai.com"),
        model_url_variables=("ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"),
        command="opencode",
        description="The open source coding agent (sst/opencode), 1.x config format.",
        mcp_liveness=Liveness.HOT,
        skills_liveness=Liveness.COLD,
        skill_veto=True,
        tool_veto=True,
        resume=True,
        tested_versions=("1.18.33",),
        limitations=(
            "Skills the role denies are set to deny when the pane starts; a role change while it runs leaves "
            "that list stale until restart, but the veto plugin refuses a skill the role now denies.",
            "The veto runs as an opencode plugin; `opencode --pure` (no external plugins) drops it, and then only "
            "the gateway refuses denied MCP calls and skill use is unchecked. With a plugin configured, opencode "
            "installs @opencode-ai/plugin into its config dirs (the user's and a project's .opencode) from npm "
            "where it is missing (Polter warns).",
            "MCP servers are switched off by name: a server added to a config file after the pane started, or "
            "one defined by a remote .well-known config, is not known to Polter until the pane restarts.",
            "opencode 2.x changes the config format (mcp.servers); this adapter writes the 1.x format.",
        ),
    )

    def global_config_dir(self, home: Path) -> Path:
        return _xdg_folder("XDG_CONFIG_HOME", home / ".config") / "opencode"

    def human_config(self, home: Path) -> tuple[Path, ...]:
        """``~/.config/opencode``: its config, plugins (JavaScript it runs), agents, commands and their packages."""
        return (self.global_config_dir(home),)

    def state_folders(self, home: Path) -> tuple[Path, ...]:
        """Where opencode keeps its state at every start (its data, with the database, logs and snapshots, and its
        state), writable in a confined pane: opencode has no home variable of its own to move them."""
        return tuple(
            _xdg_folder(variable, home / default) / "opencode"
            for variable, default in (("XDG_DATA_HOME", ".local/share"), ("XDG_STATE_HOME", ".local/state"))
        )

    def made_folders(self, home: Path) -> tuple[Path, ...]:
        """What opencode creates at every start outside its state (``mkdir`` of its cache's ``bin`` and of its config
        folder), failing when it cannot: its cache holds the provider packages and tools the human's opencode runs,
        so a pane may not write there."""
        return (_xdg_folder("XDG_CACHE_HOME", home / ".cache") / "opencode" / "bin", self.global_config_dir(home))

    # -- skills ------------------------------------------------------------------------------------------

    def skills(self, cwd: Path, home: Path | None = None) -> list[Skill]:
        home = home or Path.home()
        found = scan_skills(self.global_config_dir(home) / "skills", "user")
        found += scan_skills(home / ".claude" / "skills", "user")
        found += scan_skills(home / ".agents" / "skills", "user")
        for directory in project_dirs(cwd, home):
            for folder in (".opencode", ".claude", ".agents"):
                found += scan_skills(directory / folder / "skills", "project")
        return found

    # -- launch ------------------------------------------------------------------------------------------

    def _configured_servers(self, pane: PaneToPrepare) -> tuple[set[str], list[str]]:
        """Names of MCP servers the user's and the project's configs define (to switch them off)."""
        paths = [self.global_config_dir(pane.user_home) / name for name in CONFIG_NAMES]
        if os.environ.get("OPENCODE_CONFIG"):
            paths.append(Path(os.environ["OPENCODE_CONFIG"]))
        for directory in project_dirs(pane.cwd, pane.user_home):
            paths += [directory / name for name in CONFIG_NAMES[:2]]
            paths += [directory / ".opencode" / name for name in CONFIG_NAMES[:2]]
        names: set[str] = set()
        warnings = []
        for path in paths:
            if not path.is_file():
                continue
            try:
                names |= set((_read_json(path).get("mcp") or {}).keys())
            except (OSError, ValueError) as exc:
                warnings.append(f"{path}: cannot read its MCP servers to switch them off ({exc})")
        return names, warnings

    def prepare(self, pane: PaneToPrepare) -> PreparedPane:
        _shown, hidden = split_by_decision(self.skills(pane.cwd, pane.user_home), pane)
        hidden_names = sorted({skill.name for skill in hidden})
        others, warnings = self._configured_servers(pane)
        config_dirs = [self.global_config_dir(pane.user_home)]
        config_dirs += [d / ".opencode" for d in project_dirs(pane.cwd, pane.user_home) if (d / ".opencode").is_dir()]
        for folder in config_dirs:
            if not (folder / "node_modules" / "@opencode-ai" / "plugin").is_dir():
                held = pane.confined and folder == config_dirs[0]  # the user's: read-only in the pane's sandbox
                warnings.append(
                    f"opencode installs @opencode-ai/plugin into {folder} because a plugin (Polter's veto) "
                    "is configured: that start needs the npm registry"
                    + (
                        ", and a pane may not write there (your own opencode runs what it holds): run `opencode` "
                        "once outside Polter"
                        if held
                        else ""
                    )
                )
        mcp: dict[str, Any] = {name: {"enabled": False} for name in sorted(others - set(pane.endpoints))}
        mcp |= {
            name: {
                "type": "remote",
                "url": url,
                "headers": {"Authorization": "Bearer {env:POLTER_TOKEN}"},
                "enabled": True,
                "oauth": False,
            }
            for name, url in pane.endpoints.items()
        }
        # The veto plugin is named by its file URL: a plugin *folder* (OPENCODE_CONFIG_DIR) would make
        # opencode run npm install into it at every start.
        config: dict[str, Any] = {
            "mcp": mcp,
            "autoupdate": False,
            "plugin": [pane.file("opencode/polter-veto.js").as_uri()],
        }
        if hidden_names:
            config["permission"] = {"skill": {name: "deny" for name in hidden_names}}
        if native := self.native_layer(pane):
            config["permission"] = {**config.get("permission", {}), **native}
        unset: tuple[str, ...] = ()
        if pane.test_mode is not None:  # a provider on the fake model API, with a provider package opencode bundles
            test = pane.test_mode
            config["provider"] = {
                FAKE_PROVIDER: {
                    "npm": "@ai-sdk/anthropic",
                    "name": "Polter test model",
                    "options": {"baseURL": f"{test.model_base_url}/v1", "apiKey": test.api_key},
                    "models": {test.model or "fake-model": {"name": "Polter test model", "tool_call": True}},
                }
            }
            config["model"] = f"{FAKE_PROVIDER}/{test.model or 'fake-model'}"
            config["share"] = "disabled"
            unset = TEST_MODE_UNSET
        plugin = (
            VETO_PLUGIN.replace("__URL__", json.dumps(veto_hook_url(pane, self.name)))
            .replace("__STATE_URL__", json.dumps(state_hook_url(pane, self.name)))
            .replace("__SERVERS__", json.dumps([{"name": n, "key": _key(n)} for n in pane.endpoints]))
            .replace("__TIMEOUT__", str(HOOK_TIMEOUT_SECONDS * 1000))
        )
        files = {"opencode/polter-veto.js": PaneFile(text=plugin)}
        env = {
            **pane.polter_env(),
            "OPENCODE_CONFIG_CONTENT": json.dumps(config),
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
        }
        if pane.test_mode is not None:  # offline: no models.dev catalogue, default plugins or LSP downloads
            env |= {
                "OPENCODE_DISABLE_MODELS_FETCH": "1",
                "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
                "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            }
        argv = (self.executable(), "--continue") if pane.resume else (self.executable(),)
        launch = self.launch(pane, argv, env=env, unset=unset)
        warnings += unconfined_notices(self.display_name, pane.builtins, "it has no OS sandbox")
        return PreparedPane(
            launch=launch,
            files=files,
            hidden_skills=tuple(hidden_names),
            warnings=tuple(warnings),
            state_folders=self.state_folders(pane.user_home),
            made_folders=self.made_folders(pane.user_home),
        )

    # -- hook --------------------------------------------------------------------------------------------

    def native_layer(self, pane: PaneToPrepare) -> dict[str, Any]:
        """opencode's ``permission`` from the role's denies (its patterns are globs; the last match wins)."""
        permission: dict[str, Any] = {}
        shell: dict[str, str] = {}
        for kind, argument in denied_patterns(pane.builtins):
            if kind == "write" and argument is None:
                permission["edit"] = "deny"
            elif kind == "shell":
                if argument is None:
                    permission["bash"] = "deny"
                elif not argument.startswith("@"):
                    shell[argument[:-2] + "*" if argument.endswith(":*") else argument] = "deny"
            elif kind == "web" and argument is None:
                permission["webfetch"] = permission["websearch"] = "deny"
            elif kind == "agent" and argument is None:
                permission["task"] = "deny"
        if shell and "bash" not in permission:
            permission["bash"] = {"*": "allow", **shell}
        return permission

    def builtin_hook_request(self, tool_name: str, payload: Mapping[str, Any]) -> HookRequest:
        tool_input = payload.get("tool_input")
        args = tool_input if isinstance(tool_input, Mapping) else {}
        kind = OPENCODE_KINDS.get(tool_name, tool_name)
        cwd = first_text(args, "workdir") or first_text(payload, "cwd")
        if kind == "shell":
            return builtin_request(payload, tool_name, kind, command=args.get("command"), cwd=cwd)
        if kind in ("read", "write"):
            patch = first_text(args, "patchText", "patch")
            paths = patch_paths(patch) if patch else [first_text(args, "filePath", "path", "file_path") or cwd or "."]
            return builtin_request(payload, tool_name, kind, paths=paths, cwd=cwd)
        if kind == "web":
            url = first_text(args, "url")
            return builtin_request(payload, tool_name, kind, urls=[url] if url else [], query=first_text(args, "query"))
        if kind == "agent":
            return builtin_request(payload, tool_name, kind, agent=first_text(args, "subagent_type") or tool_name)
        return builtin_request(payload, tool_name, kind, cwd=cwd)

    def hook_request(self, payload: Mapping[str, Any]) -> HookRequest:
        tool_name = str(payload.get("tool_name") or "")
        tool_input = payload.get("tool_input")
        if tool_name == SKILL_TOOL:
            skill = str(tool_input.get("name") or "") if isinstance(tool_input, dict) else ""
            return HookRequest(kind="skill", cli_tool=tool_name, skill=skill, arguments={"name": skill})
        mcp = payload.get("mcp")
        if isinstance(mcp, dict) and mcp.get("server") and mcp.get("tool"):
            return mcp_tool_request(tool_name, str(mcp["server"]), str(mcp["tool"]), payload)
        return self.builtin_hook_request(tool_name, payload)

    # -- screen ------------------------------------------------------------------------------------------

    def state_report(self, payload: Mapping[str, Any]) -> StateReport | None:
        """The veto plugin's events: ``session.status`` busy (working), a permission or question asked (waiting),
        answered (working again), ``session.idle`` (the turn ended), ``session.error`` (it failed)."""
        kind = str(payload.get("type") or "")
        if kind == "session.status":
            status = payload.get("status")
            return (
                StateReport(state=AgentState.WORKING, event=f"{kind}:{status}") if status in ("busy", "retry") else None
            )
        if kind == "permission.asked":
            patterns = payload.get("patterns")
            shown = [payload.get("permission"), *(patterns[:2] if isinstance(patterns, list) else [])]
            what = " ".join(filter(None, (one_line(part, 60) for part in shown)))
            return StateReport(
                state=AgentState.WAITING, event=kind, message=f"{self.display_name} asks permission: {what or 'a tool'}"
            )
        if kind == "question.asked":
            question = one_line(payload.get("question")) or "a question"
            return StateReport(state=AgentState.WAITING, event=kind, message=f"{self.display_name} asks: {question}")
        if kind in ("permission.replied", "question.replied", "question.rejected"):
            return StateReport(state=AgentState.WORKING, event=kind)
        if kind == "session.idle":
            return StateReport(state=AgentState.IDLE, event=kind, turn_ended=True)
        if kind == "session.error":
            error = one_line(payload.get("error"))
            return StateReport(
                state=AgentState.IDLE,
                event=kind,
                message=f"the turn failed: {error}" if error else "the turn failed",
                turn_ended=True,
            )
        return None

    def state(self, screen: ScreenView) -> AgentState | None:
        return state_from_screen(screen.display(), waiting=_WAITING, working=_WORKING, idle=_IDLE)

    def ready_for_prompt(self, screen: ScreenView) -> bool:
        """opencode's prompt box is drawn and it asked for bracketed paste. It asks for that as it takes the terminal
        and draws its prompt box seconds later, on a blank screen until then; a message typed before it took the
        terminal went to the tty's line discipline and was lost."""
        return input_box_ready(screen, _IDLE)


# opencode's TUI (1.18.33): a permission or question dialog, the "esc interrupt" footer, or the prompt box.
_WAITING = re.compile(r"△ Permission required|select\s+enter (?:confirm|submit)")
"""A permission dialog ("Allow once  Allow always  Reject", "⇆ select  enter confirm") or the question tool's
("↑↓ select  enter submit  esc dismiss"); both replace the prompt box."""
_WORKING = re.compile(r"esc (?:again to )?interrupt")
"""The footer under the prompt box while a turn runs (a progress bar, then "esc interrupt")."""
_IDLE = re.compile(r"^\s*╹▀+$", re.MULTILINE)
"""The prompt box's bottom edge, with neither of the above."""


adapter = Opencode
