"""``polter worktree``: the panes' git worktrees, with or without the app running.

PANE is a pane's number in a running session (``--session NAME`` when several run), a pane's title,
its branch or its worktree's folder name; inside a repository, that repository's worktrees win a tie
(:mod:`polter.cli._worktree_sessions`). Destructive steps ask on the terminal (removing work asks for
the branch name typed out); without a terminal they need their flag (``--yes``, ``--discard``,
``--close-pane``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from polter.cli._admin import add_json, list_by_default, print_json, print_table
from polter.cli.sessions import print_notes
from polter.errors import PolterError, SessionError, WorktreeRefused

if TYPE_CHECKING:
    from polter.cli._worktree_sessions import RunningPane, SessionPanes
    from polter.worktrees import (
        FileDiff,
        ReviewData,
        SetupCommand,
        Worktree,
        WorktreeEntry,
        WorktreeStatus,
    )


_COLOURS = {"+": "\x1b[32m", "-": "\x1b[31m", "@": "\x1b[36m"}
_BOLD, _RESET = "\x1b[1m", "\x1b[0m"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "worktree",
        help="list, review, merge and remove the panes' git worktrees",
        description="The git worktrees Polter made for panes (see docs/worktrees.md). Works with no app running.",
    )
    commands = parser.add_subparsers(dest="worktree_command", metavar="COMMAND", required=True)

    listing = commands.add_parser(
        "list", help="every worktree Polter made, its branch, state and changes, and the running pane in it"
    )
    add_json(listing)
    listing.set_defaults(handler=_list)

    diff = commands.add_parser("diff", help="what a pane changed against its base, committed and uncommitted")
    diff.add_argument(
        "pane", metavar="PANE", help="a running pane's number or title, or the worktree's pane title, branch or folder"
    )
    diff.add_argument("--stat", action="store_true", help="only the changed files")
    diff.add_argument("--color", choices=("auto", "always", "never"), default="auto", help="colour the diff")
    add_json(diff)
    diff.set_defaults(handler=_diff)

    review = commands.add_parser("review", help="the review screen: changed files and a coloured diff of each")
    review.add_argument("pane", metavar="PANE")
    review.set_defaults(handler=_review)

    merge = commands.add_parser("merge", help="merge a pane's branch into its base (checked first)")
    merge.add_argument("pane", metavar="PANE")
    merge.add_argument("--commit", metavar="MESSAGE", help="commit the pane's uncommitted changes first")
    merge.add_argument("--no-ff", action="store_true", help="make a merge commit even when a fast forward would do")
    merge.add_argument("--yes", "-y", action="store_true", help="do not ask")
    merge.set_defaults(handler=_merge)

    remove = commands.add_parser("remove", help="delete a pane's worktree and its branch")
    remove.add_argument("pane", metavar="PANE")
    remove.add_argument(
        "--discard", action="store_true", help="confirm losing uncommitted files and commits its base lacks"
    )
    remove.add_argument("--keep-branch", action="store_true", help="delete the folder only, keep the branch")
    remove.add_argument("--yes", "-y", action="store_true", help="do not ask when nothing would be lost")
    remove.add_argument(
        "--close-pane", action="store_true", help="close the running pane that works in it first (its program ends)"
    )
    remove.set_defaults(handler=_remove)

    restore = commands.add_parser("restore", help="recreate a worktree whose folder was deleted by hand")
    restore.add_argument("pane", metavar="PANE")
    restore.set_defaults(handler=_restore)

    for command in (diff, review, merge, remove, restore):
        command.add_argument(
            "--session", metavar="NAME", help="the running session whose pane PANE is (when several run)"
        )
    list_by_default(parser, commands, listing)


async def _find(name: str, session: str | None = None) -> Worktree:
    return (await _find_pane(name, session))[0]


async def _find_pane(name: str, session: str | None = None) -> tuple[Worktree, RunningPane | None]:
    """The worktree PANE means, and the running session's pane that works in it (if one does)."""
    from polter.cli._worktree_sessions import find_pane_worktree

    worktree, pane, running = await find_pane_worktree(name, session=session, near=_here())
    print_notes(running.notes)
    return worktree, pane


def _here() -> Path | None:
    try:
        return Path.cwd()
    except OSError:
        return None


# -- list ------------------------------------------------------------------------------------------


def _list(args: argparse.Namespace) -> int:
    from polter.cli._worktree_sessions import running_panes
    from polter.worktrees import list_worktrees

    async def gather() -> tuple[list[tuple[WorktreeEntry, WorktreeStatus | BaseException | None]], SessionPanes]:
        entries = await list_worktrees(near=_here())
        statuses = await asyncio.gather(
            *(entry.worktree.status() for entry in entries if entry.state != "lost"), return_exceptions=True
        )
        found = iter(statuses)
        return [(entry, next(found) if entry.state != "lost" else None) for entry in entries], await running_panes()

    rows, running = asyncio.run(gather())
    print_notes(running.notes)
    if args.json:
        print_json(
            [
                {
                    **entry.model_dump(mode="json"),
                    "status": status.model_dump(mode="json")
                    if status is not None and not isinstance(status, BaseException)
                    else None,
                    "pane": _pane_json(running.of(entry.worktree)),
                }
                for entry, status in rows
            ]
        )
        return 0
    if not rows:
        print("no worktrees made by Polter")
        return 0
    table = []
    for entry, status in rows:
        if isinstance(status, BaseException):
            changes = f"? ({status})"
        elif status is None:
            changes = "-"
        else:
            changes = status.summary().removeprefix(status.branch + " ")
        worktree = entry.worktree
        pane = running.of(worktree)
        where = f"{pane.session.name}:{pane.pane.number}" if pane is not None else "-"
        table.append([worktree.title, worktree.branch, worktree.base, entry.state, where, changes, worktree.path])
    print_table(["PANE", "BRANCH", "BASE", "STATE", "OPEN", "CHANGES", "PATH"], table)
    for entry, _status in rows:
        if entry.detail:
            print(f"{entry.worktree.branch}: {entry.detail}")
    return 0


def _pane_json(pane: RunningPane | None) -> dict[str, object] | None:
    if pane is None:
        return None
    return {"session": pane.session.name, "number": pane.pane.number, "title": pane.pane.title, "id": pane.pane.pane}


# -- diff ------------------------------------------------------------------------------------------


def _diff(args: argparse.Namespace) -> int:
    async def gather() -> tuple[ReviewData, list[FileDiff]]:
        worktree = await _find(args.pane, args.session)
        data = await worktree.review()
        diffs = [] if args.stat else [await worktree.file_diff(file) for file in data.files]
        return data, diffs

    data, diffs = asyncio.run(gather())
    if args.json:
        print_json({"review": data.model_dump(mode="json"), "diffs": [diff.model_dump(mode="json") for diff in diffs]})
        return 0
    colour = args.color == "always" or (args.color == "auto" and sys.stdout.isatty())
    _print_review(data)
    for diff in diffs:
        _print_diff(diff, data.worktree.branch, colour)
    return 0


def _print_review(data: ReviewData) -> None:
    worktree = data.worktree
    print(f"{worktree.branch} against {worktree.base}: {data.ahead} commit(s) ahead, {data.behind} behind")
    if not data.files:
        print("no changes")
        return
    print("  (C committed, U uncommitted)")
    for file in data.files:
        change = file.committed or file.uncommitted
        numbers = "binary" if change and change.binary else f"+{file.insertions} -{file.deletions}"
        renamed = f" (from {change.old_path})" if change and change.old_path else ""
        print(f"  {file.marks:<2} {numbers:>12}  {file.path}{renamed}")


def _print_diff(diff: FileDiff, branch: str, colour: bool) -> None:
    for title, text in (
        (f"committed on {branch}", diff.committed),
        ("uncommitted in the worktree", diff.uncommitted),
    ):
        if not text:
            continue
        heading = f"── {diff.path}: {title} "
        print(f"{_BOLD}{heading}{_RESET}" if colour else heading)
        for line in text.splitlines():
            start = _COLOURS.get(line[:1], "") if colour and not line.startswith(("+++", "---")) else ""
            print(f"{start}{line}{_RESET}" if start else line)
    if diff.truncated:
        print("(diff cut short: too large)")


def _review(args: argparse.Namespace) -> int:
    from polter.window.review_app import ReviewApp
    from polter.window.worktree_actions import OpenPane

    worktree, pane = asyncio.run(_find_pane(args.pane, args.session))
    open_pane = None
    if pane is not None:

        async def close() -> None:
            await pane.close()

        open_pane = OpenPane(name=pane.label, close=close)
    ReviewApp(worktree, pane=open_pane).run()
    if pane is not None:
        _tell_host(pane)
    return 0


def _tell_host(pane: RunningPane) -> None:
    """Have the session read the pane's figures again (a merge or a commit changed them); best effort."""

    try:
        asyncio.run(pane.refresh_worktree())
    except SessionError:
        pass  # the pane or its session is gone meanwhile


# -- merge -----------------------------------------------------------------------------------------


def _merge(args: argparse.Namespace) -> int:
    worktree, pane = asyncio.run(_find_pane(args.pane, args.session))
    check = asyncio.run(worktree.check_merge())
    if check.pane_uncommitted:
        message = args.commit
        if message is None and _interactive():
            print(f"The pane has uncommitted files: {', '.join(check.pane_uncommitted[:8])}")
            message = input("Commit them first with this message (empty: stop): ").strip()
            if not message:
                return 1
        if message:
            commit = asyncio.run(worktree.commit_all(message))
            print(f"committed {commit[:12]} on {worktree.branch}")
            check = asyncio.run(worktree.check_merge())
    if not check.ok:
        hint = ("pass --commit MESSAGE to commit the pane's files first",) if check.pane_uncommitted else ()
        raise WorktreeRefused(
            f"not merging {worktree.branch} into {worktree.base} (nothing was changed):",
            reasons=(*check.problems, *hint),
        )
    if check.already_merged:
        print(f"{worktree.branch} is already merged into {worktree.base}")
        return 0
    how = "fast forward" if check.fast_forward and not args.no_ff else "merge commit"
    where = f" (checked out at {check.base_checkout})" if check.base_checkout else ""
    question = f"Merge {worktree.branch} ({check.commits} commit(s), {how}) into {worktree.base}{where}?"
    if not args.yes and not _ask_yes(question):
        print("not merged")
        return 1
    result = asyncio.run(worktree.merge(no_ff=args.no_ff))
    print(f"merged {worktree.branch} into {result.base}: now at {result.commit[:12]}")
    if pane is not None:
        _tell_host(pane)
    return 0


# -- remove ----------------------------------------------------------------------------------------


def _remove(args: argparse.Namespace) -> int:
    worktree, pane = asyncio.run(_find_pane(args.pane, args.session))
    check = asyncio.run(worktree.check_remove())
    if check.blockers:
        raise WorktreeRefused(f"not removing {worktree.path} (nothing was changed):", reasons=check.blockers)
    if pane is not None and not _may_close(pane, args.close_pane):
        print("not removed")
        return 1
    losses = check.losses(keep_branch=args.keep_branch)
    deleting = [str(worktree.path)] if check.folder_exists else []
    if check.branch_exists and not args.keep_branch:
        deleting.append(f"the branch {worktree.branch}")
    if deleting:
        print(f"This deletes {' and '.join(deleting)}.")
    discard = args.discard
    if losses and not discard:
        print("It would lose work:")
        for loss in losses:
            print(f"  {loss}")
        if not _interactive():
            raise WorktreeRefused("not removed (nothing was changed): pass --discard to lose that work")
        typed = input(f"Type the branch name ({worktree.branch}) to confirm: ").strip()
        if typed != worktree.branch:
            print("not removed")
            return 1
        discard = True
    elif not losses and not args.yes and not discard and not _ask_yes("Remove it?"):
        print("not removed")
        return 1
    if pane is not None:
        asyncio.run(pane.close())
        print(f"closed {pane.label}")
    result = asyncio.run(worktree.remove(discard=discard, keep_branch=args.keep_branch))
    done = [f"removed {worktree.path}"] if result.removed_folder else []
    if result.branch_tip:
        tip = result.branch_tip[:12]
        done.append(f"deleted {worktree.branch} (was {tip}: `git branch {worktree.branch} {tip}` brings it back)")
    print("; ".join(done) or f"forgot {worktree.branch}")
    return 0


def _may_close(pane: RunningPane, close_pane: bool) -> bool:
    """Whether the running pane that works in the worktree may be closed first (its program runs there)."""
    ends = "; it is the session's last pane, so the session ends" if pane.last else ""
    if close_pane:
        return True
    if not _interactive():
        raise WorktreeRefused(
            f"not removing {pane.worktree.path} (nothing was changed):",
            reasons=(f"{pane.label} works in it: pass --close-pane to close the pane first{ends}",),
        )
    return _ask_yes(
        f"{pane.label[:1].upper()}{pane.label[1:]} works in it: close the pane first (its program ends{ends})?"
    )


def _restore(args: argparse.Namespace) -> int:
    from polter.worktrees import recreate

    async def confirm(setup: SetupCommand) -> bool:
        if not _interactive():
            return False
        return _ask_yes(
            f"Run this repository's setup command `{setup.display}` (from {setup.source}) in new worktrees?"
        )

    worktree, pane = asyncio.run(_find_pane(args.pane, args.session))
    opened = asyncio.run(recreate(worktree, confirm))
    print(f"{opened.how} {opened.worktree.path} on {opened.worktree.branch}")
    for note in opened.notes:
        print(f"note: {note}")
    if pane is not None:
        _tell_host(pane)
        print(f"{pane.label} still runs in the deleted folder: restart it (prefix then r) to work in the new one")
    return 0


# -- the terminal ----------------------------------------------------------------------------------


def _interactive() -> bool:
    return sys.stdin.isatty() and sys.stdout.isatty()


def _ask_yes(question: str) -> bool:
    if not _interactive():
        raise PolterError(f"{question} (not a terminal: pass --yes)")
    return input(f"{question} [y/N] ").strip().lower() in ("y", "yes")
