"""The window's full garbage collections (polter/window/full_collections.py): CPython's automatic ones are off while a window
runs, and the window runs them itself when due, just after an echo was drawn or once nobody types."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest
from support.panes import bash_spec, wait_for_prompt, wait_for_text
from support.session import hosted, window
from support.waiting import wait_until

from polter.window import full_collections as collections_module
from polter.window.full_collections import FullCollections


@pytest.fixture
def full_collections() -> Iterator[list[int]]:
    """Counts CPython's full collections (whoever ran them) while the test runs."""
    seen: list[int] = []

    def count(phase: str, info: dict[str, int]) -> None:
        if phase == "start" and info["generation"] == 2:
            seen.append(1)

    gc.callbacks.append(count)
    try:
        yield seen
    finally:
        gc.callbacks.remove(count)


def make_cyclic_garbage(count: int = 200_000) -> None:
    """Cycles that live long enough to reach the oldest generation (CPython collects it once enough did),
    then die."""
    kept: list[list[object]] = []
    for _ in range(count):
        cycle: list[object] = []
        cycle.append(cycle)
        kept.append(cycle)


def test_cpython_runs_no_full_collection_of_its_own_while_started(full_collections: list[int]) -> None:
    before = gc.get_threshold()
    collector = FullCollections()
    collector.start()
    try:
        assert gc.get_threshold()[:2] == before[:2]
        make_cyclic_garbage()
        assert full_collections == [], "CPython collected the oldest generation by itself"
    finally:
        collector.stop()
    assert gc.get_threshold() == before
    make_cyclic_garbage()
    assert full_collections, "after stop, CPython's own full collections run again"


@pytest.fixture
def collector(monkeypatch: pytest.MonkeyPatch) -> Iterator[FullCollections]:
    """A started collector whose collections are due at once and that thinks the human types (the tests
    change ``PERIOD`` and ``QUIET`` to say otherwise)."""
    monkeypatch.setattr(collections_module, "PERIOD", 0.0)
    monkeypatch.setattr(collections_module, "QUIET", 3600.0)
    started = FullCollections()
    started.start()
    started.typed()
    try:
        yield started
    finally:
        started.stop()


def test_a_due_collection_waits_until_nobody_types(collector: FullCollections, monkeypatch: pytest.MonkeyPatch) -> None:
    collector.tick()
    assert collector.collections == 0, "collected while the human types"
    monkeypatch.setattr(collections_module, "QUIET", 0.0)
    collector.tick()
    assert collector.collections == 1


def test_nothing_is_collected_before_the_period(collector: FullCollections, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(collections_module, "QUIET", 0.0)
    monkeypatch.setattr(collections_module, "PERIOD", 3600.0)
    collector.tick()
    collector.echo_drawn()
    assert collector.collections == 0


async def test_a_due_collection_runs_just_after_an_echo(collector: FullCollections) -> None:
    collector.echo_drawn()
    assert collector.collections == 0, "a collection must not delay the echo's way to the terminal"
    await wait_until(lambda: collector.collections == 1, timeout=5)


async def test_the_window_collects_after_an_echo_while_the_human_types(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(collections_module, "QUIET", 3600.0)  # only the echo can be the moment
    async with hosted([bash_spec()]) as host, window(host, size=(80, 24)) as (app, pilot):
        terminal = app.session_screen.grid.panes[0].terminal
        await wait_for_prompt(terminal)
        assert gc.get_threshold()[2] == collections_module.NEVER
        monkeypatch.setattr(collections_module, "PERIOD", 0.0)
        await pilot.press("x")
        await wait_for_text(terminal, "$ x")
        await wait_until(lambda: app.garbage.collections >= 1, timeout=10, message="a collection after the echo")
    assert gc.get_threshold()[2] != collections_module.NEVER, "the window gave CPython its full collections back"
