"""The suite's order (``support/order.py``): the long modules first, each module's tests together and in order."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.order import SECONDS, longest_first

ROOT = Path(__file__).resolve().parents[1]


class Item:
    """What ``longest_first`` reads of a collected test: its node id."""

    def __init__(self, nodeid: str) -> None:
        self.nodeid = nodeid


def test_every_weighed_module_exists() -> None:
    """A module renamed or removed must leave the table too, or its weight orders nothing."""
    assert [name for name in SECONDS if not (ROOT / name).is_file()] == []


def test_the_longest_modules_come_first_and_each_modules_tests_stay_together_in_order() -> None:
    short_a, short_b = "tests/test_paths.py", "tests/test_errors.py"
    longest, shorter = sorted([name for name in SECONDS][:2], key=lambda name: -SECONDS[name])
    ids = [
        f"{short_a}::a",
        f"{short_a}::b",
        f"{shorter}::x",
        f"{short_b}::c",
        f"{longest}::y[1]",
        f"{longest}::y[2]",
        f"{shorter}::z",
    ]
    ordered = [item.nodeid for item in longest_first([Item(nodeid) for nodeid in ids])]  # type: ignore[misc]
    assert ordered == [
        f"{longest}::y[1]",
        f"{longest}::y[2]",
        f"{shorter}::x",
        f"{shorter}::z",
        f"{short_a}::a",
        f"{short_a}::b",
        f"{short_b}::c",
    ]


def test_the_suite_runs_in_that_order(request: pytest.FixtureRequest) -> None:
    """The root conftest applied it: the collected modules are ordered by their weights."""
    weights = [SECONDS.get(item.nodeid.split("::", 1)[0], 0) for item in request.session.items]
    assert weights == sorted(weights, reverse=True)
