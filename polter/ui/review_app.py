"""``polter worktree review PANE``: the review screen on its own, with no session running."""

from __future__ import annotations

from textual.app import App

from polter.ui.worktree_screen import ReviewSource, WorktreeReviewScreen

__all__ = ["ReviewApp"]


class ReviewApp(App[None]):
    """Shows one :class:`WorktreeReviewScreen`; leaving it quits."""

    TITLE = "Polter review"

    def __init__(self, source: ReviewSource, *, title: str | None = None) -> None:
        super().__init__()
        self.source = source
        self.review_title = title

    def on_mount(self) -> None:
        self.push_screen(WorktreeReviewScreen(self.source, title=self.review_title), callback=lambda _: self.exit())
