"""Discovery: bundled plugins, entry points and the user's plugin folder; a broken plugin never stops the others."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from polter.adapters.plugins import (
    API_VERSION,
    AdapterRegistry,
    declared_api_version,
    discover,
    find_adapter,
    plugin_paths,
    user_plugins_dir,
)
from polter.errors import AdapterError
from polter.paths import bundled_dir

BUNDLED = {"claude-code", "codex", "gemini-cli", "qwen-code", "opencode", "shell"}

GOOD_PLUGIN = '''
from polter.adapters import Adapter, AdapterInfo, LaunchSpec, Liveness, PreparedPane

API_VERSION = 1

class {cls}(Adapter):
    info = AdapterInfo(name="{name}", display_name="{display}", command="{name}",
                       mcp_liveness=Liveness.COLD, skills_liveness=Liveness.COLD)

    def prepare(self, pane):
        return PreparedPane(launch=LaunchSpec(argv=("{name}",)))

adapter = {cls}
'''


V1 = "API_VERSION = 1\n"


def write_plugin(folder: Path, filename: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / filename
    path.write_text(textwrap.dedent(text))
    return path


def test_the_bundled_adapters_are_found(bundled: AdapterRegistry) -> None:
    assert set(bundled.loaded) == BUNDLED
    assert not bundled.errors
    assert {item.source for item in bundled} == {"bundled"}


def test_a_broken_plugin_is_reported_with_its_path_and_reason_and_the_others_load(tmp_path: Path) -> None:
    user = tmp_path / "plugins"
    broken = {
        write_plugin(user, "syntax.py", "def (:\n"): "SyntaxError",
        write_plugin(user, "raises.py", V1 + "raise SystemExit('nope')\n"): "SystemExit: nope",
        write_plugin(user, "empty.py", V1 + "x = 1\n"): "defines neither `adapter` nor `adapters`",
        write_plugin(user, "wrong_type.py", V1 + "adapter = 42\n"): "not int",
        write_plugin(user, "abstract.py", V1 + "from polter.adapters import Adapter, AdapterInfo\n"
                     "class Half(Adapter):\n    pass\nadapter = Half\n"): "does not implement prepare",
        write_plugin(user, "bad_info.py", GOOD_PLUGIN.format(cls="Bad", name="Bad Name", display="x")): "import failed",
        write_plugin(user, "no_info.py", V1 + "from polter.adapters import Adapter\n"
                     "class NoInfo(Adapter):\n    def prepare(self, pane): ...\nadapter = NoInfo\n"): "has no `info`",
        write_plugin(user, "not_a_list.py", V1 + "adapters = 5\n"): "`adapters` must be a sequence",
        write_plugin(user, "unversioned.py", GOOD_PLUGIN.format(cls="Old", name="old-cli", display="Old")
                     .replace(V1, "")): "declares no plugin API version: a plugin for this Polter starts with "
                                        "`API_VERSION = 1`",
        write_plugin(user, "computed.py", "API_VERSION = 2 - 1\n"): "API_VERSION must be an integer",
        write_plugin(user, "one_bad.py", GOOD_PLUGIN.format(cls="Fine", name="fine-cli", display="Fine")
                     + "adapters = [adapter, object()]\ndel adapter\n"): "not object",
    }
    write_plugin(user, "good.py", GOOD_PLUGIN.format(cls="Good", name="good-cli", display="Good CLI"))
    write_plugin(user / "packaged", "__init__.py", GOOD_PLUGIN.format(cls="Pkg", name="pkg-cli", display="Pkg"))
    write_plugin(user, "_private.py", "raise RuntimeError('never imported')\n")
    write_plugin(user, "test_good.py", "raise RuntimeError('never imported')\n")

    registry = discover(user=user, entry_points=False)

    assert {"good-cli", "pkg-cli"} <= set(registry.loaded)
    assert BUNDLED <= set(registry.loaded)
    reasons = {error.path: str(error) for error in registry.errors}
    assert set(reasons) == {str(path) for path in broken}
    for path, reason in broken.items():
        assert reason in reasons[str(path)], reasons[str(path)]
        assert reasons[str(path)].startswith(f"{path}: ")


def test_a_user_plugin_overrides_a_bundled_adapter_of_the_same_name(tmp_path: Path) -> None:
    user = tmp_path / "plugins"
    write_plugin(user, "my_codex.py", GOOD_PLUGIN.format(cls="MyCodex", name="codex", display="My Codex"))
    registry = discover(user=user, entry_points=False)
    assert registry.get("codex").display_name == "My Codex"
    assert registry.loaded["codex"].source == "user"
    assert [item.adapter.display_name for item in registry.overridden] == ["Codex CLI"]


def test_entry_points_are_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site"
    write_plugin(site, "acme_adapter.py", GOOD_PLUGIN.format(cls="Acme", name="acme", display="Acme"))
    dist = site / "acme_adapter-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: acme-adapter\nVersion: 1.0\n")
    write_plugin(site, "old_adapter.py", GOOD_PLUGIN.format(cls="Old", name="old", display="Old")
                 .replace(V1, "API_VERSION = 0\n"))
    (dist / "entry_points.txt").write_text(
        "[polter.adapters]\nacme = acme_adapter:adapter\nbroken = acme_adapter:missing\nold = old_adapter:adapter\n"
    )
    monkeypatch.syspath_prepend(str(site))
    registry = discover(user=tmp_path / "none")
    assert registry.loaded["acme"].source == "entry-point"
    assert registry.loaded["acme"].origin == "entry point acme = acme_adapter:adapter"
    assert "old" not in registry.loaded
    errors = {error.path: str(error) for error in registry.errors}
    assert set(errors) == {"entry point broken = acme_adapter:missing", "entry point old = old_adapter:adapter"}
    assert "written for plugin API version 0, but this Polter's is 1" in errors["entry point old = old_adapter:adapter"]
    sys.modules.pop("acme_adapter", None)
    sys.modules.pop("old_adapter", None)


def test_an_unknown_adapter_names_the_known_ones(bundled: AdapterRegistry) -> None:
    with pytest.raises(AdapterError, match=r"no adapter named 'vim' \(known: claude-code, codex, "):
        bundled.get("vim")


def test_find_adapter_prefers_the_users_plugin() -> None:
    assert find_adapter("gemini-cli").display_name == "Gemini CLI"
    assert find_adapter("qwen-code").display_name == "Qwen Code"  # lives in the Gemini family module
    write_plugin(user_plugins_dir(), "gemini_cli.py", GOOD_PLUGIN.format(cls="G", name="gemini-cli", display="Mine"))
    assert find_adapter("gemini-cli").display_name == "Mine"


def test_a_plugin_for_another_api_version_is_reported_and_never_run(tmp_path: Path) -> None:
    """Its version is read from its source: a plugin for version 2 (or 0) is not imported at all (it would
    leave a marker), and the error names its file and both versions."""
    user = tmp_path / "plugins"
    marker = tmp_path / "imported"
    runs = f"from pathlib import Path\nPath({str(marker)!r}).touch()\n"
    newer = write_plugin(user, "newer.py", GOOD_PLUGIN.format(cls="New", name="new-cli", display="New")
                         .replace(V1, "API_VERSION: int = 2\n" + runs))
    older = write_plugin(user / "older", "__init__.py", GOOD_PLUGIN.format(cls="Old", name="old-cli", display="Old")
                         .replace(V1, "API_VERSION = 0\n" + runs))

    registry = discover(user=user, entry_points=False)

    assert not marker.exists(), "a plugin written for another API version was imported"
    assert {"new-cli", "old-cli"}.isdisjoint(registry.loaded) and set(registry.loaded) == BUNDLED
    reasons = {error.path: str(error) for error in registry.errors}
    assert reasons == {
        str(newer): f"{newer}: written for plugin API version 2, but this Polter's is {API_VERSION}: not loaded "
        "(docs/adapters.md, The plugin API, says what changed)",
        str(older.parent): f"{older.parent}: written for plugin API version 0, but this Polter's is {API_VERSION}: "
        "not loaded (docs/adapters.md, The plugin API, says what changed)",
    }
    assert declared_api_version(newer) == 2 and declared_api_version(older.parent) == 0


def test_every_bundled_plugin_declares_this_api_version() -> None:
    plugins = plugin_paths(bundled_dir("plugins"))
    assert len(plugins) == 5
    assert {path.name: declared_api_version(path) for path in plugins} == {path.name: API_VERSION for path in plugins}
