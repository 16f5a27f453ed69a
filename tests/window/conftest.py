"""UI fixtures: a snapshot that does not match says, in the test's own failure, which screen lines differ.

pytest-textual-snapshot writes its HTML report only on the machine that ran the tests; on CI that
report is gone, so the failure message must carry the difference itself.
"""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import pytest
from pytest_textual_snapshot import node_to_report_path
from support.snapshots import mismatch


@pytest.fixture
def snap_compare(snap_compare: Callable[..., bool], request: pytest.FixtureRequest) -> Callable[..., bool]:
    """pytest-textual-snapshot's ``snap_compare``, failing with the screen's difference as text."""

    def compare(*args: Any, **kwargs: Any) -> bool:
        if snap_compare(*args, **kwargs) or request.config.getoption("--snapshot-update"):
            return True
        _, expected, actual, *_ = pickle.loads(node_to_report_path(request.node).read_bytes())
        raise AssertionError(f"the screen differs from its snapshot:\n{mismatch(str(expected), str(actual))}")

    return compare
