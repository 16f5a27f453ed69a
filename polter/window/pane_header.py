"""The one-line header above a pane: number, title, badges (role, agent state, ...) and status."""

from __future__ import annotations

from typing import Final, Literal

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.containers import Horizontal
from textual.reactive import reactive
from textual.widgets import Label

from polter.window.plain_app import plain

__all__ = ["BadgeVariant", "PaneHeader", "PaneStatus"]

PaneStatus = Literal["starting", "running", "exited", "failed"]
BadgeVariant = Literal["default", "primary", "success", "warning", "error"]

MIN_TITLE: Final = 8
"""Cells the title keeps before the header's least telling parts give way in a narrow pane."""


class PaneHeader(Horizontal):
    """Shows which pane this is and how its program is doing.

    Later features add what they know as *badges* (``set_badge("role", "reviewer")``): each is a
    small label between the title and the status, ordered by when it was first set, styled by
    variant, and removed with ``set_badge(key, None)``.

    A narrow pane (four of them in an 80-column terminal) cannot show it all: first a plain
    ``running`` gives way, then the adapter's name, then the worktree's figures, so the role, phase and
    state stay in sight; in a narrower one (five in 80 columns) the title and then the phase too, rather
    than the state being cut off at the edge. What gave way first comes back if the later ones left room.
    """

    DEFAULT_CSS = """
    PaneHeader {
        height: 1;
        width: 1fr;
        background: $panel;
        color: $text-muted;
        & > Label { height: 1; padding: 0 1; }
        & > #pane-number { text-style: bold; }
        & > #pane-title { width: 1fr; text-overflow: ellipsis; text-wrap: nowrap; padding-left: 0; }
        & > .badge { background: $boost; color: $text; margin-left: 1; }
        & > .badge.-primary { background: $primary-muted; color: $text-primary; }
        & > .badge.-success { background: $success-muted; color: $text-success; }
        & > .badge.-warning { background: $warning-muted; color: $text-warning; }
        & > .badge.-error { background: $error-muted; color: $text-error; }
        & > #pane-status.-running { color: $text-success; }
        & > #pane-status.-exited { color: $text-warning; }
        & > #pane-status.-failed { color: $text-error; text-style: bold; }
    }
    """

    number: reactive[int] = reactive(1)
    title: reactive[str] = reactive("")
    status: reactive[str] = reactive("starting")
    """Free text, e.g. ``running``, ``exited 1``, ``killed by SIGKILL``, ``failed to start``."""
    status_kind: reactive[PaneStatus] = reactive("starting")
    position: reactive[str] = reactive("")
    """Where the view is when it is not live, e.g. ``scroll 120/4000``; empty when live."""

    def __init__(self) -> None:
        super().__init__()
        self._pending: dict[str, tuple[str | None, BadgeVariant, str | None]] = {}

    def compose(self) -> ComposeResult:
        yield Label(str(self.number), id="pane-number")
        yield Label(plain(self.title), id="pane-title")  # a program names itself
        yield Label("", id="pane-position")
        yield Label(plain(self.status), id="pane-status", classes=f"-{self.status_kind}")

    def watch_number(self, number: int) -> None:
        if self.is_mounted:
            self.query_one("#pane-number", Label).update(str(number))

    def watch_title(self, title: str) -> None:
        if self.is_mounted:
            self.query_one("#pane-title", Label).update(plain(title))

    def watch_status(self, status: str) -> None:
        if self.is_mounted:
            self.query_one("#pane-status", Label).update(plain(status))
            self._fit()

    def watch_status_kind(self, old: PaneStatus, new: PaneStatus) -> None:
        if self.is_mounted:
            self.query_one("#pane-status", Label).remove_class(f"-{old}").add_class(f"-{new}")
            self._fit()

    def on_resize(self, event: events.Resize) -> None:
        self._fit()

    def _fit(self) -> None:
        """Hide what a narrow header cannot hold, least telling first (see the class docstring), then show again
        what fits in the room the later ones left."""
        status = next(iter(self.query("#pane-status").results(Label)), None)
        if status is None:  # a fit scheduled before the pane was removed with its header
            return
        sheddable = [status] if self.status_kind == "running" else []
        for part in ("#badge-adapter", "#badge-worktree", "#pane-title", "#badge-phase"):
            sheddable += self.query(part).results(Label)
        status.display = True
        for label in sheddable:
            label.display = True
        shed = []
        for label in sheddable:
            if self._needed() <= self.size.width:
                break
            label.display = False
            shed.append(label)
        for label in reversed(shed[:-1]):
            label.display = True
            label.display = self._needed() <= self.size.width

    def _needed(self) -> int:
        """Cells the shown parts take, with the title at its minimum."""
        needed = 0
        for label in self.query(Label):
            if label.display and label.id == "pane-title":
                needed += MIN_TITLE
            elif label.display:
                needed += cell_len(str(label.content)) + 2 + label.has_class("badge")  # padding, a badge's margin
        return needed

    def watch_position(self, position: str) -> None:
        if self.is_mounted:
            label = self.query_one("#pane-position", Label)
            label.update(plain(position))
            label.display = bool(position)

    def on_mount(self) -> None:
        for label in self.query("#pane-position").results(Label):  # (none when the window closes meanwhile)
            label.display = bool(self.position)
        pending, self._pending = self._pending, {}
        for key, (text, variant, tooltip) in pending.items():
            self.set_badge(key, text, variant, tooltip=tooltip)

    def set_badge(
        self, key: str, text: str | None, variant: BadgeVariant = "default", *, tooltip: str | None = None
    ) -> None:
        """Show ``text`` in the badge ``key`` (created before the status), or remove it when ``None``;
        ``tooltip`` explains it on hover. Badges set before the header is mounted appear when it is."""
        if not self.is_mounted:
            self._pending[key] = (text, variant, tooltip)
            return
        badge_id = f"badge-{key}"
        existing = self.query(f"#{badge_id}")
        if text is None:
            existing.remove()
            self.call_after_refresh(self._fit)
            return
        if existing:
            label = existing.first(Label)
            if str(label.content) != text:
                label.update(plain(text))
            label.set_classes(f"badge -{variant}")
        else:
            label = Label(plain(text), id=badge_id, classes=f"badge -{variant}")
            self.mount(label, before="#pane-position")
        label.tooltip = None if tooltip is None else plain(tooltip)  # the CLI's own words, as it said them
        self.call_after_refresh(self._fit)

    def badge(self, key: str) -> str | None:
        """The text of badge ``key``, if shown."""
        for label in self.query(f"#badge-{key}").results(Label):
            return str(label.content)
        return None
