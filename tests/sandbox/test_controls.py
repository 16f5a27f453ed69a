"""From inside a pane, ``polter`` acts only as that pane: the controls are refused with a message saying why."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

COMMANDS = [
    ["panes", "set-role", "p3", "ops"],
    ["panes", "input", "p4", "please deploy now"],
    ["panes", "list"],
    ["asks", "list"],
    ["audit"],
    ["servers", "reload"],
    ["attach"],
    ["ls"],
    ["kill", "main"],
]


@pytest.mark.parametrize("command", COMMANDS, ids=lambda command: " ".join(command[:2]))
def test_the_controls_are_refused_inside_a_pane(command: list[str]) -> None:
    env = {**os.environ, "POLTER_SANDBOX": "1", "POLTER_TOKEN": "x" * 43}
    done = subprocess.run(
        [sys.executable, "-m", "polter", *command], env=env, capture_output=True, text=True, timeout=60
    )
    assert done.returncode != 0, done.stdout
    assert "inside a pane's sandbox" in done.stderr and "the human's" in done.stderr, done.stderr
