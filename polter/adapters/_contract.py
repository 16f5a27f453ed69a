"""The adapter contract: what a plugin tells Polter about one AI CLI, and what Polter tells it about a pane.

An adapter is a subclass of :class:`Adapter` with a class-level :class:`AdapterInfo`. Polter calls it:

- ``detect()`` when listing adapters (is the CLI installed, which version);
- ``skills(cwd)`` to show which skills the CLI would load and from where;
- ``prepare(pane)`` when a pane starts: it returns the launch spec and the files to write into the
  pane's private runtime dir, so that the CLI's only MCP servers are the gateway's endpoints, its veto
  hook runs ``polter hook <name>``, and the skills the role denies are hidden;
- ``hook_request(payload)`` / ``hook_answer(answer)`` inside ``polter hook``, to translate the CLI's
  hook format to and from Polter's neutral :class:`~polter.protocol.HookRequest` /
  :class:`~polter.protocol.HookAnswer`;
- ``state(screen)`` (optional) to read working / waiting-for-input / idle from the pane's screen;
- ``state_report(payload)`` (optional) to read the same from the CLI's own hooks (a turn began, a permission
  dialog opened, the turn ended), which the adapter installs in ``prepare``; Polter prefers it while fresh.

Everything a plugin needs is importable from :mod:`polter.adapters`; plugins import nothing else of
Polter's. This module stays light (pydantic only) because ``polter hook`` imports it on every tool call.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from enum import StrEnum
from pathlib import Path, PurePosixPath
from typing import Any, ClassVar, Final, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from polter.adapters._pane_files import EditedConfig, PaneFile, StateHome
from polter.paths import ENV_GATEWAY_URL, ENV_TOKEN
from polter.protocol import (
    ADAPTER_NAME,
    FLOOR_SERVER,
    AgentState,
    BuiltinsPolicy,
    Decision,
    HookAnswer,
    HookReply,
    HookRequest,
    StateReport,
)
from polter.terminal.launch import LaunchSpec

__all__ = [
    "API_VERSION",
    "Adapter",
    "AdapterInfo",
    "AgentState",
    "Detection",
    "EditedConfig",
    "HookReply",
    "Liveness",
    "PaneToPrepare",
    "PaneFile",
    "PreparedPane",
    "ScreenView",
    "Skill",
    "SkillScope",
    "StateHome",
    "TestMode",
    "allow_every_skill",
    "state_from_screen",
]

API_VERSION: Final = 1
"""The version of the plugin API (:mod:`polter.adapters`) this Polter implements. A plugin declares the
version it was written for (``API_VERSION = 1``, an integer literal at the top of its module) and is loaded
only when the two are equal. It goes up whenever the API changes so that a plugin written for it may break:
a name removed or renamed, a signature or a model's field changed incompatibly; docs/adapters.md lists what
each version changed. Version 1 is the first: ``PaneToPrepare`` was called ``Pane`` before it."""


class Liveness(StrEnum):
    """When a change of the pane's role reaches the running CLI."""

    HOT = "hot"
    """Applied in the running CLI without anyone doing anything (e.g. MCP ``tools/list_changed`` honoured)."""
    WARM = "warm"
    """Applied by the running CLI after an action inside it (a new conversation, a reload command)."""
    COLD = "cold"
    """Takes effect when the pane restarts."""


class AdapterInfo(BaseModel):
    """An adapter's static description: data, not code, so it can be listed and documented."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    name: str = Field(pattern=ADAPTER_NAME, description="Stable id used on the command line and in /hook/<name>.")
    display_name: str = Field(min_length=1, description="Human name shown in the UI, e.g. 'Claude Code'.")
    command: str = Field(min_length=1, description="The executable looked up on PATH.")
    description: str = Field(default="", description="One line on what the CLI is.")
    mcp_liveness: Liveness = Field(description="When a role change of MCP servers/tools reaches the running CLI.")
    skills_liveness: Liveness = Field(description="When a role change of the skills shown reaches the running CLI.")
    skill_veto: bool = Field(
        default=False, description="The CLI's hook sees skill use, so a denied skill is also refused when used."
    )
    tool_veto: bool = Field(
        default=False, description="The CLI runs Polter's pre-tool hook before its tool calls (MCP and its own tools)."
    )
    agent: bool = Field(
        default=True,
        description="An AI agent CLI. False for a plain program (the shell): Polter opens panes with the first "
        "installed agent and falls back to a non-agent adapter only when no agent CLI is installed.",
    )
    resume: bool = Field(
        default=False,
        description="prepare() honours PaneToPrepare.resume: the CLI continues its most recent conversation in the "
        "pane's directory (``polter --restore``, and a restart that applies a new role to a cold CLI).",
    )
    tested_versions: tuple[str, ...] = Field(default=(), description="CLI versions the adapter was proven against.")
    model_hosts: tuple[str, ...] = Field(
        default=(),
        description="Hosts of the CLI's model API (api.anthropic.com): the pane's sandbox lets the CLI reach them "
        "through Polter's egress proxy whatever the role's web rules say.",
    )
    model_url_variables: tuple[str, ...] = Field(
        default=(),
        description="Variables whose URL points the CLI at another model API (ANTHROPIC_BASE_URL): a user's value "
        "is reachable from the sandbox too, a loopback one included.",
    )
    limitations: tuple[str, ...] = Field(
        default=(), description="What the CLI still does that bypasses Polter, one sentence each (shown in docs/UI)."
    )


class Detection(BaseModel):
    """Whether a CLI is installed, and which version."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    installed: bool
    path: Path | None = None
    version: str | None = None
    error: str | None = Field(default=None, description="Why the version could not be read, when it could not.")


SkillScope = Literal["bundled", "user", "project", "plugin", "extension", "admin"]


class Skill(BaseModel):
    """A skill a CLI would load, and where it comes from."""

    model_config = ConfigDict(frozen=True, defer_build=True)

    name: str = Field(description="The name the CLI shows the model (and the role's skill patterns match).")
    scope: SkillScope = Field(description="Which tier of the CLI's skill sources it comes from.")
    path: Path | None = Field(default=None, description="Its SKILL.md, when it lives in a file.")
    description: str = ""
    origin: str = Field(default="", description="Where it comes from in words, e.g. a folder or 'built into the CLI'.")


class TestMode(BaseModel):
    """Run the CLI offline against a fake model API: no onboarding, login or trust prompt."""

    __test__ = False  # not a pytest test class
    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    model_base_url: str = Field(description="Base URL of the fake model API, e.g. http://127.0.0.1:PORT.")
    model: str | None = Field(default=None, description="Model name to ask for; the adapter's default otherwise.")
    api_key: str = Field(default="polter-test-key", description="The fake credential the CLI sends.")


def allow_every_skill(_name: str) -> Decision:
    """The skill policy of a pane without a role: show everything."""
    return "allow"


class PaneToPrepare(BaseModel):
    """What an adapter knows about the pane it prepares."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True, defer_build=True)

    pane_id: str = Field(min_length=1)
    gateway_url: str = Field(description="http://127.0.0.1:PORT, without a trailing slash.")
    servers: tuple[str, ...] = Field(default=(), description="Managed servers; each is served at /mcp/<server>.")
    runtime_dir: Path = Field(description="The pane's private 0700 dir; written before start, removed at the end.")
    cwd: Path
    token: SecretStr | None = Field(default=None, description="Set as $POLTER_TOKEN in the pane; never in a file.")
    skill_decision: Callable[[str], Decision] = Field(
        default=allow_every_skill, description="The pane's role's decision for using a skill, by name."
    )
    test_mode: TestMode | None = None
    builtins: BuiltinsPolicy | None = Field(
        default=None,
        description="The role's [builtins], for adapters that also set the CLI's own permission rules or sandbox "
        "from it; None: no such first layer (the veto hook still decides every call).",
    )
    hook_command: tuple[str, ...] = Field(
        default=(),
        description="argv of the command hook (the adapter's name, the pane's directory and runtime dir are "
        "appended); default: the stdlib hook client on this Python. CLIs that post to the gateway themselves "
        "(Claude Code's HTTP hook, opencode's plugin) do not run it.",
    )
    home: Path | None = Field(default=None, description="The user's home; default Path.home().")
    confined: bool = Field(
        default=False,
        description="Polter's kernel sandbox wraps the pane (its files, processes and network follow the role): a "
        "CLI's own OS sandbox cannot start inside it (it needs user namespaces, which the pane may not create), so "
        "an adapter leaves the CLI's own sandbox off; the CLI's permission rules stay.",
    )
    resume: bool = Field(
        default=False,
        description="Continue the CLI's most recent conversation in ``cwd`` instead of starting a new one "
        "(a restored session, or a restart that applies a new role); adapters with ``info.resume`` add their "
        "CLI's flag for it.",
    )

    @field_validator("gateway_url")
    @classmethod
    def _no_trailing_slash(cls, value: str) -> str:
        return value.rstrip("/")

    @property
    def endpoints(self) -> dict[str, str]:
        """Every gateway endpoint this pane's CLI must know: the managed servers plus Polter's floor server."""
        names = dict.fromkeys((*self.servers, FLOOR_SERVER))
        return {name: f"{self.gateway_url}/mcp/{name}" for name in names}

    @property
    def user_home(self) -> Path:
        return self.home or Path.home()

    def polter_env(self) -> dict[str, str]:
        """The variables every pane gets: the gateway's URL and the pane's token."""
        env = {ENV_GATEWAY_URL: self.gateway_url}
        if self.token is not None:
            env[ENV_TOKEN] = self.token.get_secret_value()
        return env

    def hook_argv(self, adapter_name: str) -> tuple[str, ...]:
        """The command a CLI runs as its pre-tool hook for this pane."""
        base = self.hook_command or (sys.executable, "-m", "polter.cli.hook")
        return (*base, adapter_name)

    def decide_skill(self, name: str) -> Decision:
        """The role's decision for a skill; listing fails open, so an error shows the skill (the hook still asks)."""
        try:
            return self.skill_decision(name)
        except Exception:  # noqa: BLE001 - a broken policy must not hide things; execution is checked by the hook
            return "allow"

    def file(self, relative: str) -> Path:
        """Absolute path of a file in the runtime dir (for command lines and config files)."""
        return self.runtime_dir / PurePosixPath(relative)


class PreparedPane(BaseModel):
    """What ``prepare`` returns: the command to run and the files it needs."""

    model_config = ConfigDict(frozen=True, extra="forbid", defer_build=True)

    launch: LaunchSpec
    files: dict[str, PaneFile] = Field(
        default_factory=dict, description="Relative POSIX paths inside the runtime dir → content."
    )
    hidden_skills: tuple[str, ...] = Field(
        default=(), description="Skills hidden from the CLI because the role denies them."
    )
    warnings: tuple[str, ...] = Field(
        default=(), description="Things found while preparing that weaken the pane's isolation (shown to the user)."
    )
    homes: tuple[StateHome, ...] = Field(
        default=(),
        description="The CLI's folders moved into the runtime dir, with the state in them that the host keeps in "
        "the user's home (see StateHome). Empty for a CLI that keeps its state where it always does.",
    )
    private_files: tuple[Path, ...] = Field(
        default=(),
        description="The user's files that the CLI rewrites as it runs but that also hold settings the human's own "
        "CLI runs (Claude Code's ~/.claude.json: its MCP servers and trusted folders): the pane works on a copy of "
        "its own, and what it changes there is never carried back.",
    )
    state_folders: tuple[Path, ...] = Field(
        default=(),
        description="The user's folders a CLI that keeps its state where it always does (not in ``homes``) writes "
        "at every start: its data and state folders (opencode's ~/.local/share/opencode). The pane's sandbox "
        "leaves them writable whatever the role, as it does ``homes``; never a folder of config or code the CLI "
        "runs outside the pane (opencode's plugins in ~/.config/opencode).",
    )

    made_folders: tuple[Path, ...] = Field(
        default=(),
        description="The user's folders a CLI creates at every start and cannot start without, but that hold what "
        "the human's own CLI runs or reads (opencode's ~/.cache/opencode, where its provider packages live): made "
        "to exist, empty, before a confined pane starts, and read-only in its sandbox like the rest of the home "
        "(a sandbox cannot create a folder in a read-only home, and the CLI fails at its start).",
    )

    @field_validator("state_folders", "private_files", "made_folders")
    @classmethod
    def _absolute(cls, paths: tuple[Path, ...]) -> tuple[Path, ...]:
        for path in paths:
            if not path.is_absolute():
                raise ValueError(f"{str(path)!r} must be an absolute path")
        return paths

    @field_validator("files")
    @classmethod
    def _relative_inside(cls, files: dict[str, PaneFile]) -> dict[str, PaneFile]:
        for name in files:
            path = PurePosixPath(name)
            if path.is_absolute() or ".." in path.parts or not path.parts:
                raise ValueError(f"file {name!r} must be a relative path inside the runtime dir")
        return files

    def model_post_init(self, __context: Any) -> None:
        """Polter's files must not lie under a kept entry: they would be written into the user's home."""
        for home in self.homes:
            root = PurePosixPath(home.folder)
            for entry in home.kept():
                kept = root / entry
                for name in self.files:
                    path = PurePosixPath(name)
                    if path == kept or kept in path.parents:
                        raise ValueError(
                            f"file {name!r} lies in {entry!r}, which {home.folder!r} keeps in the user's home"
                        )


class ScreenView(Protocol):
    """The part of a pane's screen an adapter may read: its rows as text, and whether the program asked for
    bracketed paste (a TUI does once it has the terminal)."""

    def display(self) -> Sequence[str]: ...

    @property
    def bracketed_paste(self) -> bool: ...


_VERSION = re.compile(r"\d+\.\d+(?:\.\d+)?(?:[-+.][0-9A-Za-z.]+)?")


class Adapter(ABC):
    """Teaches Polter one AI CLI. Subclasses set ``info`` and implement ``prepare``."""

    info: ClassVar[AdapterInfo]

    def __init__(self, executable: str | Path | None = None) -> None:
        """``executable`` overrides the PATH lookup of ``info.command`` (tests, unusual installs)."""
        self._executable = str(executable) if executable is not None else None

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        info = cls.__dict__.get("info")
        if info is not None and not isinstance(info, AdapterInfo):
            raise TypeError(f"{cls.__name__}.info must be an AdapterInfo, not {type(info).__name__}")

    @property
    def name(self) -> str:
        return self.info.name

    @property
    def display_name(self) -> str:
        return self.info.display_name

    def model_endpoints(self, pane: PaneToPrepare, env: Mapping[str, str]) -> tuple[str, ...]:
        """Where the CLI reaches its model API from this pane (URLs, or bare host names): the fake one of a test
        run, a user's base-URL variable (in ``env``, the pane's environment), and the declared hosts."""
        found = [pane.test_mode.model_base_url] if pane.test_mode is not None else []
        found += [env[name] for name in self.info.model_url_variables if env.get(name)]
        return tuple(dict.fromkeys([*found, *self.info.model_hosts]))

    def executable(self) -> str:
        """The CLI's program: the override, else its absolute path on PATH, else the bare command name."""
        if self._executable:
            return self._executable
        return shutil.which(self.info.command) or self.info.command

    def detect(self) -> Detection:
        """Find the CLI on PATH and read its version from ``--version``."""
        found = shutil.which(self._executable or self.info.command)
        if found is None:
            return Detection(installed=False)
        try:
            result = subprocess.run(
                [found, "--version"], capture_output=True, text=True, timeout=20, stdin=subprocess.DEVNULL
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return Detection(installed=True, path=Path(found), error=str(exc))
        match = _VERSION.search(result.stdout) or _VERSION.search(result.stderr)
        if match is None:
            reason = (result.stderr or result.stdout).strip().splitlines()[:1] or [f"exit code {result.returncode}"]
            return Detection(installed=True, path=Path(found), error=reason[0])
        return Detection(installed=True, path=Path(found), version=match.group(0))

    @abstractmethod
    def prepare(self, pane: PaneToPrepare) -> PreparedPane:
        """The launch spec and runtime files that run this CLI in ``pane`` behind the gateway."""

    def launch(
        self,
        pane: PaneToPrepare,
        argv: Sequence[str],
        *,
        env: Mapping[str, str] | None = None,
        unset: Sequence[str] = (),
        title: str | None = None,
    ) -> LaunchSpec:
        """What :meth:`prepare` returns as the launch, as every adapter makes it: ``argv`` in the pane's
        directory, with ``env`` (default: the pane's identity, :meth:`PaneToPrepare.polter_env`) and without
        the variables ``unset``, titled with the CLI's name unless ``title`` says otherwise."""
        return LaunchSpec(
            argv=tuple(argv),
            env=dict(pane.polter_env() if env is None else env),
            unset_env=tuple(unset),
            cwd=pane.cwd,
            title=title or self.display_name,
        )

    def skills(self, cwd: Path, home: Path | None = None) -> list[Skill]:
        """The skills this CLI would load when started in ``cwd`` (none, unless the CLI has skills)."""
        return []

    def human_config(self, home: Path) -> tuple[Path, ...]:
        """The user's folders and files of this CLI that the human's own CLI runs or trusts outside Polter (its
        config folder, ``~/.codex``; a state file that also holds its MCP servers, ``~/.claude.json``). Read-only in
        every pane of every CLI, whatever the role: an agent could plant a hook or an MCP server there. A pane of
        this CLI writes its own state in them (``PreparedPane``: its homes' state, ``state_folders``,
        ``private_files``); nothing else."""
        return ()

    def hook_request(self, payload: Mapping[str, Any]) -> HookRequest:
        """Translate the CLI's pre-tool hook payload (parsed JSON from stdin) into Polter's form."""
        return HookRequest(kind="other", cli_tool=str(payload.get("tool_name", "")))

    def hook_answer(self, answer: HookAnswer) -> HookReply:
        """Translate the gateway's verdict into the CLI's hook output. Default: exit 2 with the reason (a veto)."""
        if answer.decision == "allow":
            return HookReply()
        return HookReply(stderr=deny_message(answer), exit_code=2)

    def state(self, screen: ScreenView) -> AgentState | None:
        """What the agent is doing, read from the screen; None when the adapter cannot tell."""
        return None

    def ready_for_prompt(self, screen: ScreenView) -> bool | None:
        """Whether the CLI, by its screen, can take a prompt pasted and then submitted with Enter (an agent's
        message, docs/team.md): False holds the message back, however idle the screen looks. None (the default)
        when the adapter cannot tell: the agent's state alone decides."""
        return None

    def state_report(self, payload: Mapping[str, Any]) -> StateReport | None:
        """What one of the CLI's own state hooks said (the payload it posted to ``/hook/<name>/state``), or None
        for an event Polter does not follow. Only adapters that install such hooks in ``prepare`` override it."""
        return None

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.info.name!r}>"


CI_MARKERS = ("CI", "CONTINUOUS_INTEGRATION", "BUILD_NUMBER", "RUN_ID")


def ci_markers(environ: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The variables by which Ink-based CLIs (Gemini CLI, Qwen Code) decide they run in CI and refuse
    their interactive UI ("No input provided via stdin"). A pane is always a terminal, so adapters of
    such CLIs unset these (``CI``, ``CONTINUOUS_INTEGRATION``, ``BUILD_NUMBER``, ``RUN_ID``, ``CI_*``)."""
    names = os.environ if environ is None else environ
    return tuple(sorted(name for name in names if name in CI_MARKERS or name.startswith("CI_")))


def state_from_screen(
    lines: Sequence[str], *, waiting: re.Pattern[str], working: re.Pattern[str], idle: re.Pattern[str]
) -> AgentState | None:
    """The first state whose pattern the screen's text matches, asked in the order waiting, working, idle (a
    dialog drawn over a running turn is waiting; a spinner under the prompt box is working). The text is the
    rows, their trailing blanks stripped, joined by newlines (patterns may span rows with ``re.MULTILINE``)."""
    text = _screen_text(lines)
    for state, pattern in ((AgentState.WAITING, waiting), (AgentState.WORKING, working), (AgentState.IDLE, idle)):
        if pattern.search(text):
            return state
    return None


def input_box_ready(screen: ScreenView, input_box: re.Pattern[str]) -> bool:
    """Whether the CLI can take a pasted prompt by its screen (:meth:`Adapter.ready_for_prompt`): it asked for
    bracketed paste (it has the terminal; what is typed before goes to the tty's line discipline) and its input box
    is drawn (``input_box`` searched in the rows as :func:`state_from_screen` joins them)."""
    return screen.bracketed_paste and input_box.search(_screen_text(screen.display())) is not None


def _screen_text(lines: Sequence[str]) -> str:
    """The rows, their trailing blanks stripped, joined by newlines: what the adapters' screen patterns search."""
    return "\n".join(line.rstrip() for line in lines)


def deny_message(answer: HookAnswer) -> str:
    """The reason a CLI shows the model for a veto: Polter's reason and rule, so it can tell forbidden from broken."""
    reason = answer.reason or "denied by the pane's role"
    rule = f" (rule: {answer.rule})" if answer.rule else ""
    return f"Polter: {reason}{rule}"
