"""A role's write rules as the kernel can hold them (pure), and the rules it cannot hold refused with their line."""

from __future__ import annotations

from pathlib import Path

from polter.roles.library import RoleLibrary
from polter.sandbox.rules import FolderRule, WriteRules, kernel_problems, write_rules

PROJECT, HOME = "/home/u/app", "/home/u"


def rules(default: str, *pairs: tuple[str, str]) -> WriteRules:
    return write_rules(default, list(pairs), project=PROJECT, home=HOME)  # type: ignore[arg-type]


def test_the_bundled_roles_shapes() -> None:
    # researcher, reviewer: write denied outright
    assert rules("ask", ("write", "deny")) == WriteRules(project=False, home=False, folders=())
    # coder: everything, writing outside asks (the hook asks; the kernel lets the answer take effect)
    assert rules("allow", ("write(@outside)", "ask")) == WriteRules(project=True, home=True, folders=())
    # a role that writes the project only
    assert rules("allow", ("write(@outside)", "deny")) == WriteRules(project=True, home=False, folders=())


def test_folders_anchor_like_the_engine_and_deny_wins() -> None:
    found = rules(
        "deny",
        ("write(docs/**)", "allow"),
        ("write(~/.cache/**)", "ask"),
        ("write(/srv/data/)", "allow"),
        ("write(docs/private/**)", "deny"),
    )
    assert found.project is False and found.home is False
    assert found.folders == (
        FolderRule("/srv/data", True, "write(/srv/data/)"),
        FolderRule("/home/u/.cache", True, "write(~/.cache/**)"),
        FolderRule("/home/u/app/docs", True, "write(docs/**)"),
        FolderRule("/home/u/app/docs/private", False, "write(docs/private/**)"),
    )
    # an allowed folder under a denied one stays denied: deny always wins
    assert rules("allow", ("write(src/**)", "deny"), ("write(src/gen/**)", "allow")).folders[1] == FolderRule(
        "/home/u/app/src/gen", False, "write(src/gen/**)"
    )
    # a bare write deny wins over every folder
    assert all(not folder.writable for folder in rules("allow", ("write", "deny"), ("write(x/**)", "allow")).folders)


def test_file_patterns_cannot_be_held() -> None:
    problems = kernel_problems([("write(*.md)", "deny"), ("write(src/*/gen/**)", "allow"), ("write(src/**)", "allow")])
    assert [pattern for pattern, _decision, _why in problems] == ["write(*.md)", "write(src/*/gen/**)"]
    assert "by folder" in problems[0][2]


def test_roles_check_refuses_a_role_the_sandbox_cannot_hold_with_its_line(tmp_path: Path) -> None:
    folder = tmp_path / "roles"
    folder.mkdir()
    (folder / "careful.toml").write_text(
        'description = "x"\n\n[builtins]\ndefault = "allow"\ndeny = [\n  "write(src/**)",\n  "write(**/*.env)",\n]\n'
    )
    library = RoleLibrary.load([folder])
    assert [str(problem) for problem in library.problems] == [
        f'{folder / "careful.toml"}:7: builtins.deny: "write(**/*.env)": the sandbox holds writes by folder, not '
        'by file pattern; name a folder ("write(DIR/**)") or drop the rule'
    ]


def test_the_users_own_cli_settings_are_protected_beside_the_panes(tmp_path: Path) -> None:
    """What Polter writes as a CLI's config in its home (Codex's config.toml) has a counterpart the human's own
    sessions read (``~/.codex/config.toml``): a pane whose role writes the home must still not write that one."""
    from polter.adapters import PaneToPrepare
    from polter.adapters.plugins import discover
    from polter.host.confined import user_configs

    home = tmp_path / "home"
    home.mkdir()
    codex = discover(entry_points=False).get("codex")
    pane = PaneToPrepare(
        pane_id="p1", gateway_url="http://127.0.0.1:9", runtime_dir=tmp_path / "runtime", cwd=tmp_path, home=home
    )
    assert home / ".codex" / "config.toml" in user_configs(codex.prepare(pane))
