"""What adapters need to put the CLI's own tools under the role: the veto hook's command and URL, and
helpers that read a built-in tool's payload into a :class:`~polter.protocol.HookRequest`.

Every tool call goes through the hook now (not only MCP tools and skills), so the hook is cheap: a CLI with
HTTP hooks (Claude Code) posts its payload straight to the gateway, the others run
:mod:`polter.hook_client`, a stdlib-only forwarder; the translation runs in the gateway, which loads the
adapter once. Each adapter maps its CLI's tool names to the role's kinds (shell, read, write, web, agent,
meta) with :func:`builtin_request`; a name it does not know becomes a kind of its own.
"""

from __future__ import annotations

import importlib.util
import json
import py_compile
import re
import shlex
import shutil
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote

from polter.adapters._contract import PaneToPrepare
from polter.protocol import BuiltinsPolicy, HookRequest

__all__ = [
    "HOOK_CLIENT",
    "builtin_request",
    "claude_style_denies",
    "denied_patterns",
    "excluded_tools",
    "first_text",
    "hook_client_program",
    "missing_sandbox_notices",
    "patch_paths",
    "unconfined_notices",
    "urls_in",
    "veto_hook_argv",
    "veto_hook_url",
]

HOOK_CLIENT = Path(__file__).resolve().parent.parent / "hook_client.py"
"""The stdlib-only forwarder the CLIs run as their command hook."""


def hook_client_program() -> Path:
    """What a CLI runs as its command hook: the forwarder's bytecode beside the package (compiled again when the
    source is newer), so that no tool call pays for compiling it (about 2.5 ms of a hook's 15); the source where
    the package's folder cannot be written. That folder is read-only in every pane, like the source."""
    compiled = Path(importlib.util.cache_from_source(str(HOOK_CLIENT)))
    try:
        if not compiled.is_file() or compiled.stat().st_mtime < HOOK_CLIENT.stat().st_mtime:
            py_compile.compile(str(HOOK_CLIENT), cfile=str(compiled), doraise=True)
    except (OSError, py_compile.PyCompileError):
        return HOOK_CLIENT
    return compiled


def veto_hook_argv(pane: PaneToPrepare, adapter: str) -> tuple[str, ...]:
    """The command hook for ``pane``: the forwarder (``python -I -S``: no site, no user paths, so it starts in
    milliseconds and a project's ``json.py`` cannot hijack it), with the pane's directory and runtime dir."""
    base = (
        (*pane.hook_command, adapter)
        if pane.hook_command
        else (sys.executable, "-I", "-S", str(hook_client_program()), adapter)
    )
    return (*base, str(pane.cwd), str(pane.runtime_dir))


def veto_hook_url(pane: PaneToPrepare, adapter: str) -> str:
    """The gateway URL an HTTP hook posts the CLI's payload to (no process at all)."""
    query = f"project={quote(str(pane.cwd), safe='/')}&runtime={quote(str(pane.runtime_dir), safe='/')}"
    return f"{pane.gateway_url}/hook/{adapter}/payload?{query}"


def first_text(values: Mapping[str, Any], *names: str) -> str | None:
    """The first of ``names`` whose value is a non-empty string."""
    for name in names:
        value = values.get(name)
        if isinstance(value, str) and value:
            return value
    return None


def _command(value: Any) -> str | None:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(part, str) for part in value):
        return shlex.join(value)  # Codex's shell tool passes argv
    return None


def builtin_request(
    payload: Mapping[str, Any],
    cli_tool: str,
    kind: str,
    *,
    command: Any = None,
    paths: Iterable[str | None] = (),
    urls: Iterable[str] = (),
    query: str | None = None,
    agent: str | None = None,
    cwd: str | None = None,
) -> HookRequest:
    """A built-in tool call of ``kind`` (or the CLI's own tool name, for one no kind fits)."""
    tool_input = payload.get("tool_input")
    arguments = dict(tool_input) if isinstance(tool_input, Mapping) else {}
    return HookRequest(
        kind="builtin",
        cli_tool=cli_tool,
        builtin=kind,
        command=_command(command),
        paths=[path for path in paths if path],
        urls=list(urls),
        query=query,
        agent=agent,
        cwd=cwd or first_text(payload, "cwd"),
        arguments=arguments,
    )


_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Delete|Update) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.MULTILINE)


def patch_paths(patch: str) -> list[str]:
    """The files an ``apply_patch`` patch (Codex's format, also opencode's) adds, deletes, updates or moves to."""
    paths = [match.group(1) or match.group(2) for match in _PATCH_FILE.finditer(patch)]
    return list(dict.fromkeys(paths))


_URL = re.compile(r"https?://[^\s<>\"'`)\]]+", re.IGNORECASE)


def urls_in(text: str) -> list[str]:
    """The URLs written in a prompt (Gemini CLI's ``web_fetch`` takes a prompt, not a URL)."""
    return [url.rstrip(".,;:") for url in _URL.findall(text)]


def json_arguments(value: Any) -> dict[str, Any]:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return {}
    return dict(value) if isinstance(value, Mapping) else {}


# -- the CLIs' own permission layers, set from the role ---------------------------------------------------


def _split(pattern: str) -> tuple[str, str | None]:
    kind, _, rest = pattern.partition("(")
    return kind, rest[:-1] if rest else None


def _absolute(argument: str, project: str, home: str) -> str | None:
    """A role's path pattern as an absolute glob (None for a set, such as @outside, no CLI rule can say)."""
    if argument == "@project":
        return project.rstrip("/") + "/**"
    if argument.startswith("@"):
        return None
    if argument == "~" or argument.startswith("~/"):
        return home + argument[1:]
    if argument.startswith("/"):
        return "/" + argument.lstrip("/")
    relative = argument[2:] if argument.startswith("./") else argument
    return f"{project.rstrip('/')}/{relative}"


def denied_patterns(policy: BuiltinsPolicy | None) -> list[tuple[str, str | None]]:
    """(kind, argument) of every pattern the role denies."""
    return [_split(pattern) for pattern in (policy.deny if policy is not None else ())]


def claude_style_denies(pane: PaneToPrepare, policy: BuiltinsPolicy | None) -> list[str]:
    """The role's denies (and the protected targets) as Claude Code ``permissions.deny`` rules, which Qwen Code
    also reads: ``Bash(git push*)``, ``Edit(//abs/**)``, ``Read(~/.ssh/**)``, ``WebFetch(domain:x)``.

    Only what those rules can say exactly: a deny the CLI's syntax cannot express (``write(@outside)``) is left
    to the veto hook."""
    if policy is None:
        return []
    project, home = str(pane.cwd), str(pane.user_home)
    rules: list[str] = []
    for kind, argument in denied_patterns(policy):
        if kind == "shell":
            rules += ["Bash"] if argument is None else [] if argument.startswith("@") else [f"Bash({argument})"]
        elif kind in ("read", "write"):
            tools = ["Read"] if kind == "read" else ["Edit", "Write", "NotebookEdit"]
            glob = None if argument is None else _absolute(argument, project, home)
            if argument is None:
                rules += tools
            elif glob is not None:
                rules += [f"{'Read' if kind == 'read' else 'Edit'}(/{glob})"]
        elif kind == "web":
            if argument is None:
                rules += ["WebFetch", "WebSearch"]
            elif argument == "search":
                rules += ["WebSearch"]
            elif argument.startswith("domain:"):
                rules += [f"WebFetch({argument})"]
        elif kind == "agent" and argument is None:
            rules += ["Agent", "Task"]
        elif kind not in ("meta", "agent", "shell", "read", "write", "web"):
            rules.append(kind)  # a CLI tool's own name
    for target in policy.protected:
        if target.path.startswith("/"):
            rules.append(f"Edit(/{target.path}/**)")
            if not target.writes_only:
                rules.append(f"Read(/{target.path}/**)")
    for tail in ("hooks/**", "config"):
        rules.append(f"Edit(/{project.rstrip('/')}/.git/{tail})")
    return list(dict.fromkeys(rules))


def excluded_tools(policy: BuiltinsPolicy | None, tools_by_kind: Mapping[str, Iterable[str]]) -> list[str]:
    """The CLI tools a role denies outright (a kind denied with no argument, or a tool denied by name)."""
    excluded: list[str] = []
    for kind, argument in denied_patterns(policy):
        if argument is None:
            excluded += list(tools_by_kind.get(kind, ())) if kind in tools_by_kind else [kind]
    return list(dict.fromkeys(excluded))


SANDBOX_PACKAGES = {"bwrap": "bubblewrap", "socat": "socat"}
"""The programs the CLIs' OS sandboxes run on Linux, and the Debian/Ubuntu/Fedora package each comes in."""


def missing_sandbox_notices(cli: str, programs: Iterable[str], consequence: str) -> list[str]:
    """A notice for the pane when ``programs`` (which the CLI's own OS sandbox needs on Linux) are not on PATH:
    it names them, the packages to install and ``consequence`` (what the CLI then does). None needed elsewhere
    (macOS has Seatbelt built in)."""
    if not sys.platform.startswith("linux"):
        return []
    missing = [name for name in programs if shutil.which(name) is None]
    if not missing:
        return []
    packages = " and ".join(SANDBOX_PACKAGES.get(name, name) for name in missing)
    verb = "is" if len(missing) == 1 else "are"
    return [
        f"{cli}'s sandbox needs {' and '.join(missing)}, which {verb} not on PATH (install {packages}): {consequence}"
    ]


def unconfined_notices(cli: str, policy: BuiltinsPolicy | None, why: str) -> list[str]:
    """A notice for a pane whose role writes nothing in a CLI without an OS sandbox Polter can set (``why``): the
    veto hook's shell rules are a seatbelt, so a program the role allows can still write."""
    if policy is None or not policy.writes_nothing():
        return []
    return [
        f"The role writes nothing, but {cli} has no sandbox Polter can set ({why}): a program the role allows "
        "(python3 -c, a script) can still write files. Claude Code and Codex confine it."
    ]
