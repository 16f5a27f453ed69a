"""The review screen: what a pane changed in its worktree, against its base, file by file.

It needs only a :class:`ReviewSource` (a :class:`polter.worktrees.Worktree` is one), not the app's
panes, so it runs on its own (``app.push_screen(WorktreeReviewScreen(worktree))``).
"""

from __future__ import annotations

from typing import ClassVar, Protocol

from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.screen import Screen
from textual.widgets import Footer, OptionList, Static
from textual.widgets.option_list import Option

from polter.errors import PolterError
from polter.window.diff_view import DiffView
from polter.window.worktree_actions import OpenPane, merge_worktree, remove_worktree
from polter.worktrees import ChangedFile, FileDiff, ReviewData, Worktree

__all__ = ["ReviewSource", "WorktreeReviewScreen"]


class ReviewSource(Protocol):
    """Where the screen's data comes from (:class:`polter.worktrees.Worktree` is one)."""

    async def review(self) -> ReviewData: ...

    async def file_diff(self, path: str | ChangedFile) -> FileDiff: ...


_MARK_STYLES = {"C": "bold green", "U": "bold yellow"}


class WorktreeReviewScreen(Screen[None]):
    """The changed files on the left (``C`` committed, ``U`` uncommitted, ``CU`` both), the selected
    file's coloured diff on the right, committed part first.

    | Key | Does |
    | :- | :- |
    | escape, q | back |
    | r | read the changes again |
    | m | merge into the base (checked first; offers to commit uncommitted files) |
    | x | remove the worktree and its branch (asks; work that would be lost needs the branch name) |
    | tab / shift+tab | between the files and the diff |

    Merging and removing need a :class:`~polter.worktrees.Worktree` as the source.
    """

    DEFAULT_CSS = """
    WorktreeReviewScreen {
        & > #review-summary { height: auto; padding: 0 1; background: $panel; }
        & > Horizontal { height: 1fr; }
        & #review-files { width: 38%; min-width: 28; max-width: 70; height: 1fr; border: none; }
        & #review-diff { width: 1fr; height: 1fr; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Back"),
        Binding("r", "reload", "Refresh"),
        Binding("m", "merge", "Merge"),
        Binding("x", "remove", "Remove"),
    ]

    def __init__(self, source: ReviewSource, *, title: str | None = None, pane: OpenPane | None = None) -> None:
        """``title`` names what is reviewed in the summary (default: the worktree's pane title); ``pane`` is
        the open pane that works in the worktree (removing closes it first)."""
        super().__init__()
        self.source = source
        self.label = title
        self.pane = pane
        self.data: ReviewData | None = None

    def compose(self) -> ComposeResult:
        yield Static("reading the changes…", id="review-summary")
        with Horizontal():
            yield OptionList(id="review-files")
            yield DiffView(id="review-diff")
        yield Footer()

    def on_mount(self) -> None:
        self.action_reload()

    def action_close(self) -> None:
        self.dismiss(None)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("merge", "remove"):
            return isinstance(self.source, Worktree)
        return True

    @work(exclusive=True, group="change")
    async def action_merge(self) -> None:
        assert isinstance(self.source, Worktree)
        try:
            outcome = await merge_worktree(self.app, self.source)
        except PolterError as exc:
            self.notify(str(exc), title="Merge", severity="error", timeout=15)
            return
        if outcome:
            self.notify(outcome, title="Merge")
        self.action_reload()

    @work(exclusive=True, group="change")
    async def action_remove(self) -> None:
        assert isinstance(self.source, Worktree)
        try:
            outcome = await remove_worktree(self.app, self.source, pane=self.pane)
        except PolterError as exc:
            self.notify(str(exc), title="Remove", severity="error", timeout=15)
            return
        if outcome:
            self.notify(outcome, title="Remove")
            self.dismiss(None)

    @work(exclusive=True, group="review")
    async def action_reload(self) -> None:
        """Read the changed files again, keeping the selected file when it is still changed."""
        try:
            data = await self.source.review()
        except PolterError as exc:
            self.query_one("#review-summary", Static).update(Text(str(exc), style="bold red"))
            return
        self.show(data)

    def show(self, data: ReviewData) -> None:
        files = self.query_one("#review-files", OptionList)
        selected = self.selected
        self.data = data
        self.query_one("#review-summary", Static).update(self._summary(data))
        files.clear_options()
        files.add_options([Option(_file_label(file), id=file.path) for file in data.files])
        if not data.files:
            self.query_one(DiffView).show([], empty=f"No changes against {data.worktree.base} yet.")
            return
        paths = [file.path for file in data.files]
        files.highlighted = paths.index(selected.path) if selected and selected.path in paths else 0
        files.focus()

    @property
    def selected(self) -> ChangedFile | None:
        files = self.query_one("#review-files", OptionList)
        if self.data is None or files.highlighted is None or files.highlighted >= len(self.data.files):
            return None
        return self.data.files[files.highlighted]

    @on(OptionList.OptionHighlighted, "#review-files")
    def _highlighted(self) -> None:
        if (file := self.selected) is not None:
            self._load_diff(file)

    @work(exclusive=True, group="diff")
    async def _load_diff(self, file: ChangedFile) -> None:
        view = self.query_one(DiffView)
        try:
            diff = await self.source.file_diff(file)
        except PolterError as exc:
            view.show([("error", str(exc))])
            return
        branch = self.data.worktree.branch if self.data is not None else "the branch"
        view.show(
            [
                (f"{file.path} · committed on {branch}", diff.committed),
                (f"{file.path} · uncommitted in the worktree", diff.uncommitted),
            ],
            empty=f"{file.path}: no textual difference",
        )
        if diff.truncated:
            self.notify(f"{file.path}: the diff is too large; it was cut short", severity="warning")

    def _summary(self, data: ReviewData) -> Text:
        worktree = data.worktree
        summary = Text()
        summary.append(f"{self.label or worktree.title} ", style="bold")
        summary.append(worktree.branch, style="bold cyan")
        summary.append(f" against {worktree.base}: {data.ahead} commit(s) ahead, {data.behind} behind · ")
        insertions = sum(file.insertions for file in data.files)
        deletions = sum(file.deletions for file in data.files)
        summary.append(f"+{insertions}", style="green")
        summary.append(" ")
        summary.append(f"-{deletions}", style="red")
        summary.append(f" · {len(data.files)} file{'s' if len(data.files) != 1 else ''}")
        summary.append("   C", style=_MARK_STYLES["C"])
        summary.append(" committed  ")
        summary.append("U", style=_MARK_STYLES["U"])
        summary.append(" uncommitted")
        if not worktree.path.is_dir():
            summary.append(
                f"\nthe folder {worktree.path} was deleted: only committed changes are shown", style="yellow"
            )
        return summary


def _file_label(file: ChangedFile) -> Text:
    label = Text()
    for mark in "CU":
        label.append(mark if mark in file.marks else " ", style=_MARK_STYLES[mark])
    change = file.committed or file.uncommitted
    label.append(" ")
    if change is not None and change.binary:
        label.append("   binary", style="dim")
    else:
        label.append(f"{'+' + str(file.insertions):>5}", style="green")
        label.append(f" {'-' + str(file.deletions):<5}", style="red")
    label.append(f" {file.path}")
    kinds = {change.kind for change in (file.committed, file.uncommitted) if change is not None}
    if "renamed" in kinds and change is not None and change.old_path:
        label.append(f" ← {change.old_path}", style="dim")
    elif kinds & {"added", "deleted"}:
        label.append(f" ({'/'.join(sorted(kinds & {'added', 'deleted'}))})", style="dim")
    return label
