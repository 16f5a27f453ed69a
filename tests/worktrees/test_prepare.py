"""What a new worktree gets besides the checkout: .worktreeinclude's ignored files, and the project's
setup command, which runs only once the user allowed it for the repository."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support.git_repos import git

from polter.errors import ConfigError
from polter.worktrees import SetupCommand, open_worktree, read_setup, recreate


def include(repo: Path, patterns: str) -> None:
    (repo / ".worktreeinclude").write_text(patterns)


async def test_worktreeinclude_copies_the_ignored_files_it_names(repo: Path) -> None:
    (repo / ".env").write_text("SECRET=1\n")
    (repo / "config" / "local").mkdir(parents=True)
    (repo / "config" / "local" / "db.toml").write_text("url = 'sqlite://'\n")
    (repo / "src" / ".env").write_text("NESTED=1\n")
    (repo / "debug.log").write_text("ignored, but not named\n")
    (repo / "notes.txt").write_text("named, but not ignored: git would commit it\n")
    (repo / "node_modules" / "x").mkdir(parents=True)
    (repo / "node_modules" / "x" / "index.js").write_text("ignored, not named\n")
    include(repo, "# what a worktree needs\n.env\nconfig/local/\nnotes.txt\n!src/.env\n")

    opened = await open_worktree(repo, title="coder")

    path = opened.worktree.path
    assert sorted(opened.copied) == [".env", "config/local/db.toml"]
    assert (path / ".env").read_text() == "SECRET=1\n"
    assert (path / "config" / "local" / "db.toml").read_text() == "url = 'sqlite://'\n"
    for absent in ("src/.env", "debug.log", "notes.txt", "node_modules"):
        assert not (path / absent).exists(), absent
    assert git(path, "status", "--porcelain") == ""  # copied files stay ignored in the worktree


async def test_worktreeinclude_never_overwrites_the_worktrees_copy(repo: Path) -> None:
    (repo / ".env").write_text("SECRET=1\n")
    include(repo, ".env\n")
    first = await open_worktree(repo, title="coder")
    (first.worktree.path / ".env").write_text("SECRET=changed by the agent\n")
    (repo / ".env").write_text("SECRET=2\n")

    again = await open_worktree(repo, title="coder")

    assert again.copied == ()
    assert (again.worktree.path / ".env").read_text() == "SECRET=changed by the agent\n"


def setup_file(repo: Path, text: str) -> None:
    (repo / ".polter").mkdir(exist_ok=True)
    (repo / ".polter" / "worktrees.toml").write_text(text)


class Asker:
    """The user's answer to "may this setup command run?", and what they were asked."""

    def __init__(self, answer: bool) -> None:
        self.answer = answer
        self.asked: list[SetupCommand] = []

    async def __call__(self, setup: SetupCommand) -> bool:
        self.asked.append(setup)
        return self.answer


async def test_the_setup_command_runs_only_after_the_user_allowed_it_once(repo: Path) -> None:
    setup_file(repo, 'setup = "echo installed > .installed && echo $POLTER_WORKTREE_SOURCE >> .installed"\n')

    unasked = await open_worktree(repo, title="one")  # nobody to ask: it does not run
    assert unasked.setup is not None and not unasked.setup.ran
    assert not (unasked.worktree.path / ".installed").exists()
    assert any("did not run" in note for note in unasked.notes)

    declined = Asker(False)
    refused = await open_worktree(repo, title="two", confirm_setup=declined)
    assert len(declined.asked) == 1 and declined.asked[0].display.startswith("echo installed")
    assert not refused.setup.ran and not (refused.worktree.path / ".installed").exists()

    allowed = Asker(True)
    ran = await open_worktree(repo, title="three", confirm_setup=allowed)
    assert len(allowed.asked) == 1
    assert ran.setup.ok and (ran.worktree.path / ".installed").read_text() == f"installed\n{repo.resolve()}\n"
    assert "installed" in ran.setup.log.read_text()

    never = Asker(False)  # allowed once for this repository: not asked again
    later = await open_worktree(repo, title="four", confirm_setup=never)
    assert never.asked == [] and later.setup.ok and (later.worktree.path / ".installed").is_file()


async def test_a_changed_setup_command_asks_again(repo: Path) -> None:
    setup_file(repo, 'setup = "touch .first"\n')
    await open_worktree(repo, title="one", confirm_setup=Asker(True))
    setup_file(repo, 'setup = ["sh", "-c", "touch .second"]\n')

    asker = Asker(False)
    opened = await open_worktree(repo, title="two", confirm_setup=asker)

    assert [setup.display for setup in asker.asked] == ["sh -c 'touch .second'"]
    assert not opened.setup.ran and not (opened.worktree.path / ".second").exists()


async def test_consent_is_per_repository(repo: Path, tmp_path: Path) -> None:
    from support.git_repos import make_repo

    other = make_repo(tmp_path / "other")
    for checkout in (repo, other):
        setup_file(checkout, 'setup = "touch .ran"\n')
    await open_worktree(repo, title="one", confirm_setup=Asker(True))

    asker = Asker(False)
    opened = await open_worktree(other, title="one", confirm_setup=asker)

    assert len(asker.asked) == 1 and not (opened.worktree.path / ".ran").exists()


async def test_a_failing_setup_command_is_reported_and_the_worktree_kept(repo: Path) -> None:
    setup_file(repo, 'setup = "echo resolving; echo cannot resolve left-pad >&2; exit 3"\n')
    opened = await open_worktree(repo, title="one", confirm_setup=Asker(True))
    assert opened.setup.returncode == 3 and not opened.setup.ok
    assert opened.setup.tail == "resolving\ncannot resolve left-pad"
    assert any("failed (exit 3" in note for note in opened.notes)
    assert opened.worktree.path.is_dir()


async def test_a_recreated_worktree_runs_the_allowed_setup_again_and_a_reused_one_does_not(repo: Path) -> None:
    setup_file(repo, 'setup = "echo x >> ../setup-runs"\n')
    runs = lambda worktree: (worktree.path.parent / "setup-runs").read_text().count("x")  # noqa: E731
    first = await open_worktree(repo, title="one", confirm_setup=Asker(True))
    assert runs(first.worktree) == 1
    await open_worktree(repo, title="one")
    assert runs(first.worktree) == 1
    shutil.rmtree(first.worktree.path)
    await recreate(first.worktree)
    assert runs(first.worktree) == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('setup = "npm ci"\ncommand = "x"\n', r"worktrees.toml:2: command: unknown key"),
        ("setup = 3\n", r"worktrees.toml:1: setup: "),
        ('setup = ""\n', r"worktrees.toml:1: setup: must not be empty"),
        ("setup = [\n", r"worktrees.toml:\d+: invalid TOML"),
    ],
)
def test_a_bad_setup_file_names_file_line_and_field(repo: Path, text: str, expected: str) -> None:
    setup_file(repo, text)
    with pytest.raises(ConfigError, match=expected):
        read_setup(repo, repo / ".git")
