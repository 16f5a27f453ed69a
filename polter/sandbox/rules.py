"""A role's write rules as the kernel can hold them: folders writable or read-only, nothing finer.

The kernel sandbox (bubblewrap's bind mounts) knows folders and files, not globs. So a role's ``write`` rules
compile to: is the pane's directory writable, is the home writable, and a list of folders (``write(src/**)``,
``write(~/.cache/**)``, ``write(/srv/data/**)``) each writable or read-only. Anything finer (``write(*.md)``,
``write(src/*/gen/**)``) cannot be held and is reported by :func:`kernel_problems`, which ``polter roles
check`` shows as ``file:line: field: why`` before any pane starts.

A write the role *asks* for is writable in the sandbox: the ask is the CLI's veto hook's to raise and the
human's to answer; a write the role *denies* is read-only. Deny wins, as everywhere in a role: a folder is
writable only if no rule that covers it denies. Outside the pane's directory the sandbox opens at most the
home (and the folders a rule names): the rest of the system stays read-only.

Pure: strings in, data out (paths are anchored by the caller's project and home).
"""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["FolderRule", "WriteRules", "kernel_problems", "write_rules"]

Decision = Literal["allow", "ask", "deny"]
_STRICTNESS: dict[Decision, int] = {"allow": 0, "ask": 1, "deny": 2}
_GLOB_CHARACTERS = frozenset("*?[]{}")


@dataclass(frozen=True)
class FolderRule:
    """A folder (or file) the sandbox mounts writable or read-only, and the pattern it came from."""

    path: str
    writable: bool
    pattern: str


@dataclass(frozen=True)
class WriteRules:
    """What a role lets the kernel open for writing."""

    project: bool
    """The pane's directory (its tree) is writable."""
    home: bool
    """The home is writable (a role that writes outside the pane's directory)."""
    folders: tuple[FolderRule, ...]
    """Folders named by the role's own rules, shallowest first (a deeper one is mounted over a shallower one)."""


def _argument(pattern: str) -> str | None:
    """``write(src/**)`` → ``src/**``; bare ``write`` → None. Not a write pattern → ``""`` (ignored)."""
    if pattern == "write":
        return None
    if pattern.startswith("write(") and pattern.endswith(")"):
        return pattern[len("write(") : -1]
    return ""


def _folder(argument: str) -> str | None:
    """The folder a path argument names, if the kernel can hold it: ``DIR``, ``DIR/``, ``DIR/**`` with no other
    glob character. None for anything finer."""
    stem = argument[:-3] if argument.endswith("/**") else argument.rstrip("/") or argument
    if any(character in _GLOB_CHARACTERS for character in stem) or not stem:
        return None
    return stem


def _anchor(folder: str, project: str, home: str) -> str:
    """As the roles engine anchors a path pattern: ``~/`` → home, ``/x`` absolute, else under the project."""
    if folder == "~" or folder.startswith("~/"):
        return posixpath.normpath(home + folder[1:])
    if folder.startswith("//"):
        return posixpath.normpath(folder[1:])
    if folder.startswith("/"):
        return posixpath.normpath(folder)
    return posixpath.normpath(posixpath.join(project, folder))


def _inside(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def kernel_problems(patterns: Sequence[tuple[str, Decision]]) -> list[tuple[str, Decision, str]]:
    """The write patterns the sandbox cannot hold, each with its decision and why (for ``polter roles check``)."""
    problems = []
    for pattern, decision in patterns:
        argument = _argument(pattern)
        if argument is None or argument == "" or argument in ("@project", "@outside"):
            continue
        if _folder(argument) is None:
            problems.append(
                (
                    pattern,
                    decision,
                    f'"{pattern}": the sandbox holds writes by folder, not by file pattern; name a folder '
                    '("write(DIR/**)") or drop the rule',
                )
            )
    return problems


def write_rules(
    default: Decision,
    patterns: Sequence[tuple[str, Decision]],
    *,
    project: str,
    home: str,
) -> WriteRules:
    """Compile a role's ``[builtins]`` (its default and ``(pattern, decision)`` pairs) for a pane in ``project``.
    Patterns the kernel cannot hold are left out here (a role with any is refused when it loads)."""
    project, home = posixpath.normpath(project), posixpath.normpath(home)
    bare: list[Decision] = []
    inside: list[Decision] = []
    outside: list[Decision] = []
    named: list[tuple[str, Decision, str]] = []
    for pattern, decision in patterns:
        argument = _argument(pattern)
        if argument is None:
            bare.append(decision)
        elif argument == "@project":
            inside.append(decision)
        elif argument == "@outside":
            outside.append(decision)
        elif argument and (folder := _folder(argument)) is not None:
            named.append((_anchor(folder, project, home), decision, pattern))

    def decide(path: str) -> Decision:
        """The strictest decision of every rule covering everything under ``path``; the default if none does."""
        found = [*bare, *(inside if _inside(path, project) else outside)]
        found += [decision for folder, decision, _ in named if _inside(path, folder)]
        return max(found, key=_STRICTNESS.__getitem__) if found else default

    folders = tuple(
        FolderRule(folder, decide(folder) != "deny", pattern)
        for folder, _decision, pattern in sorted(named, key=lambda rule: rule[0].count("/"))
    )
    # The home as a place outside the pane's directory (a project inside it is mounted over it).
    home_rules = [*bare, *outside, *(decision for folder, decision, _ in named if _inside(home, folder))]
    home_decision = max(home_rules, key=_STRICTNESS.__getitem__) if home_rules else default
    return WriteRules(project=decide(project) != "deny", home=home_decision != "deny", folders=folders)
