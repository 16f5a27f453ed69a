"""The ask modal: a call waits for the human, shown over the pane that made it."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, ClassVar, Final

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.geometry import Offset, Region
from textual.widgets import Button, Label, Static

from polter.gateway.models import AskAnswer, AskInfo
from polter.window.plain_app import plain
from polter.window.withdrawable import WithdrawableScreen

__all__ = ["GUARD_SECONDS", "AskScreen", "summarize_arguments"]

GUARD_SECONDS: Final = 0.5
"""Keys and clicks are ignored until the human has not touched anything for this long."""
MAX_ARGUMENT_LINES: Final = 8
MAX_VALUE: Final = 70


class AskScreen(WithdrawableScreen[AskAnswer | None]):
    """Allow once, allow for this pane, or deny a call the pane's role asks about.

    | Key | Does |
    | :- | :- |
    | a | allow once |
    | p | allow for this pane (until its role changes) |
    | d | deny |
    | escape | later: the ask stays pending (the command palette's pending asks) |
    | tab, arrows, enter | choose a button (Deny is focused first) |

    Keys and clicks that come within :data:`GUARD_SECONDS` of the modal appearing, or of an earlier
    ignored key, are ignored: someone typing into a pane when the ask pops up cannot approve it by
    accident.
    """

    DEFAULT_CSS = """
    AskScreen {
        align: left top;
        background: $background 40%;
        & > #ask-dialog {
            width: 64;
            height: auto;
            padding: 0 1;
            border: thick $error 70%;
            border-title-color: $text;
            border-title-style: bold;
            background: $surface;
        }
        & #ask-call { text-style: bold; color: $text-warning; }
        & #ask-arguments { color: $text; margin-left: 2; }
        & #ask-reason { color: $text-muted; margin-top: 1; }
        & #ask-footer { color: $text-muted; }
        & #ask-buttons { height: auto; margin-top: 1; }
        & Button { margin-right: 1; min-width: 10; }
        &.-guarded Button { opacity: 60%; }
    }
    """

    AUTO_FOCUS = "#deny"
    """Focused as the modal shows (a query in ``on_mount`` fails for an ask closed before the modal mounted)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("a", "answer('allow_once')", "Allow once", show=False),
        Binding("p", "answer('allow_pane')", "Allow for this pane", show=False),
        Binding("d", "answer('deny')", "Deny", show=False),
        Binding("escape", "later", "Later", show=False),
        Binding("left,right", "app.focus_previous", show=False),
    ]

    def __init__(
        self,
        ask: AskInfo,
        *,
        pane_label: str | None = None,
        region: Region | None = None,
        position: tuple[int, int] = (1, 1),
        guard: float = GUARD_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        super().__init__()
        self.ask = ask
        self.pane_label = pane_label or ask.pane_title or ask.pane
        self.pane_region = region
        self.position = position
        self.guard = guard
        self.clock = clock
        self.now = now
        self._quiet_since = clock()

    # -- layout ----------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        ask = self.ask
        dialog = Vertical(id="ask-dialog")
        dialog.border_title = plain(f"{self.pane_label} · {ask.role} asks")  # a border title is markup
        with dialog:
            yield Label(Content.from_markup("[b]$call[/b]", call=_subject(ask)), id="ask-call")
            yield Static(plain(summarize_arguments(ask.arguments)), id="ask-arguments")  # the agent's words
            rule = f" (rule: {ask.rule})" if ask.rule else ""
            yield Static(plain(f"{ask.reason}{rule}"), id="ask-reason")
            with Horizontal(id="ask-buttons"):
                yield Button("Allow once (a)", variant="success", id="allow_once")
                yield Button("Allow for pane (p)", variant="warning", id="allow_pane")
                yield Button("Deny (d)", variant="error", id="deny")
            yield Label(self._footer(), id="ask-footer")

    def on_mount(self) -> None:
        self.add_class("-guarded")
        self.set_interval(1.0, self._tick)
        self.call_after_refresh(self._place)

    def _place(self) -> None:
        """Over the pane that asked: centred on it, kept on screen."""
        dialogs = self.query("#ask-dialog")
        if not dialogs:
            return  # answered or withdrawn before its first frame
        dialog = dialogs.first()
        width, height = dialog.outer_size
        screen = self.size
        area = self.pane_region or Region(0, 0, screen.width, screen.height)
        x = area.x + max(0, (area.width - width) // 2)
        y = area.y + max(0, (area.height - height) // 2)
        dialog.styles.offset = Offset(max(0, min(x, screen.width - width)), max(0, min(y, screen.height - height)))

    def _footer(self) -> str:
        seconds = max(0, int((self.ask.expires_at - self.now()).total_seconds()))
        number, of = self.position
        queue = f" · ask {number} of {of}" if of > 1 else ""
        return f"denied by itself in {seconds} s{queue} · esc: later"

    def _tick(self) -> None:
        self._show_footer()
        if self.armed:
            self.remove_class("-guarded")

    def show_position(self, position: tuple[int, int]) -> None:
        self.position = position
        self._show_footer()

    def _show_footer(self) -> None:
        for footer in self.query("#ask-footer").results(Label):  # none once the modal is on its way out
            footer.update(self._footer())

    # -- the guard -------------------------------------------------------------------------------

    @property
    def armed(self) -> bool:
        return self.clock() - self._quiet_since >= self.guard

    def _accept(self) -> bool:
        """Whether an input may act now; an ignored one restarts the quiet period."""
        if self.armed:
            self.remove_class("-guarded")
            return True
        self._quiet_since = self.clock()
        return False

    async def _on_key(self, event: events.Key) -> None:
        """Keys bubble here from the focused button before the app runs their bindings: a key that comes
        too soon stops here, so neither a binding nor a button sees it."""
        if not self._accept():
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

    # -- answers ---------------------------------------------------------------------------------

    def action_answer(self, answer: AskAnswer) -> None:
        self.dismiss(answer)

    def action_later(self) -> None:
        self.dismiss(None)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if not self._accept():
            self.query_one("#deny", Button).focus()  # a click too soon must not leave Enter on "allow"
            return
        match event.button.id:
            case "allow_once" | "allow_pane" | "deny" as answer:
                self.dismiss(answer)


def _subject(ask: AskInfo) -> str:
    if ask.kind in ("sampling", "elicitation"):
        wants = "to use this pane's model (sampling)" if ask.kind == "sampling" else "to ask you a question"
        return f"the server {ask.server} wants {wants}"
    kinds = {"tool": "", "prompt": "prompt ", "resource": "resource ", "skill": "skill ", "escalate": ""}
    where = f"{ask.server}/" if ask.server else ""
    return f"{kinds[ask.kind]}{where}{ask.name}"


def summarize_arguments(arguments: dict[str, Any]) -> str:
    """One ``key: value`` line per argument, long values shortened, at most a few lines."""
    if not arguments:
        return "(no arguments)"
    lines = []
    for key, value in list(arguments.items())[:MAX_ARGUMENT_LINES]:
        text = value if isinstance(value, str) and value.isprintable() else json.dumps(value, ensure_ascii=False)
        text = " ".join(str(text).split())
        if len(text) > MAX_VALUE:
            text = text[: MAX_VALUE - 1] + "…"
        lines.append(f"{key}: {text}")
    if len(arguments) > MAX_ARGUMENT_LINES:
        lines.append(f"… and {len(arguments) - MAX_ARGUMENT_LINES} more")
    return "\n".join(lines)
