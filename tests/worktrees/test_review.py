"""What a pane changed against its base: the header's figures, the review's files, one file's diff."""

from __future__ import annotations

import shutil
from pathlib import Path

from support.git_repos import sh

from polter.worktrees import open_worktree


async def test_status_counts_committed_and_uncommitted_changes_against_the_base(repo: Path) -> None:
    worktree = (await open_worktree(repo, title="coder")).worktree
    assert (await worktree.status()).summary() == "polter/coder +0 -0 · 0 files"

    sh(worktree.path, "printf 'a\\nb\\nc\\n' > feature.py && git add feature.py && git commit -qm feature")
    sh(worktree.path, "printf 'def main():\\n    return 2\\n' > src/app.py")  # uncommitted: 1 line changed
    sh(worktree.path, "printf 'one\\ntwo' > draft.md")  # untracked, no final newline: 2 lines

    status = await worktree.status()

    assert (status.ahead, status.behind) == (1, 0)
    assert (status.files, status.insertions, status.deletions, status.uncommitted) == (3, 6, 1, 2)
    assert status.summary() == "polter/coder +6 -1 · 3 files · 2 uncommitted"


async def test_status_ignores_what_landed_on_the_base_after_the_fork(repo: Path) -> None:
    worktree = (await open_worktree(repo, title="coder")).worktree
    sh(repo, "echo later > later.txt && git add later.txt && git commit -qm later")  # on main, after the fork

    status = await worktree.status()

    assert (status.ahead, status.behind, status.files) == (0, 1, 0)


async def test_review_marks_committed_and_uncommitted_changes_apart(repo: Path) -> None:
    worktree = (await open_worktree(repo, title="coder")).worktree
    sh(worktree.path, "echo 'x = 1' > committed.py && git add committed.py && git commit -qm one")
    sh(worktree.path, "echo 'x = 2' >> committed.py")  # the same file, changed again: both kinds
    sh(worktree.path, "git mv README.md README.rst && git commit -qm rename")
    sh(worktree.path, "git rm -q src/app.py")  # staged, uncommitted
    sh(worktree.path, "printf '\\000\\001' > blob.bin")  # untracked binary

    data = await worktree.review()

    files = {file.path: file for file in data.files}
    assert list(files) == ["README.rst", "blob.bin", "committed.py", "src/app.py"]
    assert files["committed.py"].marks == "CU"
    assert files["committed.py"].committed.kind == "added" and files["committed.py"].committed.insertions == 1
    assert files["committed.py"].uncommitted.kind == "modified" and files["committed.py"].uncommitted.insertions == 1
    assert files["README.rst"].marks == "C" and files["README.rst"].committed.kind == "renamed"
    assert files["README.rst"].committed.old_path == "README.md"
    assert files["src/app.py"].marks == "U" and files["src/app.py"].uncommitted.kind == "deleted"
    assert files["blob.bin"].uncommitted.untracked and files["blob.bin"].uncommitted.binary
    assert data.ahead == 2 and data.merge_base is not None


async def test_a_files_diff_has_its_committed_and_uncommitted_parts(repo: Path) -> None:
    worktree = (await open_worktree(repo, title="coder")).worktree
    sh(worktree.path, "printf 'def main():\\n    return 2\\n' > src/app.py && git commit -qam two")
    sh(worktree.path, "printf 'def main():\\n    return 3\\n' > src/app.py")
    sh(worktree.path, "echo new > new.txt")

    data = await worktree.review()
    app = await worktree.file_diff(next(file for file in data.files if file.path == "src/app.py"))
    new = await worktree.file_diff(next(file for file in data.files if file.path == "new.txt"))

    assert "-    return 1\n+    return 2" in app.committed
    assert "-    return 2\n+    return 3" in app.uncommitted
    assert new.committed == "" and "+++ b/new.txt" in new.uncommitted and "+new" in new.uncommitted


async def test_a_renamed_files_diff_stays_a_rename(repo: Path) -> None:
    worktree = (await open_worktree(repo, title="coder")).worktree
    sh(worktree.path, "git mv README.md README.rst && git commit -qm rename")
    [renamed] = (await worktree.review()).files

    diff = await worktree.file_diff(renamed)

    assert "rename from README.md\nrename to README.rst" in diff.committed


async def test_a_deleted_folder_still_shows_its_committed_changes(repo: Path) -> None:
    worktree = (await open_worktree(repo, title="coder")).worktree
    sh(worktree.path, "echo kept > kept.txt && git add kept.txt && git commit -qm kept && echo lost > lost.txt")
    shutil.rmtree(worktree.path)

    status = await worktree.status()
    data = await worktree.review()
    diff = await worktree.file_diff("kept.txt")

    assert status.missing and status.files == 1 and status.summary() == "polter/coder · folder missing"
    assert [file.path for file in data.files] == ["kept.txt"]
    assert "+kept" in diff.committed and diff.uncommitted == ""
