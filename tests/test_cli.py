"""The command line's frame: help, errors as one line with an exit code."""

from __future__ import annotations

import subprocess
import sys

import pytest

from polter import cli
from polter.cli import build_parser
from polter.errors import ConfigError


def test_help_lists_the_app_options() -> None:
    result = subprocess.run([sys.executable, "-m", "polter", "--help"], capture_output=True, text=True)
    assert result.returncode == 0
    assert "--panes" in result.stdout and "--layout" in result.stdout


def test_a_polter_error_becomes_one_line_and_its_exit_code(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    parser = build_parser()

    def fail(_args: object) -> int:
        raise ConfigError("must be a list", path="roles/x.toml", line=3, field="tools.allow")

    parser.set_defaults(handler=fail)
    monkeypatch.setattr(cli, "build_parser", lambda: parser)
    assert cli.main([]) == 2
    assert capsys.readouterr().err == "polter: roles/x.toml:3: tools.allow: must be a list\n"


@pytest.mark.parametrize("as_json", [False, True])
def test_an_empty_audit_says_so_but_json_output_stays_json(
    as_json: bool, capsys: pytest.CaptureFixture[str], tmp_path: object
) -> None:
    assert cli.main(["audit", "--state-dir", str(tmp_path), *(["--json"] if as_json else [])]) == 0
    out, err = capsys.readouterr()
    note, other = (err, out) if as_json else (out, err)
    assert note.startswith("no audit log at ") and other == ""
