"""Loading from the three places, reporting where each role came from, and hot reload."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

import pytest

from polter.roles import ToolCallRequest
from polter.roles.library import DEFAULT_ROLE, ReloadReport, RoleLibrary

from .conftest import RoleDir


@pytest.fixture
def layers(tmp_path: Path, isolated_dirs: dict[str, Path], monkeypatch: pytest.MonkeyPatch) -> tuple[RoleDir, RoleDir]:
    """The user's roles folder and the project's, with the working directory in the project."""
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    return RoleDir(isolated_dirs["config"] / "roles"), RoleDir(project / ".polter" / "roles")


def test_bundled_user_and_project_roles_load_later_overriding_earlier(layers: tuple[RoleDir, RoleDir]) -> None:
    user, project = layers
    user.write("coder", 'description = "the user\'s coder"\n')
    user.write("mine", 'description = "mine"\n')
    project.write("coder", 'description = "the project\'s coder"\n')
    library = RoleLibrary.load()
    assert {"coder", "mine", "researcher", "terraria-admin", DEFAULT_ROLE} <= set(library.names())
    coder = library.get("coder")
    assert coder is not None and coder.description == "the project's coder"
    source = library.source("coder")
    assert source is not None and source.layer == "project" and source.path == project.path / "coder.toml"
    assert [path.name for path in source.overrides] == ["coder.toml", "coder.toml"]
    assert source.overrides[1] == user.path / "coder.toml"
    assert str(library.source("mine")) == f"user: {user.path / 'mine.toml'}"
    assert library.source("researcher").layer == "bundled"  # type: ignore[union-attr]
    assert library.get("nope") is None and library.source("nope") is None


def test_a_project_role_can_extend_the_role_it_overrides(layers: tuple[RoleDir, RoleDir]) -> None:
    _user, project = layers
    project.write("coder", 'extends = "coder"\n[tools]\ndeny = ["github/*"]\n')
    coder = RoleLibrary.load().get("coder")
    assert coder is not None
    assert coder.decide(ToolCallRequest("github", "search", read_only=True)).decision == "deny"
    inherited = coder.decide(ToolCallRequest("gitlab", "push"))
    assert inherited.decision == "ask" and inherited.rule.startswith('tools.ask["@destructive"] (')
    assert coder.description == "Everything allowed; destructive tools ask the human first"


def test_a_broken_file_does_not_fall_back_to_an_earlier_layer_at_first_load(layers: tuple[RoleDir, RoleDir]) -> None:
    _user, project = layers
    project.write("coder", "[tools\n")
    library = RoleLibrary.load()
    assert library.get("coder") is None  # fails closed: no looser bundled coder in its place
    assert [p.line for p in library.problems] == [1]


class TestReload:
    def test_an_unchanged_reload_reports_nothing_and_keeps_the_same_objects(self, role_dir: RoleDir) -> None:
        role_dir.write("a", "")
        library = RoleLibrary.load([Path("roles")])
        before = library.get("a")
        report = library.reload()
        assert not report and report.affected == set()
        assert library.get("a") is before

    def test_added_changed_removed(self, role_dir: RoleDir) -> None:
        role_dir.write("a", "")
        role_dir.write("b", "")
        library = RoleLibrary.load([Path("roles")])
        role_dir.write("a", '[tools]\ndefault = "deny"\n')
        (role_dir.path / "b.toml").unlink()
        role_dir.write("c", "")
        report = library.reload()
        assert (report.added, report.changed, report.removed) == (["c"], ["a"], ["b"])
        assert report.lines() == ["role added: c", "role changed: a", "role removed: b"]
        assert library.names() == ["a", "c"]

    def test_a_file_that_becomes_invalid_keeps_its_last_good_version_and_says_so(self, role_dir: RoleDir) -> None:
        role_dir.write("a", '[tools]\ndefault = "deny"\n')
        library = RoleLibrary.load([Path("roles")])
        good = library.get("a")
        role_dir.write("a", '[tools]\ndefault = "allow"\nalow = ["x/*"]\n')
        report = library.reload()
        assert library.get("a") is good
        assert report.affected == set() and report.problems_changed and bool(report)
        assert list(report.kept) == ["a"] and library.kept == report.kept
        assert report.lines() == [
            "role a: its file is invalid; the last good version stays in force (1 problem(s))",
            "roles/a.toml:3: tools.alow: unknown key (known: default, allow, ask, deny)",
        ]
        role_dir.write("a", '[tools]\ndefault = "allow"\n')
        fixed = library.reload()
        assert fixed.changed == ["a"] and not fixed.kept and library.problems == []
        assert library.get("a").decide(ToolCallRequest("x", "y")).decision == "allow"  # type: ignore[union-attr]

    def test_a_child_resolves_against_its_parents_last_good_version(self, role_dir: RoleDir) -> None:
        role_dir.write("base", '[tools]\ndefault = "deny"\n')
        role_dir.write("child", 'extends = "base"\ndescription = "v1"\n')
        library = RoleLibrary.load([Path("roles")])
        role_dir.write("base", "[tools\n")
        role_dir.write("child", 'extends = "base"\ndescription = "v2"\n')
        report = library.reload()
        child = library.get("child")
        assert report.changed == ["child"] and child is not None and child.description == "v2"
        assert child.decide(ToolCallRequest("x", "y")).decision == "deny"


class Watcher:
    """Runs ``library.watch()`` in a task and waits, without fixed sleeps, for a report."""

    def __init__(self, library: RoleLibrary) -> None:
        self.library = library
        self.stop = asyncio.Event()
        self.reports: asyncio.Queue[ReloadReport] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Watcher:
        self.task = asyncio.create_task(self._consume())
        return self

    async def __aexit__(self, *_exc: object) -> None:
        self.stop.set()
        await asyncio.wait_for(self.task, timeout=10)  # type: ignore[arg-type]

    async def _consume(self) -> None:
        async for report in self.library.watch(stop_event=self.stop, debounce_ms=50):
            await self.reports.put(report)

    async def until(self, predicate: Callable[[ReloadReport], bool], change: Callable[[int], object]) -> ReloadReport:
        """Make ``change`` (again: the watcher starts asynchronously) until a report satisfies ``predicate``."""
        for attempt in range(40):
            change(attempt)
            try:
                while True:
                    report = await asyncio.wait_for(self.reports.get(), timeout=0.5)
                    if predicate(report):
                        return report
            except TimeoutError:
                continue
        raise AssertionError("the watcher never reported the change")


async def test_watch_reloads_on_file_changes(role_dir: RoleDir) -> None:
    role_dir.write("a", "")
    library = RoleLibrary.load([Path("roles")])
    async with Watcher(library) as watcher:
        await watcher.until(lambda r: "b" in r.added, lambda _: role_dir.write("b", ""))
        assert library.get("b") is not None
        report = await watcher.until(lambda r: "a" in r.kept, lambda _: role_dir.write("a", "[oops\n"))
        assert library.get("a") is not None and report.problems[0].path.endswith("a.toml")  # type: ignore[union-attr]


async def test_watch_notices_a_project_roles_folder_created_later(layers: tuple[RoleDir, RoleDir]) -> None:
    _user, project = layers
    project.path.rmdir()
    project.path.parent.rmdir()
    library = RoleLibrary.load()

    def create(attempt: int) -> None:
        project.path.mkdir(parents=True, exist_ok=True)
        project.write("fresh", f'description = "attempt {attempt}"\n')

    async with Watcher(library) as watcher:
        await watcher.until(lambda r: "fresh" in r.added or "fresh" in r.changed, create)
        assert library.get("fresh") is not None


async def test_watch_ignores_what_is_not_a_role_file(
    layers: tuple[RoleDir, RoleDir], caplog: pytest.LogCaptureFixture
) -> None:
    """A log written where the watcher looks (the folder that will hold a missing .polter/roles, a layer
    folder) wakes nothing: only role files and the folders on the way to a missing layer count."""
    user, project = layers
    project.path.rmdir()
    project.path.parent.rmdir()
    user.write("a", "")
    library = RoleLibrary.load()
    noise = [project.path.parents[1] / "gateway.log", user.path / "notes.txt", user.path / "a.toml.swp"]
    caplog.set_level("DEBUG", logger="watchfiles.main")
    async with Watcher(library) as watcher:
        await watcher.until(lambda r: "b" in r.added, lambda _: user.write("b", ""))
        for line in range(30):
            for path in noise:
                with path.open("a") as log:
                    log.write(f"line {line}\n")
        await watcher.until(lambda r: "c" in r.added, lambda _: user.write("c", ""))
    woken = [record.getMessage() for record in caplog.records if "detected" in record.getMessage()]
    assert woken and not [message for message in woken if any(str(path) in message for path in noise)], woken
