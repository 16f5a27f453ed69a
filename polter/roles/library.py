"""The roles a user has: loaded from layered folders, resolved (``extends``), compiled, hot-reloaded.

Layers, later overriding earlier by name: the bundled ``roles/``, the user's config dir
(``<config>/roles``), then the project's ``.polter/roles/``. A bad file never stops the others from
loading; every problem is kept with its file, line and field. On reload, a role whose file became
invalid keeps its last good version in force (execution fails closed, never open) and the report
says so; a role whose file is deleted is gone (a pane under it can call nothing).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from polter.errors import RoleError
from polter.paths import bundled_dir, config_dir, project_roles_dir
from polter.roles.engine import CompiledRole, compile_role, short_path
from polter.roles.loader import RoleFile, read_role_file, role_files
from polter.roles.models import DEFAULT_ROLE, ROLE_NAME

__all__ = ["DEFAULT_ROLE", "Layer", "ReloadReport", "RoleLibrary", "RoleSource", "default_layers"]


@dataclass(frozen=True, slots=True)
class Layer:
    """One place roles come from: ``label`` says which (bundled, user, project, or a path)."""

    label: str
    path: Path


def default_layers(cwd: Path | None = None) -> list[Layer]:
    """The three places, in override order: bundled, the user's config dir, the project."""
    return [
        Layer("bundled", bundled_dir("roles")),
        Layer("user", config_dir() / "roles"),
        Layer("project", project_roles_dir(cwd)),
    ]


@dataclass(frozen=True, slots=True)
class RoleSource:
    """Where a role came from, and the files of the same name in earlier layers that it overrides."""

    layer: str
    path: Path
    overrides: tuple[Path, ...] = ()

    def __str__(self) -> str:
        return f"{self.layer}: {short_path(self.path)}"


@dataclass
class ReloadReport:
    """What a reload changed. ``kept`` names the roles whose file became invalid: their last good
    version stays in force until the file is fixed."""

    added: list[str] = field(default_factory=list)
    changed: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    kept: dict[str, list[RoleError]] = field(default_factory=dict)
    problems: list[RoleError] = field(default_factory=list)
    problems_changed: bool = False

    @property
    def affected(self) -> set[str]:
        """Roles whose policy changed: panes under them need a fresh tool list."""
        return {*self.added, *self.changed, *self.removed}

    def __bool__(self) -> bool:
        return bool(self.affected) or self.problems_changed

    def lines(self) -> list[str]:
        """A human summary, one line per fact."""
        lines = [
            f"role {verb}: {name}"
            for verb, names in (("added", self.added), ("changed", self.changed), ("removed", self.removed))
            for name in names
        ]
        for name, problems in self.kept.items():
            lines.append(
                f"role {name}: its file is invalid; the last good version stays in force ({len(problems)} problem(s))"
            )
        lines.extend(str(problem) for problem in self.problems)
        return lines


class _Resolver:
    """Compiles every definition of every role, following ``extends`` and catching cycles."""

    def __init__(self, files: dict[str, list[tuple[Layer, RoleFile]]], last_good: dict[str, CompiledRole]) -> None:
        self.files = files
        self.last_good = last_good
        self.done: dict[tuple[str, int], CompiledRole | None] = {}
        self.stack: list[tuple[str, int]] = []

    def file(self, key: tuple[str, int]) -> RoleFile:
        return self.files[key[0]][key[1]][1]

    def compile(self, key: tuple[str, int]) -> CompiledRole | None:
        if key in self.done:
            return self.done[key]
        if key in self.stack:
            self._report_cycle(self.stack[self.stack.index(key) :])
            return None
        role_file = self.file(key)
        role = role_file.role
        if role is None:
            self.done[key] = None
            return None
        parent = None
        if role.extends is not None:
            parent_key = self._parent_key(key, role.extends)
            if parent_key is None:
                self.done[key] = None
                return None
            self.stack.append(key)
            parent = self._parent(parent_key)
            self.stack.pop()
            if key in self.done:  # part of a cycle, already reported
                return self.done[key]
            if parent is None:
                self._problem(
                    key,
                    f"the role {role.extends!r} it extends has problems (see {short_path(self.file(parent_key).path)})",
                )
                return None
        try:
            compiled = compile_role(role, source=role_file.path, parent=parent)
        except RoleError as exc:  # semantic problems were reported by the loader; this is a safety net
            role_file.problems.append(role_file.error(exc.message, exc.field))
            compiled = None
        self.done[key] = compiled
        return compiled

    def _parent_key(self, key: tuple[str, int], extends: str) -> tuple[str, int] | None:
        name, index = key
        if extends == name:
            if index == 0:
                self._problem(key, f"{name!r} extends itself, and no earlier layer has a role {name!r} to extend")
                return None
            return (name, index - 1)
        if extends not in self.files:
            known = ", ".join(sorted(name for name in self.files if ROLE_NAME.match(name))) or "none"
            self._problem(key, f"unknown role {extends!r} (known: {known})")
            return None
        return (extends, len(self.files[extends]) - 1)

    def _parent(self, key: tuple[str, int]) -> CompiledRole | None:
        compiled = self.compile(key)
        is_winner = key[1] == len(self.files[key[0]]) - 1
        if compiled is None and is_winner:
            return self.last_good.get(key[0])  # what is in force for that name: its last good version
        return compiled

    def _report_cycle(self, cycle: list[tuple[str, int]]) -> None:
        names = [name for name, _ in cycle]
        for position, member in enumerate(cycle):
            rotated = names[position:] + names[:position]
            self._problem(member, "inheritance cycle: " + " → ".join([*rotated, rotated[0]]))

    def _problem(self, key: tuple[str, int], message: str) -> None:
        role_file = self.file(key)
        role_file.problems.append(role_file.error(message, "extends"))
        self.done[key] = None


class RoleLibrary:
    """All roles from a list of layers; ``reload()`` re-reads them and reports what changed."""

    def __init__(self, layers: Sequence[Layer]) -> None:
        self.layers = list(layers)
        self.problems: list[RoleError] = []
        """Every problem of every role file: file, line (when known), field and message."""
        self.warnings: list[RoleError] = []
        """Things role files say that Polter does not honour (a deny on a floor tool)."""
        self.kept: dict[str, list[RoleError]] = {}
        """Roles running on their last good version because their file is invalid now."""
        self._roles: dict[str, CompiledRole] = {}
        self._sources: dict[str, RoleSource] = {}

    @classmethod
    def load(cls, dirs: Sequence[Path] | None = None, *, cwd: Path | None = None) -> RoleLibrary:
        """Load the roles from ``dirs`` (folders or files, later overriding earlier), by default from
        the bundled roles, the user's config dir and the project's ``.polter/roles`` under ``cwd``."""
        layers = default_layers(cwd) if dirs is None else [Layer(short_path(Path(d)), Path(d)) for d in dirs]
        library = cls(layers)
        library.reload()
        return library

    def get(self, name: str) -> CompiledRole | None:
        """The role in force under ``name``, or None (a pane under a missing role can call nothing)."""
        return self._roles.get(name)

    def names(self) -> list[str]:
        return sorted(self._roles)

    def source(self, name: str) -> RoleSource | None:
        """Which layer and file the role in force came from."""
        return self._sources.get(name)

    def reload(self) -> ReloadReport:
        """Re-read every layer. Keeps the last good version of a role whose file became invalid."""
        files: dict[str, list[tuple[Layer, RoleFile]]] = {}
        seen: set[Path] = set()
        for layer in self.layers:
            for path in role_files(layer.path):
                if path.resolve() in seen:  # a file given twice (a layer inside another) counts once
                    continue
                seen.add(path.resolve())
                role_file = read_role_file(path)
                files.setdefault(role_file.name, []).append((layer, role_file))
        resolver = _Resolver(files, self._roles)
        for name, definitions in files.items():
            for index in range(len(definitions)):
                resolver.compile((name, index))

        roles: dict[str, CompiledRole] = {}
        sources: dict[str, RoleSource] = {}
        kept: dict[str, list[RoleError]] = {}
        warnings: list[RoleError] = []
        for name, definitions in sorted(files.items()):
            layer, role_file = definitions[-1]
            compiled = resolver.done.get((name, len(definitions) - 1))
            if compiled is None:
                if name in self._roles:
                    roles[name], sources[name] = self._roles[name], self._sources[name]
                    kept[name] = role_file.problems
                continue
            previous = self._roles.get(name)
            if previous is not None and previous.fingerprint == compiled.fingerprint:
                compiled = previous  # an unchanged role keeps its warm cache
            roles[name] = compiled
            sources[name] = RoleSource(layer.label, role_file.path, tuple(f.path for _, f in definitions[:-1]))
            warnings.extend(role_file.error(w.message, w.field) for w in compiled.warnings)

        problems = [problem for definitions in files.values() for _, f in definitions for problem in f.problems]
        problems.sort(key=lambda p: (p.path or "", p.line or 0))
        report = ReloadReport(
            added=sorted(set(roles) - set(self._roles)),
            changed=sorted(n for n in roles if n in self._roles and roles[n] is not self._roles[n]),
            removed=sorted(set(self._roles) - set(roles)),
            kept=kept,
            problems=problems,
            problems_changed=[str(p) for p in problems] != [str(p) for p in self.problems],
        )
        self._roles, self._sources, self.kept = roles, sources, kept
        self.problems, self.warnings = problems, warnings
        return report

    async def watch(
        self, *, stop_event: asyncio.Event | None = None, debounce_ms: int = 200
    ) -> AsyncIterator[ReloadReport]:
        """Reload whenever a role file changes, yielding each report that changed something.

        Watches the layer folders that exist and, for those that do not yet, their nearest existing
        ancestor (so that creating ``.polter/roles`` is noticed too).
        """
        # lazy: only a process that follows the role files loads watchfiles
        from watchfiles import awatch

        rearmed = False
        while stop_event is None or not stop_event.is_set():
            roots = self._watch_roots()
            missing = [layer.path for layer in self.layers if not layer.path.exists()]
            if rearmed and (report := self.reload()):
                yield report  # what changed between the folder appearing and watching it
            rearmed = True
            async for _changes in awatch(
                *roots,
                stop_event=stop_event,
                debounce=debounce_ms,
                recursive=False,
                watch_filter=self._relevant_change(missing),
            ):
                report = self.reload()
                if report:
                    yield report
                if any(path.exists() for path in missing):
                    break  # a layer folder appeared: watch it from now on
            else:
                return

    def _relevant_change(self, missing: list[Path]) -> Callable[[Any, str], bool]:
        """Whether a changed path can change the roles: a ``.toml`` file in a layer folder (or a layer given
        as a file), or a folder on the way to a layer that does not exist yet. Anything else written in a
        watched folder (a log, the gateway's own state) is filtered out before it wakes the watcher."""
        layers = [layer.path.absolute() for layer in self.layers]
        folders = {path for path in layers if path.is_dir()}
        files = {path for path in layers if not path.is_dir()}
        on_the_way = {ancestor for path in missing for ancestor in (path.absolute(), *path.absolute().parents)}

        def relevant(_change: Any, name: str) -> bool:
            changed = Path(name)
            return (
                (changed.suffix == ".toml" and changed.parent in folders) or changed in files or changed in on_the_way
            )

        return relevant

    def _watch_roots(self) -> list[Path]:
        roots: set[Path] = set()
        for layer in self.layers:
            path = layer.path if layer.path.is_dir() else layer.path.parent
            while not path.exists() and path != path.parent:
                path = path.parent
            roots.add(path)
        return sorted(roots)
