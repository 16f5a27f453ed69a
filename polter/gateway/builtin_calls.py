"""The CLIs' own tools at the gateway: paths resolved on disk, the targets no role can open, and the
role's decision (asks, grants and audit as for MCP tools).

The decision itself is the roles engine's (:mod:`polter.roles.builtin_verdicts`, pure); this module brings
what only a process on the machine knows: where a path really leads (``..``, ``~``, symlinks), where
Polter keeps its config, roles and state, and where the pane's git repository keeps its hooks.
"""

from __future__ import annotations

import asyncio
import os
import posixpath
import time
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from polter.gateway.outcomes import Authorization
from polter.gitdirs import git_dirs
from polter.paths import config_dir, project_roles_dir, state_dir
from polter.protocol import BuiltinsPolicy, HookRequest, ProtectedTarget
from polter.roles.builtin_verdicts import BuiltinRequest
from polter.roles.builtins import BuiltinCall, Protected, Resolver
from polter.roles.engine import CompiledRole, Verdict

if TYPE_CHECKING:
    from polter.gateway.core import Gateway
    from polter.gateway.panes import RegisteredPane

__all__ = [
    "GIT_TARGETS",
    "builtin_call",
    "builtins_policy",
    "decide_builtin_call",
    "protected_targets",
    "real_resolver",
]

EGRESS = "egress"
"""The adapter name the panes' egress proxy posts its questions under (``/hook/egress``)."""

GIT_TARGETS = (
    Protected(".git/hooks", "a git hooks folder", writes_only=True, anywhere=True),
    Protected(".git/config", "a git repository's config", writes_only=True, anywhere=True, tree=False),
    Protected(".git/modules/**/hooks", "a submodule's git hooks folder", writes_only=True, anywhere=True),
    Protected(".git/modules/**/config", "a submodule's git config", writes_only=True, anywhere=True, tree=False),
)
"""In any repository: writing a hook, or the config (``core.hooksPath``, aliases, ``core.fsmonitor``), runs code
outside any rule."""


def real_resolver(cwd: str, home: str) -> Resolver:
    """A path as written → its normalised absolute form, and where it really leads when a symlink sends it
    elsewhere (resolved as the kernel would: ``link/../x`` follows ``link`` first)."""

    def resolve(path: str) -> tuple[str, ...]:
        if path == "~" or path.startswith("~/"):
            path = home + path[1:]
        elif path.startswith("~"):
            path = os.path.expanduser(path)  # ~user
        joined = posixpath.join(cwd, path)
        lexical = posixpath.normpath(joined)
        try:
            real = os.path.realpath(joined)
        except (OSError, ValueError):
            return (lexical,)
        return (lexical,) if real == lexical else (lexical, real)

    return resolve


def _hooks_path(config: Path) -> str | None:
    """``core.hooksPath`` of a git config file (git runs the hooks it finds there), or None."""
    try:
        text = config.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    section = ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            section = line.strip("[]").split()[0].lower() if line.strip("[]").split() else ""
        elif section == "core" and "=" in line and line.split("=", 1)[0].strip().lower() == "hookspath":
            return os.path.expanduser(line.split("=", 1)[1].strip().strip('"')) or None
    return None


def protected_targets(
    project: str, *, state_dirs: Iterable[Path] = (), role_dirs: Iterable[Path] = (), runtime_dir: str | None = None
) -> tuple[Protected, ...]:
    """Every target no role can open for a pane in ``project``: Polter's config and state (its runtime files
    included), its role folders and the project's ``.polter`` (writing), and the git hooks and configs."""
    targets: list[Protected] = []

    def add(path: Path | str, what: str, writes_only: bool = False, tree: bool = True) -> None:
        resolved = os.path.realpath(os.path.expanduser(str(path)))
        if not any(existing.path == resolved and existing.writes_only == writes_only for existing in targets):
            targets.append(Protected(resolved, what, writes_only=writes_only, tree=tree))

    add(config_dir(), "Polter's config (its roles, plugins and settings)")
    for folder in (state_dir(), *state_dirs):
        add(folder, "Polter's state (the audit log and the panes' runtime files)")
    if runtime_dir:
        add(runtime_dir, "one of the files Polter writes for this pane's CLI")
    for folder in role_dirs:
        add(folder, "a folder of Polter's roles", writes_only=True)
    add(project_roles_dir(Path(project)).parent, "the project's Polter settings and roles", writes_only=True)
    for git_dir in git_dirs(Path(project)):
        add(git_dir / "hooks", "the repository's git hooks folder", writes_only=True)
        add(git_dir / "config", "the repository's git config", writes_only=True, tree=False)
        add(git_dir / "config.worktree", "the worktree's git config", writes_only=True, tree=False)
        hooks_path = _hooks_path(git_dir / "config")
        if hooks_path is not None:
            add(Path(project) / hooks_path, "the folder core.hooksPath names for git hooks", writes_only=True)
    return (*targets, *GIT_TARGETS)


def builtins_policy(role: CompiledRole, protected: Iterable[Protected]) -> BuiltinsPolicy:
    """The role's effective [builtins] and the protected targets, as ``whoami`` shows them. A role whose [team]
    may open no pane may start none of the CLI's own sub-agents either, whatever [builtins] says of ``agent``: the
    policy denies that kind, so whoami says it and the CLI's own permission layer refuses it too."""
    described = role.describe()
    rules = described["builtins"]
    phases = described["phases"]
    deny = list(rules["deny"])
    if not role.team.open and "agent" not in deny:
        deny.append("agent")
    return BuiltinsPolicy(
        default=rules["default"],
        allow=[pattern for pattern in rules["allow"] if pattern not in deny],
        ask=[pattern for pattern in rules["ask"] if pattern not in deny],
        deny=deny,
        research=phases["builtins"] if phases else None,
        unconfined_shell=role.unconfined_shell,
        protected=[
            ProtectedTarget(path=target.path, what=target.what, writes_only=target.writes_only) for target in protected
        ],
    )


def gateway_targets(gateway: Gateway) -> tuple[Protected, ...]:
    """The protected targets that do not depend on a pane's directory (whoami's list)."""
    targets = protected_targets(
        "/nonexistent-project",
        state_dirs=(gateway.config.state_dir,),
        role_dirs=[layer.path for layer in gateway.roles.layers],
    )
    return tuple(target for target in targets if not target.path.startswith("/nonexistent-project"))


def builtin_call(request: HookRequest) -> BuiltinCall:
    return BuiltinCall(
        cli_tool=request.cli_tool,
        kind=request.builtin or request.cli_tool,
        command=request.command,
        paths=tuple(request.paths),
        urls=tuple(request.urls),
        query=request.query,
        agent=request.agent,
    )


def target_of(call: BuiltinCall, resolve: Resolver) -> str:
    """The call's argument, normalised, for the audit log: a command as given, paths resolved."""
    if call.paths:
        return ", ".join(resolve(path)[-1] for path in call.paths)
    if call.query is not None and not call.urls:
        return f"search: {call.query}"
    return call.argument


async def decide_builtin_call(
    gateway: Gateway, pane: RegisteredPane, adapter: str, request: HookRequest
) -> Authorization:
    """The role's decision on one of the CLI's own tools, an ask resolved, a grant applied, the audit row written."""
    started = time.perf_counter()
    call = builtin_call(request)
    project = request.project or request.cwd
    resolve = real_resolver(request.cwd or project or "/", str(Path.home()))
    target = target_of(call, resolve) if project else call.argument
    if not project:
        auth = Authorization(
            False, "deny", "polter:hook", f"{call.cli_tool}: the hook names no directory, so paths cannot be judged"
        )
    else:
        recent_input = pane.recent_input(gateway.policy.input_window)
        verdict = await asyncio.to_thread(
            _decide_off_loop, gateway, pane, call, project, request, resolve, tuple(recent_input)
        )
        grant = (f"builtin:{call.kind}", target)
        if verdict.decision == "ask" and grant in pane.grants:
            verdict = Verdict(
                "allow", "polter:ask-grant", f"The human allowed this for the pane when asked ({verdict.rule})."
            )
        auth = await gateway.execution.authorize(
            pane,
            verdict,
            kind="tool",
            server=None,
            name=f"{call.kind}: {target}" if call.kind != call.cli_tool else call.cli_tool,
            arguments={"tool": call.cli_tool, **({"cwd": request.cwd} if request.cwd else {}), **request.arguments},
            grant_key=grant,
        )
    row = gateway.audit.make_row(
        arguments=request.arguments,
        time=_now(),
        pane=pane.id,
        role=pane.role,
        layer="network" if adapter == EGRESS else "hook",
        server=None,
        name=call.cli_tool,
        builtin=call.kind,
        target=target,
        decision=auth.decision,
        rule=auth.rule,
        reason=f"[{adapter}] {auth.reason}",
        latency_ms=round((time.perf_counter() - started) * 1000, 3),
    )
    await gateway.audit.write(row)
    return auth


def _decide_off_loop(
    gateway: Gateway,
    pane: RegisteredPane,
    call: BuiltinCall,
    project: str,
    request: HookRequest,
    resolve: Resolver,
    recent_input: tuple[str, ...],
) -> Verdict:
    """The pure decision plus the disk reads it needs (symlinks, git dirs), run in a worker thread: reading a
    long command line takes milliseconds to seconds, and the gateway's event loop serves every pane."""
    protected = protected_targets(
        project,
        state_dirs=(gateway.config.state_dir,),
        role_dirs=[layer.path for layer in gateway.roles.layers],
        runtime_dir=request.runtime_dir,
    )
    builtin = BuiltinRequest(
        call=call,
        project=os.path.realpath(project),
        home=str(Path.home()),
        resolve=resolve,
        protected=protected,
        recent_input=recent_input,
        phase=pane.phase,
    )
    return gateway.policy.decide_builtin(pane, builtin)


def _now() -> datetime:
    return datetime.now(UTC)
