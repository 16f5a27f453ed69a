"""The order the suite's modules run in: the longest first, so that under ``--dist worksteal`` the last tests
either worker runs are short ones (a long module left for last keeps one core busy while the other waits).

``SECONDS`` is each slow module's share of a whole run (the sum of its tests' durations in a ``--durations``
profile of ``make test``, in seconds, rounded); only the relative sizes matter. A module not listed counts as
short and keeps its place among the other short ones; a module's own tests keep their order, so a fixture
shared by a module's tests is set up once per worker as before.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest

SECONDS = {
    "tests/adapters/e2e/test_state_kept.py": 400,
    "tests/adapters/e2e/test_gateway_e2e.py": 220,
    "tests/worktrees/test_session.py": 190,
    "tests/adapters/e2e/test_kernel_sandbox_e2e.py": 145,
    "tests/host/test_team.py": 130,
    "tests/adapters/e2e/test_elicitation_e2e.py": 110,
    "tests/adapters/e2e/test_builtins_e2e.py": 100,
    "tests/window/test_workspace_screen.py": 100,
    "tests/gateway/test_fuzz.py": 80,
    "tests/host/test_daemon.py": 65,
    "tests/adapters/e2e/test_opencode_state.py": 65,
    "tests/window/test_e2e_four_panes.py": 65,
    "tests/adapters/e2e/test_config_checked.py": 60,
    "tests/window/test_palette_commands.py": 45,
    "tests/wire/test_remote.py": 45,
    "tests/adapters/e2e/test_team_e2e.py": 40,
    "tests/window/test_e2e_demo.py": 30,
    "tests/terminal/test_native.py": 30,
    "tests/gateway/test_conformance.py": 30,
    "tests/window/test_multiplexer.py": 25,
    "tests/gateway/test_process.py": 20,
    "tests/window/test_attention.py": 20,
    "tests/test_lint.py": 20,
    "tests/gateway/test_load.py": 20,
    "tests/adapters/e2e/test_fail_closed.py": 15,
    "tests/host/test_desktop.py": 15,
    "tests/adapters/e2e/test_sandbox_e2e.py": 15,
}


def module_of(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def longest_first(items: Sequence[pytest.Item]) -> list[pytest.Item]:
    """``items`` with the modules in ``SECONDS`` first, longest first; the rest after, in their order. A module's
    tests stay together and in their order."""
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        first.setdefault(module_of(item), index)
    return sorted(items, key=lambda item: (-SECONDS.get(module_of(item), 0), first[module_of(item)]))
