"""What the code imports is what ``pyproject.toml`` declares.

A package imported but not declared works only while some other dependency happens to pull it in (``httpx2``
came with ``mcp``); a package declared but never imported is weight and a false lead (``ptyprocess`` was).
"""

from __future__ import annotations

import ast
import sys
import tomllib
from collections.abc import Iterable
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]

NOT_IMPORTED = {
    "httptools": "uvicorn's HTTP parser, which uvicorn loads by itself when it is installed",
}
"""Runtime dependencies nothing imports by name, each with the reason it is declared."""


def declared(requirements: Iterable[str]) -> set[str]:
    return {canonicalize_name(Requirement(requirement).name) for requirement in requirements}


def third_party_imports(*folders: str) -> dict[str, set[str]]:
    """Top-level modules imported (absolutely) by the Python files under ``folders`` that are neither the
    standard library, Polter, nor a module of those folders (tests import their helpers by name)."""
    files = [path for folder in folders for path in (ROOT / folder).rglob("*.py") if ".venv" not in path.parts]
    local = {part for path in files for part in path.relative_to(ROOT).with_suffix("").parts} | {"polter", "__future__"}
    found: dict[str, set[str]] = {}
    for path in files:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.Import):
                modules = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                modules = [node.module]
            else:
                continue
            for module in modules:
                top = module.partition(".")[0]
                if top not in sys.stdlib_module_names and top not in local:
                    found.setdefault(top, set()).add(str(path.relative_to(ROOT)))
    return found


def distributions(modules: dict[str, set[str]]) -> dict[str, set[str]]:
    """The installed distribution (canonical name) providing each module, with the files importing it."""
    providers = packages_distributions()
    found: dict[str, set[str]] = {}
    for module, files in modules.items():
        names = providers.get(module)
        assert names, f"{module} is imported by {sorted(files)} but no installed distribution provides it"
        for name in names:
            found.setdefault(canonicalize_name(name), set()).update(files)
    return found


def test_every_package_polter_and_the_plugins_import_is_a_declared_dependency() -> None:
    used = distributions(third_party_imports("polter", "plugins"))
    missing = {name: sorted(files)[:3] for name, files in used.items() if name not in declared(PROJECT["dependencies"])}
    assert not missing, f"imported but not in [project].dependencies of pyproject.toml: {missing}"


def test_every_declared_dependency_is_imported_or_says_why_not() -> None:
    used = set(distributions(third_party_imports("polter", "plugins")))
    unused = declared(PROJECT["dependencies"]) - used - set(NOT_IMPORTED)
    assert not unused, f"declared in pyproject.toml but imported nowhere in polter/ or plugins/: {sorted(unused)}"
    imported_after_all = used & set(NOT_IMPORTED)
    assert not imported_after_all, f"now imported, so drop them from NOT_IMPORTED: {sorted(imported_after_all)}"


def test_tests_benchmarks_and_screenshots_import_only_declared_packages() -> None:
    allowed = declared(PROJECT["dependencies"]) | declared(PROJECT["optional-dependencies"]["dev"])
    used = distributions(third_party_imports("tests", "benchmarks", "screenshots"))
    missing = {name: sorted(files)[:3] for name, files in used.items() if name not in allowed}
    assert not missing, f"imported but declared neither as a dependency nor in the dev extra: {missing}"


@pytest.mark.parametrize("source", ["import ptyprocess", "from wcwidth import width", "import mcp.server.lowlevel"])
def test_the_import_scan_sees_each_form_of_import(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source: str) -> None:
    (tmp_path / "scanned").mkdir()
    (tmp_path / "scanned" / "module.py").write_text(f"{source}\nfrom . import sibling\nimport json\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    assert set(third_party_imports("scanned")) == {source.split()[1].partition(".")[0]}
