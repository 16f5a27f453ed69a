"""The review screen on a real worktree: the changed files, marked, and the selected file's coloured diff."""

from __future__ import annotations

import shutil
from pathlib import Path

from support.dialogs import confirm_shown
from support.git_repos import sh
from support.waiting import wait_until
from textual.widgets import OptionList, Static

from polter.window.diff_view import DiffView, parse_diff
from polter.window.review_app import ReviewApp
from polter.window.worktree_screen import WorktreeReviewScreen
from polter.worktrees import Worktree, open_worktree


async def changed_worktree(repo: Path) -> Worktree:
    worktree = (await open_worktree(repo, title="coder")).worktree
    sh(worktree.path, "printf 'def main():\\n    return 2\\n' > src/app.py && git commit -qam 'return 2'")
    sh(worktree.path, "printf 'def main():\\n    return 3\\n' > src/app.py")  # and again, uncommitted
    sh(worktree.path, "echo 'new notes' > notes.md")
    return worktree


def options(screen: WorktreeReviewScreen) -> list[str]:
    files = screen.query_one("#review-files", OptionList)
    return [str(files.get_option_at_index(index).prompt) for index in range(files.option_count)]


async def test_the_review_lists_changed_files_and_shows_the_selected_diff(repo: Path) -> None:
    worktree = await changed_worktree(repo)
    app = ReviewApp(worktree)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(lambda: isinstance(app.screen, WorktreeReviewScreen) and app.screen.data is not None)
        screen = app.screen
        assert options(screen) == [" U    +1 -0    notes.md (added)", "CU    +2 -2    src/app.py"]
        summary = str(screen.query_one("#review-summary", Static).render())
        assert "polter/coder against main: 1 commit(s) ahead, 0 behind" in summary and "2 files" in summary

        view = screen.query_one(DiffView)
        await wait_until(lambda: "notes.md" in view.text, message=lambda: view.text)
        assert "notes.md · uncommitted in the worktree" in view.text and "+new notes" in view.text
        assert "committed on polter/coder" not in view.text

        await pilot.press("down")
        await wait_until(lambda: "src/app.py · committed" in view.text, message=lambda: view.text)
        committed_at = view.text.index("src/app.py · committed on polter/coder")
        uncommitted_at = view.text.index("src/app.py · uncommitted in the worktree")
        assert committed_at < view.text.index("+    return 2") < uncommitted_at < view.text.index("+    return 3")

        added = next(row for row in view.rows if row.text == "+    return 3")
        assert added.kind == "added" and added.new == 2
        await pilot.pause()
        rendered = view.render_line(view.rows.index(added))
        assert "2 +    return 3" in rendered.text
        assert any(segment.style and segment.style.bgcolor for segment in rendered)  # coloured, not plain

        sh(worktree.path, "echo more > more.txt")
        await pilot.press("r")
        await wait_until(lambda: any("more.txt" in option for option in options(screen)))
        assert screen.selected is not None and screen.selected.path == "src/app.py"  # the selection is kept

        await pilot.press("escape")
        await wait_until(lambda: app.return_code is not None or not app.is_running)


async def test_no_changes_and_a_deleted_folder_are_said_plainly(repo: Path) -> None:
    worktree = (await open_worktree(repo, title="coder")).worktree
    app = ReviewApp(worktree)
    async with app.run_test(size=(100, 20)):
        await wait_until(lambda: isinstance(app.screen, WorktreeReviewScreen) and app.screen.data is not None)
        assert app.screen.query_one(DiffView).text == "No changes against main yet."

    sh(worktree.path, "echo kept > kept.txt && git add kept.txt && git commit -qm kept")
    shutil.rmtree(worktree.path)
    app = ReviewApp(worktree)
    async with app.run_test(size=(100, 20)):
        await wait_until(lambda: isinstance(app.screen, WorktreeReviewScreen) and app.screen.data is not None)
        summary = str(app.screen.query_one("#review-summary", Static).render())
        assert "was deleted: only committed changes are shown" in summary
        assert [file.path for file in app.screen.data.files] == ["kept.txt"]


def test_a_diff_is_parsed_with_line_numbers() -> None:
    rows = parse_diff(
        "diff --git a/x b/x\nindex 1..2 100644\n--- a/x\n+++ b/x\n@@ -3,3 +3,3 @@ def f():\n a\n-b\n+c\n d\n"
        "\\ No newline at end of file\n"
    )
    assert [(row.kind, row.old, row.new) for row in rows] == [
        ("header", None, None),
        ("header", None, None),
        ("header", None, None),
        ("header", None, None),
        ("hunk", None, None),
        ("context", 3, 3),
        ("removed", 4, None),
        ("added", None, 4),
        ("context", 5, 5),
        ("note", None, None),
    ]


async def test_merge_and_remove_from_the_review(repo: Path) -> None:
    from support.git_repos import git


    worktree = (await open_worktree(repo, title="coder")).worktree
    sh(worktree.path, "echo feature > feature.txt && git add feature.txt && git commit -qm feature")
    app = ReviewApp(worktree)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(lambda: isinstance(app.screen, WorktreeReviewScreen) and app.screen.data is not None)
        review = app.screen
        await pilot.press("m")
        await wait_until(lambda: confirm_shown(app))
        await pilot.press("y")
        await wait_until(lambda: app.screen is review and review.data is not None and review.data.ahead == 0)
        assert (repo / "feature.txt").is_file()
        assert git(repo, "log", "-1", "--format=%s").strip() == "feature"

        await pilot.press("x")
        await wait_until(lambda: confirm_shown(app))  # merged, clean: a plain yes
        await pilot.press("y")
        await wait_until(lambda: not worktree.path.exists())


async def test_a_plain_review_source_has_no_merge_or_remove(repo: Path) -> None:
    worktree = (await open_worktree(repo, title="coder")).worktree

    class Source:
        async def review(self):  # noqa: ANN202
            return await worktree.review()

        async def file_diff(self, path):  # noqa: ANN001, ANN202
            return await worktree.file_diff(path)

    app = ReviewApp(Source())
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_until(lambda: isinstance(app.screen, WorktreeReviewScreen) and app.screen.data is not None)
        await pilot.press("x", "m")
        await pilot.pause()
        assert isinstance(app.screen, WorktreeReviewScreen) and worktree.path.is_dir()
