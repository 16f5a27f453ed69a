"""The plugin API is exactly what docs/adapters.md lists (the list is read from the page, so the two cannot
drift), holds none of Polter's own machinery, and is all the bundled plugins use of Polter."""

from __future__ import annotations

import ast
import re
import types
from pathlib import Path

import polter.adapters
import polter.adapters.plugins

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "adapters.md"


def documented_names() -> list[str]:
    """The backticked names between the page's ``<!-- plugin-api -->`` markers."""
    text = DOC.read_text()
    match = re.search(r"<!-- plugin-api -->\n(.*?)<!-- /plugin-api -->", text, re.S)
    assert match is not None, f"{DOC} has no <!-- plugin-api --> list"
    return re.findall(r"`([A-Za-z_][A-Za-z0-9_]*)`", match.group(1))


def test_the_exported_names_are_exactly_the_documented_ones() -> None:
    documented = documented_names()
    assert len(documented) == len(set(documented)), "a name is listed twice"
    assert sorted(polter.adapters.__all__) == sorted(documented)
    public = {
        name
        for name, value in vars(polter.adapters).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert public == set(documented), "polter.adapters defines a public name its __all__ does not export"


def test_the_plugin_api_holds_none_of_the_hosts_machinery() -> None:
    for name in ("AdapterRegistry", "discover", "find_adapter", "load_plugin", "RuntimeDir", "write_pane_files"):
        assert name in polter.adapters.plugins.__all__
        assert not hasattr(polter.adapters, name), f"polter.adapters exports the host's {name}"
    assert set(polter.adapters.__all__).isdisjoint(polter.adapters.plugins.__all__)


def test_the_bundled_plugins_import_only_the_documented_api() -> None:
    documented = set(documented_names())
    plugins = sorted((ROOT / "plugins").glob("*.py"))
    assert len(plugins) == 5
    for plugin in plugins:
        for node in ast.walk(ast.parse(plugin.read_text())):
            if isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "polter":
                assert node.module == "polter.adapters", f"{plugin.name} imports {node.module}"
                assert {alias.name for alias in node.names} <= documented, plugin.name
            elif isinstance(node, ast.Import):
                assert all(alias.name.split(".")[0] != "polter" for alias in node.names), plugin.name
