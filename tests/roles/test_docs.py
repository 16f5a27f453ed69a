"""docs/roles.md shows real output: its explain example is re-run here."""

from __future__ import annotations

from pathlib import Path

import pytest

from polter.cli import main

ROOT = Path(__file__).resolve().parents[2]


def test_the_explain_example_in_the_docs_is_what_polter_prints(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ROOT)  # paths print relative to the working directory, as in the docs
    docs = (ROOT / "docs" / "roles.md").read_text(encoding="utf-8")
    command = "$ polter roles explain coder github/delete_repo --destructive\n"
    shown = docs.split(command, 1)[1].split("```", 1)[0]
    assert main(["roles", "explain", "coder", "github/delete_repo", "--destructive"]) == 0
    assert capsys.readouterr().out == shown


def test_every_bundled_role_is_in_the_docs_table() -> None:
    docs = (ROOT / "docs" / "roles.md").read_text(encoding="utf-8")
    for path in sorted((ROOT / "roles").glob("*.toml")):
        assert f"| `{path.stem}` |" in docs
