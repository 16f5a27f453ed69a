"""``worktree = true`` (with ``branch`` and ``base``) on a ``[[panes]]`` entry and on ``--pane``."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from polter.errors import ConfigError
from polter.launch.config import PaneSetup, SavedSession, load_config, parse_pane_option


def config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "polter.toml"
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def test_a_configured_pane_asks_for_a_worktree_with_a_branch_and_base(tmp_path: Path) -> None:
    path = config(
        tmp_path,
        """
        [[panes]]
        title = "coder"
        worktree = true

        [[panes]]
        worktree = true
        branch = "feature/login"
        base = "develop"

        [[panes]]
        role = "reviewer"
        """,
    )
    first, second, third = load_config(path).panes
    assert (first.worktree, first.branch, first.base) == (True, None, None)
    assert (second.worktree, second.branch, second.base) == (True, "feature/login", "develop")
    assert not third.worktree


@pytest.mark.parametrize(
    ("pane", "expected"),
    [
        ('branch = "x"', r"polter.toml:3: panes\[0\].branch: needs worktree = true"),
        ('base = "main"', r"polter.toml:3: panes\[0\].base: needs worktree = true"),
        ('worktree = true\nbranch = "has space"', r"polter.toml:4: panes\[0\].branch: .*cannot contain ' '"),
        ('worktree = true\nbranch = "x..y"', r"polter.toml:4: panes\[0\].branch: .*cannot contain '\.\.'"),
        ('worktree = "yes"', r"polter.toml:3: panes\[0\].worktree: Input should be a valid boolean"),
    ],
)
def test_bad_worktree_settings_name_file_line_and_field(tmp_path: Path, pane: str, expected: str) -> None:
    path = config(tmp_path, f'[[panes]]\ntitle = "coder"\n{pane}\n')
    with pytest.raises(ConfigError, match=expected):
        load_config(path)


def test_pane_option_takes_worktree_branch_and_base() -> None:
    assert parse_pane_option("claude-code:coder,worktree") == PaneSetup(
        adapter="claude-code", role="coder", worktree=True
    )
    assert parse_pane_option(":reviewer,worktree,branch=fix/x,base=develop") == PaneSetup(
        role="reviewer", worktree=True, branch="fix/x", base="develop"
    )
    assert parse_pane_option("codex") == PaneSetup(adapter="codex")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("codex,worktre", r"--pane: 'codex,worktre': unknown option 'worktre'"),
        ("codex,branch=x", r"--pane: 'codex,branch=x': branch: needs worktree"),
        ("codex,worktree,branch=a b", r"--pane: .*branch: a branch name cannot contain ' '"),
        ("codex,worktree=1", r"unknown option 'worktree=1'"),
    ],
)
def test_bad_pane_options_say_what_is_wrong(value: str, expected: str) -> None:
    with pytest.raises(ConfigError, match=expected):
        parse_pane_option(value)


def test_a_saved_session_keeps_the_worktree_and_its_branch() -> None:
    setup = PaneSetup(adapter="codex", title="coder", worktree=True, branch="polter/coder")
    saved = SavedSession(panes=[setup]).model_dump_json(exclude_none=True)
    assert SavedSession.model_validate_json(saved).panes == [setup]


async def test_a_pane_setup_opens_its_worktree_and_its_saved_setup_comes_back_to_it(repo: Path) -> None:
    import shutil

    from support.git_repos import sh

    from polter.host.pane_worktree import open_pane_worktree

    setup = PaneSetup(adapter="shell", cwd=repo / "src", worktree=True)
    launch, opened = await open_pane_worktree(setup, title="coder")
    assert launch.cwd == opened.start_dir == opened.worktree.path / "src"
    assert launch.branch == "polter/coder" and launch.worktree
    sh(opened.worktree.path, "echo kept > kept.txt && git add kept.txt && git commit -qm kept")

    restored, again = await open_pane_worktree(launch.model_copy(update={"resume": True}), title="coder")
    assert again.how == "reused" and restored.cwd == launch.cwd

    shutil.rmtree(opened.worktree.path)  # deleted by hand while Polter was not running
    restored, again = await open_pane_worktree(launch, title="coder")
    assert again.how == "recreated" and restored.cwd == launch.cwd
    assert (again.worktree.path / "kept.txt").read_text() == "kept\n"
