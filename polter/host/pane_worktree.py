"""One pane's own git worktree (``worktree = true``, ``--pane ...,worktree``; docs/worktrees.md): opened before its
CLI starts, and what the session keeps of it while the pane lives (the header's figures, read in the
background when the agent goes idle; whether its folder is still there). The one link between a pane's setup
and :mod:`polter.worktrees`; :mod:`polter.host.pane_worktrees` is the host's part that owns them all."""

from __future__ import annotations

from collections.abc import Callable, Collection
from pathlib import Path

from polter.errors import WorktreeError
from polter.launch.config import PaneSetup
from polter.tasks import BackgroundTasks
from polter.wire.messages import WorktreeView
from polter.worktrees import ConfirmSetup, OpenedWorktree, SetupCommand, Worktree, WorktreeStatus, open_worktree

__all__ = ["PaneWorktree", "SetupAnswer", "open_pane_worktree", "opened_report", "setup_question"]


async def open_pane_worktree(
    setup: PaneSetup,
    *,
    title: str,
    in_use: Collection[str] = (),
    confirm_setup: ConfirmSetup | None = None,
) -> tuple[PaneSetup, OpenedWorktree]:
    """Make, reuse or recreate the pane's worktree (see :func:`polter.worktrees.open_worktree`).

    Returns the setup to launch and save: ``cwd`` is where the CLI starts inside the worktree and
    ``branch`` the worktree's, so ``--restore`` comes back to the same worktree (and recreates it if its
    folder was deleted meanwhile); and what was done, whose ``notes``, ``copied`` and ``setup`` are
    worth a notification. ``in_use``: the branches of the session's other worktree panes.
    """
    opened = await open_worktree(
        setup.cwd or Path.cwd(),
        title=title,
        branch=setup.branch,
        base=setup.base,
        in_use=in_use,
        confirm_setup=confirm_setup,
    )
    launch = setup.model_copy(update={"cwd": opened.start_dir, "branch": opened.worktree.branch})
    return launch, opened


class SetupAnswer:
    """What the human said when asked whether the project's setup command may run (for the report)."""

    def __init__(self) -> None:
        self.answer: bool | None = None
        """True, False, or None: nobody answered (no window was attached, or not in time)."""


def opened_report(opened: OpenedWorktree, answer: SetupAnswer) -> tuple[str, bool]:
    """What opening a pane's worktree did, in sentences for a notice, and whether it needs the human's eye
    (a setup command that failed or did not run, a directory not in the worktree, a folder recreated)."""
    worktree = opened.worktree
    lines = []
    attention = False
    match opened.how:
        case "created":
            lines.append(f"A new worktree on {worktree.branch} (from {worktree.base}): {worktree.path}")
        case "reused":
            lines.append(f"Back in its worktree on {worktree.branch}: {worktree.path}")
        case "recreated":
            lines.append(
                f"Its worktree's folder had been deleted: recreated on {worktree.branch} at {worktree.path} "
                "(the branch's commits are all there; uncommitted work in the deleted folder is gone)"
            )
            attention = True
    if opened.copied:
        shown = ", ".join(opened.copied[:6]) + (f" and {len(opened.copied) - 6} more" if len(opened.copied) > 6 else "")
        lines.append(f"Copied from {worktree.checkout} (.worktreeinclude): {shown}")
    setup = opened.setup
    if setup is not None:
        command = setup.command
        if setup.ok:
            lines.append(f"The setup command `{command.display}` ran (log: {setup.log})")
        elif setup.ran:
            lines.append(
                f"The setup command `{command.display}` failed with exit status {setup.returncode} (log: {setup.log})"
                + (f":\n{setup.tail}" if setup.tail else "")
            )
        else:
            why = "you said not now" if answer.answer is False else "nobody answered (no window, or not in time)"
            lines.append(
                f"The setup command `{command.display}` (from {command.source}) did not run: {why}. Run it in the "
                f"pane yourself, or allow it when Polter asks again for the next new worktree of this repository"
            )
        attention = attention or not setup.ok
    for note in opened.notes:
        if not note.startswith("the setup command"):  # (said above, with what to do)
            lines.append(note[:1].upper() + note[1:])
            attention = True
    return "\n".join(lines), attention


def setup_question(setup: SetupCommand) -> dict[str, str]:
    """The question that asks whether ``setup`` may run (:meth:`Questions.ask`'s arguments)."""
    return {
        "title": "Setup command",
        "text": "Run this repository's setup command in its new worktrees?",
        "detail": f"{setup.display}\n(from {setup.source})\nIt runs with your environment and secrets in every new "
        "worktree of this repository; Polter asks again if the command changes.",
        "yes": "Run it",
        "no": "Not now",
    }


class PaneWorktree:
    """A pane's worktree while the pane lives: the record, the header's figures, whether the folder is there.

    The figures are read by :meth:`refresh` in the background (git in subprocesses, never on the event
    loop's hot path), one reading at a time; a refresh asked for during a reading reads once more after
    it. ``on_change`` is called after each reading; ``on_gone`` when the folder is found deleted (by a
    reading or a look at it), once until it is back; the readings run among the host's ``tasks``.
    """

    def __init__(
        self,
        worktree: Worktree,
        *,
        tasks: BackgroundTasks,
        on_change: Callable[[], None],
        on_gone: Callable[[], None] = lambda: None,
    ) -> None:
        self.worktree = worktree
        self.status: WorktreeStatus | None = None
        self.problem: str | None = None
        self.missing = not worktree.path.is_dir()
        self._tasks = tasks
        self._on_change = on_change
        self._on_gone = on_gone
        self._reading = False
        self._again = False
        self._seen_output: float | None = None
        self.readings = 0
        """How many times the figures were read (tests count them)."""

    @property
    def branch(self) -> str:
        return self.worktree.branch

    def view(self) -> WorktreeView:
        return WorktreeView(worktree=self.worktree, status=self.status, missing=self.missing, problem=self.problem)

    def settled(self, last_output: float) -> None:
        """The agent is idle: read the figures if it did anything since they were last read (its screen
        changed), so once after each stretch of work, however short."""
        if last_output != self._seen_output:
            self._seen_output = last_output
            self.refresh()

    def refresh(self) -> None:
        """Read the figures again, in the background."""
        if self._reading:
            self._again = True
            return
        self._reading = True
        self._tasks.run(self._read(), f"reading the worktree of {self.branch}")

    async def _read(self) -> None:
        try:
            while True:
                self._again = False
                try:
                    status = await self.worktree.status()
                except WorktreeError as exc:
                    self.problem = str(exc)
                else:
                    self.status, self.problem = status, None
                    self._set_missing(status.missing)
                self.readings += 1
                self._on_change()
                if not self._again:
                    return
        finally:
            self._reading = False

    def look_at_folder(self) -> bool:
        """Whether the folder just went or came back (a stat)."""
        return self._set_missing(not self.worktree.path.is_dir())

    def _set_missing(self, missing: bool) -> bool:
        if missing == self.missing:
            return False
        self.missing = missing
        if missing:
            self._on_gone()
        return True

    def recreated(self, worktree: Worktree) -> None:
        self.worktree = worktree
        self.missing = not worktree.path.is_dir()
