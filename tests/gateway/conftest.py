"""Fixtures for the gateway tests (the harness itself is in ``support/gateway.py``).

``harness`` is shared by the tests of a module (an upstream process takes a second to start): each
test registers its own panes, so they cannot see each other. Modules using it run their tests in
the module's event loop (``pytestmark = pytest.mark.asyncio(loop_scope="module")``). Tests that
change what the gateway shares (role files, upstream processes, options) start their own with
``start_gateway``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from support.gateway import Harness, start_gateway


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def harness(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Harness]:
    """A gateway managing the fixture server, with the test roles, shared by the module's tests."""
    async with start_gateway(tmp_path_factory.mktemp("gateway")) as started:
        yield started


@pytest_asyncio.fixture(loop_scope="module")
async def own_harness(tmp_path) -> AsyncIterator[Harness]:  # type: ignore[no-untyped-def]
    """A gateway of the test's own, for tests that change role files or the upstream's tools."""
    async with start_gateway(tmp_path) as started:
        yield started
