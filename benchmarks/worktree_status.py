"""What the pane header's worktree figures cost when an agent goes idle, against references measured in
the same run on the same worktree: one bare ``git status --porcelain`` (what any git prompt runs) and
``git diff --shortstat`` (the cheapest change count).

The worktree belongs to a repository of FILES files and COMMITS commits; the pane committed some
changes and has more uncommitted, untracked files included. ``status()`` runs four git commands (two at
a time); ``review()`` (the review screen) is timed too.

Run: ``.venv/bin/python benchmarks/worktree_status.py``. The last line is JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

FILES = 3000
COMMITS = 50
ROUNDS = 15


def run(cwd: Path, script: str) -> None:
    subprocess.run(["sh", "-c", script], cwd=cwd, check=True, capture_output=True)


def make_repository(root: Path) -> Path:
    repo = root / "big"
    repo.mkdir()
    run(repo, "git init -q -b main && git config user.name B && git config user.email b@example.com")
    for index in range(FILES):
        folder = repo / f"pkg{index % 30}"
        folder.mkdir(exist_ok=True)
        (folder / f"module{index}.py").write_text("".join(f"line {line}\n" for line in range(40)))
    run(repo, "git add . && git commit -qm first")
    for index in range(COMMITS):
        run(repo, f"echo {index} >> pkg0/module0.py && git commit -qam 'commit {index}'")
    return repo


async def median_ms(step: Callable[[], Awaitable[object]]) -> float:
    await step()  # warm the caches once
    times = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        await step()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


async def git_command(cwd: Path, *args: str) -> None:
    process = await asyncio.create_subprocess_exec("git", *args, cwd=cwd, stdout=asyncio.subprocess.DEVNULL)
    await process.wait()


async def main() -> None:
    scratch = Path(tempfile.mkdtemp(prefix="polter-bench-worktree-"))
    os.environ["POLTER_STATE_DIR"] = str(scratch / "state")
    os.environ["POLTER_WORKTREES_DIR"] = str(scratch / "worktrees")
    from polter.worktrees import open_worktree

    repo = make_repository(scratch)
    worktree = (await open_worktree(repo, title="bench")).worktree
    run(worktree.path, "for i in 1 2 3 4 5; do echo change >> pkg1/module$i.py; done && git commit -qam pane")
    run(worktree.path, "echo more >> pkg2/module2.py && printf 'a\\nb\\n' > new1.py && printf 'c\\n' > new2.py")
    figures = {
        "git status --porcelain": await median_ms(lambda: git_command(worktree.path, "status", "--porcelain")),
        "git diff --shortstat main": await median_ms(lambda: git_command(worktree.path, "diff", "--shortstat", "main")),
        "Worktree.status()": await median_ms(worktree.status),
        "Worktree.review()": await median_ms(worktree.review),
    }
    reference = figures["git status --porcelain"]
    print(f"a worktree of {FILES} files, {COMMITS} commits; median of {ROUNDS} runs")
    for name, value in figures.items():
        print(f"{name:<28} {value:7.1f} ms   {value / reference:4.1f}× git status")
    print(await worktree.status())
    print(
        json.dumps(
            {
                "benchmark": "worktree_status",
                "files": FILES,
                "rounds": ROUNDS,
                "median_ms": {name: round(value, 1) for name, value in figures.items()},
                "status_over_git_status": round(figures["Worktree.status()"] / reference, 2),
            }
        )
    )


if __name__ == "__main__":
    asyncio.run(main())
