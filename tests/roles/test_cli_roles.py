"""``polter roles list | check | explain``, through ``polter.cli.main`` and once as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from polter.cli import main

from .conftest import RoleDir


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


class TestList:
    def test_lists_each_role_with_its_layer_file_and_description(self, capsys: pytest.CaptureFixture[str]) -> None:
        code, out, _ = run(capsys, "roles", "list")
        assert code == 0
        lines = {line.split()[0]: line for line in out.splitlines()}
        assert set(lines) >= {"coder", "researcher", "reviewer", "ops", "terraria-admin"}
        assert "bundled" in lines["coder"] and "coder.toml" in lines["coder"]
        assert "Everything allowed; destructive tools ask the human first" in lines["coder"]
        assert "(extends terraria-researcher)" in lines["terraria-moderator"]

    def test_shows_overrides_problems_and_last_good_versions(
        self, capsys: pytest.CaptureFixture[str], isolated_dirs: dict[str, Path]
    ) -> None:
        user = RoleDir(isolated_dirs["config"] / "roles")
        user.write("coder", 'description = "my coder"\n')
        user.write("broken", "[tools\n")
        code, out, _ = run(capsys, "roles", "list")
        assert code == 0
        coder = next(line for line in out.splitlines() if line.startswith("coder "))
        assert " user " in coder and "my coder" in coder and "overrides" in coder
        assert out.splitlines()[-1].endswith(
            "broken.toml:1: invalid TOML: Expected ']' at the end of a table declaration (column 7)"
        )

    def test_json(self, capsys: pytest.CaptureFixture[str]) -> None:
        code, out, _ = run(capsys, "roles", "list", "--json")
        data = json.loads(out)
        assert code == 0 and data["problems"] == []
        coder = next(row for row in data["roles"] if row["name"] == "coder")
        assert coder["layer"] == "bundled" and coder["path"].endswith("coder.toml")


class TestCheck:
    def test_valid_files_exit_0(self, capsys: pytest.CaptureFixture[str], role_dir: RoleDir) -> None:
        role_dir.write("a", '[tools]\ndefault = "allow"\n')
        role_dir.write("b", 'extends = "coder"\n')  # a bundled role: extends resolve as they will at run time
        assert run(capsys, "roles", "check", "roles") == (0, "ok: 2 role files checked\n", "")

    def test_every_problem_is_printed_as_file_line_field_message_and_exit_is_1(
        self, capsys: pytest.CaptureFixture[str], role_dir: RoleDir
    ) -> None:
        role_dir.write("a", '[tools]\ndefault = "alow"\ndeny = ["x"]\n')
        role_dir.write("b", 'extends = "nobody"\n')
        role_dir.write("c", "")
        code, out, _ = run(
            capsys, "roles", "check", "roles/a.toml", "roles/b.toml", "roles/c.toml", "roles/missing.toml"
        )
        assert code == 1
        assert out.splitlines() == [
            "roles/missing.toml: no such file or folder",
            "roles/a.toml:2: tools.default: must be 'allow', 'ask' or 'deny', not 'alow'",
            "roles/a.toml:3: tools.deny: 'x': a tool pattern is server/tool (write \"x/*\" for every tool of it)",
            out.splitlines()[3],
            "4 problems (3 role files checked)",
        ]
        assert out.splitlines()[3].startswith("roles/b.toml:1: extends: unknown role 'nobody' (known: a, b, c, coder, ")

    def test_warnings_are_printed_but_do_not_fail(self, capsys: pytest.CaptureFixture[str], role_dir: RoleDir) -> None:
        role_dir.write("a", '[servers]\ndefault = "allow"\ndeny = ["polter"]\n')
        assert run(capsys, "roles", "check", "roles") == (
            0,
            'roles/a.toml:3: servers.deny: warning: "polter" is ignored for polter/*: Polter\'s floor tools are always allowed\n'
            "ok: 1 role file checked\n",
            "",
        )

    def test_without_paths_checks_every_place_roles_load_from(
        self, capsys: pytest.CaptureFixture[str], isolated_dirs: dict[str, Path]
    ) -> None:
        assert run(capsys, "roles", "check")[0] == 0
        RoleDir(isolated_dirs["config"] / "roles").write("bad", "nope\n")
        code, out, _ = run(capsys, "roles", "check")
        assert code == 1 and "bad.toml:1: invalid TOML:" in out


class TestExplain:
    def test_text_output(self, capsys: pytest.CaptureFixture[str]) -> None:
        code, out, _ = run(capsys, "roles", "explain", "coder", "github/delete_repo", "--destructive")
        assert code == 0
        lines = out.splitlines()
        assert lines[0].startswith("github/delete_repo under the role coder (bundled: ")
        assert lines[1:4] == ["phase:    action (the role has no phases)", "listed:   yes", "decision: ask"]
        assert lines[4].startswith('rule:     tools.ask["@destructive"] (') and lines[4].endswith("coder.toml)")
        assert (
            lines[5]
            == 'reason:   The role coder asks the human before each use of github/delete_repo: it matches "@destructive" in tools.ask.'
        )

    def test_json_is_one_object(self, capsys: pytest.CaptureFixture[str]) -> None:
        code, out, _ = run(capsys, "roles", "explain", "terraria-admin", "terraria/world_hardmode", "--json")
        verdict = json.loads(out)
        assert code == 0 and list(verdict) == ["decision", "rule", "reason"]
        assert verdict["decision"] == "deny" and verdict["rule"].startswith('gates["terraria/world_hardmode"]')
        code, out, _ = run(
            capsys,
            "roles",
            "explain",
            "terraria-admin",
            "terraria/world_hardmode",
            "--destructive",
            "--input",
            "开启困难模式",
            "--json",
        )
        assert json.loads(out)["decision"] == "ask"

    def test_phase_and_annotations(self, capsys: pytest.CaptureFixture[str]) -> None:
        research = json.loads(
            run(capsys, "roles", "explain", "reviewer", "github/add_comment", "--no-destructive", "--json")[1]
        )
        assert research["decision"] == "deny" and research["rule"].startswith("phases.research")
        action = [
            "roles",
            "explain",
            "reviewer",
            "github/add_comment",
            "--no-destructive",
            "--phase",
            "action",
            "--json",
        ]
        assert json.loads(run(capsys, *action)[1])["decision"] == "ask"
        read = json.loads(run(capsys, "roles", "explain", "reviewer", "github/get_diff", "--read-only", "--json")[1])
        assert read["decision"] == "allow"

    def test_servers_and_skills(self, capsys: pytest.CaptureFixture[str]) -> None:
        server = json.loads(
            run(capsys, "roles", "explain", "terraria-admin", "github", "--kind", "server", "--json")[1]
        )
        assert (server["decision"], server["rule"].split(" ")[0]) == ("deny", "servers.default")
        skill = json.loads(run(capsys, "roles", "explain", "researcher", "git-commit", "--kind", "skill", "--json")[1])
        assert skill["decision"] == "deny"

    def test_a_role_file_path(self, capsys: pytest.CaptureFixture[str], role_dir: RoleDir) -> None:
        role_dir.write("strict", 'extends = "coder"\n[tools]\ndeny = ["github/*"]\n')
        verdict = json.loads(
            run(capsys, "roles", "explain", "roles/strict.toml", "github/search", "--read-only", "--json")[1]
        )
        assert verdict == {
            "decision": "deny",
            "rule": 'tools.deny["github/*"] (roles/strict.toml)',
            "reason": 'The role strict denies github/search: it matches "github/*" in tools.deny.',
        }

    def test_errors(self, capsys: pytest.CaptureFixture[str], role_dir: RoleDir) -> None:
        code, _, err = run(capsys, "roles", "explain", "nobody", "a/b")
        assert code == 2 and err.startswith("polter: unknown role 'nobody' (known: coder, ")
        code, _, err = run(capsys, "roles", "explain", "coder", "github")
        assert (code, err) == (
            2,
            "polter: 'github': name the tool as SERVER/TOOL (or pass --kind server or --kind skill)\n",
        )
        role_dir.write("bad", "[tools\n")
        code, _, err = run(capsys, "roles", "explain", "roles/bad.toml", "a/b")
        assert code == 2 and err.startswith("polter: the role 'bad' cannot be loaded: roles/bad.toml:1: invalid TOML:")


def test_a_real_process_checks_and_explains(role_dir: RoleDir) -> None:
    role_dir.write("bad", '[skills]\ndefault = "allow"\ndeny = ["@read-only"]\n')
    check = subprocess.run([sys.executable, "-m", "polter", "roles", "check", "roles"], capture_output=True, text=True)
    assert check.returncode == 1
    assert check.stdout.splitlines()[0] == (
        "roles/bad.toml:3: skills.deny: '@read-only': selectors match tool annotations and belong in tools.*"
    )
    explain = subprocess.run(
        [sys.executable, "-m", "polter", "roles", "explain", "terraria-moderator", "terraria/player_kick", "--json"],
        capture_output=True,
        text=True,
    )
    assert explain.returncode == 0, explain.stderr
    assert json.loads(explain.stdout)["decision"] == "ask"


def test_explain_judges_a_shell_command_or_a_path(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = run(capsys, "roles", "explain", "researcher", "--kind", "shell", "ls && git push origin main")
    assert code == 0 and "decision: ask" in out and "runs:     ls; git push origin main" in out
    assert "protected (no role can open" in out and ".git/hooks *" in out
    code, out, _ = run(
        capsys,
        "roles",
        "explain",
        "coder",
        "--kind",
        "write",
        "a/../.git/hooks/pre-commit",
        "--project",
        str(tmp_path),
        "--json",
    )
    verdict = json.loads(out)
    assert code == 0 and (verdict["decision"], verdict["rule"]) == ("deny", "protected")
    code, out, _ = run(capsys, "roles", "explain", "reviewer", "--kind", "shell", "gh pr merge 3", "--json")
    assert json.loads(out)["decision"] == "deny"
    code, out, _ = run(
        capsys, "roles", "explain", "researcher", "--kind", "shell", "find . -fprint found.txt", "--json"
    )
    assert json.loads(out)["decision"] == "deny", out  # the researcher writes nothing, not even through find
