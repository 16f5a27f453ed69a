"""``polter roles``: list the roles, check role files, explain a decision.

The commands a user runs to trust a role before giving it to an agent: ``check`` finds every
problem of every file (``file:line: field: message``), ``explain`` shows exactly what the gateway
would decide for one tool, with the rule and the reason.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from polter.cli._admin import list_by_default
from polter.errors import RoleError

if TYPE_CHECKING:
    from polter.errors import RoleError
    from polter.roles.builtin_verdicts import BuiltinRequest
    from polter.roles.engine import Request
    from polter.roles.library import RoleLibrary


class _RoleRow(TypedDict):
    """One role of ``polter roles list`` (its ``--json`` shape)."""

    name: str
    layer: str
    path: str
    overrides: list[str]
    extends: str | None
    description: str
    invalid_file_last_good_in_force: bool


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    roles = subparsers.add_parser("roles", help="list, check and explain roles", description=__doc__.split("\n\n")[0])
    commands = roles.add_subparsers(dest="roles_command", metavar="COMMAND", required=True)

    listing = commands.add_parser("list", help="the roles in force, where each comes from, and any problems")
    listing.add_argument("--json", action="store_true", help="print one JSON object")
    listing.set_defaults(handler=run_list)

    check = commands.add_parser("check", help="validate role files or folders (exit 1 on any problem)")
    check.add_argument(
        "paths",
        nargs="*",
        type=Path,
        metavar="PATH",
        help="role files or folders (default: every place roles are loaded from)",
    )
    check.set_defaults(handler=run_check)

    explain = commands.add_parser("explain", help="what a role decides for one tool, by which rule, and why")
    explain.add_argument("role", metavar="ROLE", help="a role name, or the path of a role file")
    explain.add_argument(
        "target",
        metavar="TARGET",
        help="SERVER/TOOL; with --kind, a server or skill name, a shell command line (shell), or a path (read, write)",
    )
    explain.add_argument(
        "--kind",
        choices=("tool", "server", "skill", "shell", "read", "write", "web"),
        default="tool",
        help="what TARGET names (default tool); shell, read, write and web ask about the CLI's own tools",
    )
    explain.add_argument(
        "--project", type=Path, default=None, help="the pane's directory, for paths (default: the current one)"
    )
    explain.add_argument(
        "--read-only",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the tool's readOnlyHint (default: absent)",
    )
    explain.add_argument(
        "--destructive",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="the tool's destructiveHint (default: absent)",
    )
    explain.add_argument(
        "--input", action="append", default=[], metavar="TEXT", help="a line the human typed in the pane (repeatable)"
    )
    explain.add_argument("--phase", choices=("research", "action"), help="the pane's phase (default: the role's first)")
    explain.add_argument(
        "--arguments",
        metavar="JSON",
        type=json.loads,
        help='the call\'s arguments as a JSON object, for rules on them (\'{"path": "src/a.py"}\')',
    )
    explain.add_argument("--json", action="store_true", help='print {"decision": ..., "rule": ..., "reason": ...}')
    explain.set_defaults(handler=run_explain)
    list_by_default(roles, commands, listing)


def _shown(problem: RoleError) -> str:
    """``file:line: field: message`` with the file relative to the working directory when inside it."""
    from polter.roles.engine import short_path

    path = short_path(Path(problem.path)) if problem.path else None
    return str(RoleError(problem.message, path=path, line=problem.line, field=problem.field))


def run_list(args: argparse.Namespace) -> int:
    from polter.roles.engine import short_path
    from polter.roles.library import RoleLibrary

    library = RoleLibrary.load()
    rows: list[_RoleRow] = []
    for name in library.names():
        role, source = library.get(name), library.source(name)
        assert role is not None and source is not None
        rows.append(
            {
                "name": name,
                "layer": source.layer,
                "path": str(source.path),
                "overrides": [str(path) for path in source.overrides],
                "extends": role.extends,
                "description": role.description.strip().splitlines()[0] if role.description.strip() else "",
                "invalid_file_last_good_in_force": name in library.kept,
            }
        )
    if args.json:
        print(
            json.dumps({"roles": rows, "problems": [_shown(p) for p in library.problems]}, ensure_ascii=False, indent=2)
        )
        return 0
    name_width = max((len(row["name"]) for row in rows), default=0)
    file_width = max((len(short_path(Path(row["path"]))) for row in rows), default=0)
    for row in rows:
        notes = []
        if row["extends"]:
            notes.append(f"extends {row['extends']}")
        notes.extend(f"overrides {short_path(Path(path))}" for path in row["overrides"])
        if row["invalid_file_last_good_in_force"]:
            notes.append("file invalid: last good version in force")
        suffix = f"  ({'; '.join(notes)})" if notes else ""
        shown = short_path(Path(row["path"]))
        print(f"{row['name']:<{name_width}}  {row['layer']:<7}  {shown:<{file_width}}  {row['description']}{suffix}")
    if not rows:
        print("no roles found")
    _print_problems(library)
    return 0


def _print_problems(library: RoleLibrary, only: list[Path] | None = None) -> int:
    """Print problems (and warnings) under ``only`` (every file when None); return the problem count."""

    def selected(problem: RoleError) -> bool:
        if only is None:
            return True
        path = Path(problem.path or "").resolve()
        return any(path == root or root in path.parents for root in only)

    problems = [p for p in library.problems if selected(p)]
    for problem in problems:
        print(_shown(problem))
    for warning in (w for w in library.warnings if selected(w)):
        print(
            _shown(
                type(warning)(f"warning: {warning.message}", path=warning.path, line=warning.line, field=warning.field)
            )
        )
    return len(problems)


def run_check(args: argparse.Namespace) -> int:
    from polter.roles.library import Layer, RoleLibrary, default_layers
    from polter.roles.loader import role_files

    missing = [path for path in args.paths if not path.exists()]
    for path in missing:
        print(_shown(RoleError("no such file or folder", path=path)))
    given = [path for path in args.paths if path.exists()]
    # The given files load on top of every usual place, so that their `extends` resolve as they will.
    library = RoleLibrary([*default_layers(), *(Layer(str(path), path) for path in given)])
    library.reload()
    checked = [Layer("", path) for path in given] if args.paths else library.layers
    roots = [path.resolve() for path in given] if args.paths else None
    count = _print_problems(library, roots) + len(missing)
    files = len({file.resolve() for layer in checked for file in role_files(layer.path)})
    plural = "s" * (files != 1)
    if count:
        print(f"{count} problem{'s' * (count != 1)} ({files} role file{plural} checked)")
        return 1
    print(f"ok: {files} role file{plural} checked")
    return 0


def _library_and_role(spec: str) -> tuple[RoleLibrary, str]:
    """The library and role name for ``spec``: a role name, or a role file (added as the top layer)."""
    from polter.roles.library import Layer, RoleLibrary, default_layers

    path = Path(spec)
    if spec.endswith(".toml") or "/" in spec:
        if not path.is_file():
            raise RoleError("no such role file", path=path)
        library = RoleLibrary([*default_layers(), Layer(str(path), path)])
        library.reload()
        return library, path.stem
    return RoleLibrary.load(), spec


def run_explain(args: argparse.Namespace) -> int:
    from polter.roles.builtin_verdicts import BuiltinRequest
    from polter.roles.engine import ServerRequest, SkillRequest, ToolCallRequest

    library, name = _library_and_role(args.role)
    role = library.get(name)
    if role is None:
        own = [p for p in library.problems if p.path and Path(p.path).stem == name]
        if own:
            raise RoleError(f"the role {name!r} cannot be loaded: " + "; ".join(_shown(p) for p in own))
        raise RoleError(f"unknown role {name!r} (known: {', '.join(library.names()) or 'none'})")
    if args.kind == "tool":
        if "/" not in args.target:
            raise RoleError(f"{args.target!r}: name the tool as SERVER/TOOL (or pass --kind server or --kind skill)")
        server, tool = args.target.split("/", 1)
        request: Request = ToolCallRequest(
            server,
            tool,
            read_only=args.read_only,
            destructive=args.destructive,
            recent_input=tuple(args.input),
            phase=args.phase,
            arguments=args.arguments,
        )
    elif args.kind == "server":
        request = ServerRequest(args.target)
    elif args.kind == "skill":
        request = SkillRequest(args.target)
    else:
        request = _builtin_request(args, library)
    verdict = role.decide(request)
    if args.json:
        print(json.dumps(verdict.as_dict(), ensure_ascii=False))
        return 0
    source = library.source(name)
    print(f"{args.target} under the role {name} ({source})")
    if name in library.kept:
        print("note: the role's file is invalid; this is its last good version, still in force")
    if isinstance(request, ToolCallRequest | BuiltinRequest):
        phase = request.phase or ("research" if role.has_phases else "action")
        print(f"phase:    {phase}" + ("" if role.has_phases else " (the role has no phases)"))
        if isinstance(request, ToolCallRequest):
            print(f"listed:   {'yes' if role.visible(request) else 'no'}")
    print(f"decision: {verdict.decision}")
    print(f"rule:     {verdict.rule}")
    print(f"reason:   {verdict.reason}")
    if args.kind == "shell":
        from polter.roles.shell import split_command_line

        line = split_command_line(args.target)
        print("runs:     " + "; ".join(str(command) for command in line.commands) or "(nothing)")
        if line.problem:
            print(f"note:     {line.problem}: the strictest shell rule applies")
    if isinstance(request, BuiltinRequest) and args.kind in ("shell", "read", "write"):
        print("protected (no role can open; * = writing only):")
        for target in request.protected:
            print(f"  {target.path}{' *' if target.writes_only else ''}  {target.what}")
    return 0


def _builtin_request(args: argparse.Namespace, library: RoleLibrary) -> BuiltinRequest:
    """A call of the CLI's own tool of ``--kind``, judged as the gateway would (paths resolved on disk)."""
    from polter.gateway.builtin_calls import protected_targets, real_resolver
    from polter.roles.builtin_verdicts import BuiltinRequest
    from polter.roles.builtins import BuiltinCall

    project = str((args.project or Path.cwd()).resolve())
    if args.kind == "shell":
        call = BuiltinCall("shell", "shell", command=args.target)
    elif args.kind == "web":
        call = (
            BuiltinCall("web", "web", urls=(args.target,))
            if "://" in args.target
            else BuiltinCall("web", "web", query=args.target)
        )
    else:
        call = BuiltinCall(args.kind, args.kind, paths=(args.target,))
    return BuiltinRequest(
        call=call,
        project=project,
        home=str(Path.home()),
        resolve=real_resolver(project, str(Path.home())),
        protected=protected_targets(project, role_dirs=[layer.path for layer in library.layers]),
        recent_input=tuple(args.input),
        phase=args.phase,
    )
