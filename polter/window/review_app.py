"""``polter worktree review PANE``: the review screen on its own, with no session running."""

from __future__ import annotations

from polter.window.plain_app import PlainApp
from polter.window.worktree_actions import OpenPane
from polter.window.worktree_screen import ReviewSource, WorktreeReviewScreen

__all__ = ["ReviewApp"]


class ReviewApp(PlainApp):
    """Shows one :class:`WorktreeReviewScreen`; leaving it quits."""

    TITLE = "Polter review"

    def __init__(self, source: ReviewSource, *, title: str | None = None, pane: OpenPane | None = None) -> None:
        """``pane``: a running session's pane that works in the worktree (removing it closes the pane first)."""
        super().__init__()
        self.source = source
        self.review_title = title
        self.pane = pane

    def on_mount(self) -> None:
        screen = WorktreeReviewScreen(self.source, title=self.review_title, pane=self.pane)
        self.push_screen(screen, callback=lambda _: self.exit())
