"""Fixtures for the gateway tests (the harness itself is in ``support/gateway.py``)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from support.gateway import Harness, start_gateway


@pytest.fixture
async def harness(tmp_path: Path) -> AsyncIterator[Harness]:
    """A gateway managing the fixture server, with the test roles."""
    async with start_gateway(tmp_path) as started:
        yield started
