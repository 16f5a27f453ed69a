"""Finding adapter plugins: the bundled ``plugins/`` folder, the ``polter.adapters`` entry points, and the
user's plugin folder (``<config dir>/plugins``), later sources overriding earlier ones by adapter name.

A plugin is a ``.py`` file or a package folder whose module declares the plugin API version it was
written for (``API_VERSION = 1``) and defines ``adapter`` (an :class:`Adapter` instance or subclass) or
``adapters`` (a sequence of them, for a family of similar CLIs). An entry point names an adapter the same
way (``name = "pkg.module:adapter"``), its module declaring ``API_VERSION`` too.
A plugin written for another version of the API is not run at all: a file's version is read from its
source before it is imported (an entry point's module from the module, before its adapter is touched).
A plugin that fails to import, was written for another version or breaks the contract becomes an
:class:`AdapterLoadError` naming its path and the reason; the others still load.
"""

from __future__ import annotations

import ast
import hashlib
import importlib
import importlib.util
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from pathlib import Path
from types import ModuleType
from typing import Literal

from polter.adapters._contract import API_VERSION, Adapter
from polter.errors import AdapterError, AdapterLoadError
from polter.paths import bundled_dir, config_dir

__all__ = [
    "API_VERSION",
    "ENTRY_POINT_GROUP",
    "AdapterRegistry",
    "LoadedAdapter",
    "declared_api_version",
    "discover",
    "find_adapter",
    "load_plugin",
    "plugin_paths",
    "user_plugins_dir",
]

ENTRY_POINT_GROUP = "polter.adapters"

Source = Literal["bundled", "entry-point", "user"]


@dataclass(frozen=True)
class LoadedAdapter:
    """An adapter and where it was found."""

    adapter: Adapter
    source: Source
    origin: str
    """The plugin's file, or the entry point (``name = module:attr``)."""


@dataclass
class AdapterRegistry:
    """The adapters found, by name, and the plugins that could not be loaded."""

    loaded: dict[str, LoadedAdapter] = field(default_factory=dict)
    errors: list[AdapterLoadError] = field(default_factory=list)
    overridden: list[LoadedAdapter] = field(default_factory=list)
    """Adapters replaced by a later source with the same name (a user's plugin over a bundled one)."""

    def add(self, adapter: Adapter, source: Source, origin: str) -> None:
        previous = self.loaded.get(adapter.name)
        if previous is not None:
            self.overridden.append(previous)
        self.loaded[adapter.name] = LoadedAdapter(adapter, source, origin)

    def get(self, name: str) -> Adapter:
        try:
            return self.loaded[name].adapter
        except KeyError:
            known = ", ".join(sorted(self.loaded)) or "none"
            raise AdapterError(f"no adapter named {name!r} (known: {known})") from None

    def __iter__(self) -> Iterator[LoadedAdapter]:
        return iter(sorted(self.loaded.values(), key=lambda item: item.adapter.name))

    def __len__(self) -> int:
        return len(self.loaded)


def user_plugins_dir() -> Path:
    return config_dir() / "plugins"


def plugin_paths(folder: Path) -> list[Path]:
    """The plugins in a folder: ``*.py`` files and package folders, skipping ``_private`` and ``test_`` ones."""
    if not folder.is_dir():
        return []
    found = []
    for path in sorted(folder.iterdir()):
        if path.name.startswith(("_", ".", "test_")):
            continue
        if (path.suffix == ".py" and path.is_file()) or (path / "__init__.py").is_file():
            found.append(path)
    return found


def _module_name(path: Path, source: Source) -> str:
    """A unique module name per plugin path, so two folders' ``good.py`` never share a module."""
    stem = path.stem if path.suffix == ".py" else path.name
    digest = hashlib.sha1(str(path.resolve()).encode()).hexdigest()[:10]
    return f"polter_plugins.{source.replace('-', '_')}.{re.sub(r'[^0-9A-Za-z_]', '_', stem)}_{digest}"


def _import_file(path: Path, source: Source) -> ModuleType:
    """Execute the plugin afresh (an edited plugin is picked up by the next discovery)."""
    name = _module_name(path, source)
    if path.is_dir():
        spec = importlib.util.spec_from_file_location(
            name, path / "__init__.py", submodule_search_locations=[str(path)]
        )
    else:
        spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError("not an importable Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # pydantic and dataclasses look their module up while the plugin runs
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


def _as_adapter(obj: object, where: str) -> Adapter:
    """Check the contract: an Adapter instance (or a subclass we can instantiate) with valid info."""
    if isinstance(obj, type) and issubclass(obj, Adapter):
        cls = obj
        if getattr(cls, "__abstractmethods__", None):
            missing = ", ".join(sorted(cls.__abstractmethods__))
            raise AdapterLoadError(f"{cls.__name__} does not implement {missing}", path=where)
        try:
            obj = cls()
        except Exception as exc:
            raise AdapterLoadError(f"{cls.__name__}() failed: {exc}", path=where) from exc
    if not isinstance(obj, Adapter):
        raise AdapterLoadError(
            f"an adapter must be a polter.adapters.Adapter (instance or subclass), not {type(obj).__name__}",
            path=where,
        )
    if not hasattr(type(obj), "info"):
        raise AdapterLoadError(f"{type(obj).__name__} has no `info` (an AdapterInfo)", path=where)
    return obj


def declared_api_version(path: Path) -> int | None:
    """The plugin API version a plugin file (or package) declares, read from its source without running it:
    a top-level ``API_VERSION = <integer>``. ``None`` when it declares none.

    Raises:
        AdapterLoadError: the source cannot be read or parsed.
    """
    source_file = path / "__init__.py" if path.is_dir() else path
    try:
        tree = ast.parse(source_file.read_bytes(), filename=str(source_file))
    except (OSError, SyntaxError, ValueError) as exc:
        raise AdapterLoadError(f"import failed: {type(exc).__name__}: {exc}", path=path) from exc
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign) and node.value is not None:
            target, value = node.target, node.value
        else:
            continue
        if isinstance(target, ast.Name) and target.id == "API_VERSION":
            if isinstance(value, ast.Constant) and type(value.value) is int:
                return value.value
            raise AdapterLoadError("API_VERSION must be an integer, e.g. API_VERSION = 1", path=path)
    return None


def _check_api_version(declared: object, where: str | Path) -> None:
    """Refuse a plugin written for another version of the plugin API (or that says none)."""
    if declared is None:
        raise AdapterLoadError(
            f"declares no plugin API version: a plugin for this Polter starts with `API_VERSION = {API_VERSION}` "
            "(docs/adapters.md, The plugin API)",
            path=where,
        )
    if declared != API_VERSION:
        raise AdapterLoadError(
            f"written for plugin API version {declared}, but this Polter's is {API_VERSION}: not loaded "
            "(docs/adapters.md, The plugin API, says what changed)",
            path=where,
        )


def load_plugin(path: Path, source: Source = "user") -> list[Adapter]:
    """Import one plugin file or package and return its adapters, or raise AdapterLoadError saying why
    (a plugin written for another version of the plugin API is not imported at all)."""
    _check_api_version(declared_api_version(path), path)
    try:
        module = _import_file(path, source)
    except BaseException as exc:  # a plugin's import may raise anything, even SystemExit
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise AdapterLoadError(f"import failed: {type(exc).__name__}: {exc}", path=path) from exc
    if hasattr(module, "adapter"):
        objects = [module.adapter]
    elif hasattr(module, "adapters"):
        try:
            objects = list(module.adapters)
        except TypeError as exc:
            raise AdapterLoadError(f"`adapters` must be a sequence of adapters ({exc})", path=path) from exc
    else:
        raise AdapterLoadError("defines neither `adapter` nor `adapters` (Adapter instances or subclasses)", path=path)
    return [_as_adapter(obj, str(path)) for obj in objects]


def _load_folder(registry: AdapterRegistry, folder: Path, source: Source) -> None:
    for path in plugin_paths(folder):
        try:
            for adapter in load_plugin(path, source):
                registry.add(adapter, source, str(path))
        except AdapterLoadError as exc:
            registry.errors.append(exc)


def _load_entry_points(registry: AdapterRegistry, name: str | None = None) -> None:
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        if name is not None and entry.name != name:
            continue
        where = f"entry point {entry.name} = {entry.value}"
        try:
            _check_api_version(getattr(importlib.import_module(entry.module), "API_VERSION", None), where)
            obj = entry.load()
            registry.add(_as_adapter(obj, where), "entry-point", where)
        except AdapterLoadError as exc:
            registry.errors.append(exc)
        except Exception as exc:
            registry.errors.append(AdapterLoadError(f"import failed: {type(exc).__name__}: {exc}", path=where))


def discover(*, bundled: Path | None = None, user: Path | None = None, entry_points: bool = True) -> AdapterRegistry:
    """Load every adapter: bundled, then entry points, then the user's (each may override the ones before)."""
    registry = AdapterRegistry()
    _load_folder(registry, bundled if bundled is not None else bundled_dir("plugins"), "bundled")
    if entry_points:
        _load_entry_points(registry)
    _load_folder(registry, user if user is not None else user_plugins_dir(), "user")
    return registry


def find_adapter(name: str) -> Adapter:
    """One adapter by name, importing as little as possible (``polter hook`` runs on every tool call).

    Tries, in order of precedence, the user's plugin named after the adapter, an entry point of that
    name and the bundled plugin named after it; only then loads everything.
    """
    stem = name.replace("-", "_")
    places: tuple[tuple[Path | None, Source], ...] = (
        (user_plugins_dir(), "user"),
        (None, "entry-point"),
        (bundled_dir("plugins"), "bundled"),
    )
    for folder, source in places:
        if folder is None:
            registry = AdapterRegistry()
            _load_entry_points(registry, name)
            if name in registry.loaded:
                return registry.loaded[name].adapter
            continue
        for candidate in (folder / f"{stem}.py", folder / stem):
            if candidate.is_file() or (candidate / "__init__.py").is_file():
                try:
                    adapters = load_plugin(candidate, source)
                except AdapterLoadError:
                    continue
                for adapter in adapters:
                    if adapter.name == name:
                        return adapter
    return discover().get(name)
