"""The elicitation modal: a server asks the human to fill in a form, shown over the pane whose call caused it
(its CLI could not show it). Every field type of the spec: text (with its format), numbers, yes/no, one
choice, several choices; defaults filled in; required fields marked. A URL-mode elicitation shows the URL."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.geometry import Offset, Region
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Input, Label, Select, SelectionList, Static

from polter.gateway.forms import FormError, FormField, check_answer, parse_form
from polter.gateway.models import ElicitationInfo, ElicitationReply
from polter.window.plain_app import plain
from polter.window.withdrawable import WithdrawableScreen

__all__ = ["ElicitationScreen"]


class ElicitationScreen(WithdrawableScreen[ElicitationReply | None]):
    """Fill in a server's form and send it, decline it, or dismiss it (cancel).

    | Key | Does |
    | :- | :- |
    | tab, shift+tab | next, previous field |
    | ctrl+s | send the form |
    | escape | cancel (the server is told the human dismissed it) |

    A form that is not filled in (a required field empty, a value of the wrong kind) is not sent: the
    problem shows under the form, naming the field.
    """

    DEFAULT_CSS = """
    ElicitationScreen {
        align: left top;
        background: $background 40%;
        & > #form-dialog {
            width: 72;
            height: auto;
            max-height: 90%;
            padding: 0 1;
            border: thick $accent 70%;
            border-title-color: $text;
            border-title-style: bold;
            background: $surface;
        }
        & #form-message { text-style: bold; margin-bottom: 1; }
        & #form-url { color: $text-accent; margin-bottom: 1; }
        & #form-fields { height: auto; max-height: 32; }
        & .form-label { color: $text-muted; margin-top: 1; }
        & Checkbox { margin-top: 1; }
        & .form-label.-required { color: $text; }
        & #form-problem { color: $text-error; height: auto; }
        & #form-buttons { height: auto; margin-top: 1; }
        & Button { margin-right: 1; min-width: 10; }
        & SelectionList { height: auto; max-height: 6; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+s", "send", "Send", show=False),
        Binding("escape", "cancel", "Cancel", show=False),
    ]

    def __init__(
        self, elicitation: ElicitationInfo, *, pane_label: str | None = None, region: Region | None = None
    ) -> None:
        super().__init__()
        self.elicitation = elicitation
        self.pane_label = pane_label or elicitation.pane_title or elicitation.pane
        self.pane_region = region
        self.form = parse_form(elicitation.requested_schema) if elicitation.url is None else None

    def compose(self) -> ComposeResult:
        info = self.elicitation
        dialog = Vertical(id="form-dialog")
        dialog.border_title = plain(f"{self.pane_label} · {info.server} asks")  # a border title is markup
        with dialog:
            yield Static(plain(info.message), id="form-message")
            if info.url is not None:
                yield Static(plain(f"Open: {info.url}"), id="form-url")
            with VerticalScroll(id="form-fields"):
                for name, field in self.form.properties.items() if self.form else ():
                    required = name in self.form.required if self.form else False
                    if field.type != "boolean":  # (a checkbox carries its own label)
                        label = Label(plain(_label(name, field, required)), classes="form-label")
                        label.set_class(required, "-required")
                        yield label
                    yield _widget(name, field, required)
            yield Static("", id="form-problem")
            with Horizontal(id="form-buttons"):
                yield Button("Opened it" if info.url else "Send (ctrl+s)", variant="success", id="accept")
                yield Button("Decline", variant="error", id="decline")
                yield Button("Cancel (esc)", id="cancel")

    def on_mount(self) -> None:
        self.call_after_refresh(self._place)

    def _place(self) -> None:
        """Over the pane whose call asked, centred on it and kept on screen (where the ask modal goes)."""
        for dialog in self.query("#form-dialog"):
            width, height = dialog.outer_size
            area = self.pane_region or Region(0, 0, *self.size)
            x = min(area.x + max(0, (area.width - width) // 2), max(0, self.size.width - width))
            y = min(area.y + max(0, (area.height - height) // 2), max(0, self.size.height - height))
            dialog.styles.offset = Offset(x, y)

    # -- answers ---------------------------------------------------------------------------------------

    def content(self) -> dict[str, Any]:
        """What the form holds now: a field left empty is left out."""
        values: dict[str, Any] = {}
        for name, field in self.form.properties.items() if self.form else ():
            value = _value(name, self.query_one(f"#field-{name}"), field)
            if value is not None:
                values[name] = value
        return values

    def action_send(self) -> None:
        if self.form is None:
            self.dismiss(ElicitationReply(action="accept"))
            return
        try:
            content = check_answer(self.form, self.content())
        except FormError as exc:
            self.query_one("#form-problem", Static).update(plain(str(exc)))
            return
        self.dismiss(ElicitationReply(action="accept", content=content))

    def action_cancel(self) -> None:
        self.dismiss(ElicitationReply(action="cancel"))

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        event.stop()
        match event.button.id:
            case "accept":
                self.action_send()
            case "decline":
                self.dismiss(ElicitationReply(action="decline"))
            case "cancel":
                self.action_cancel()


def _label(name: str, field: FormField, required: bool) -> str:
    title = field.title or name
    hint = f" ({field.description})" if field.description else ""
    return f"{title}{' *' if required else ''}{hint}"


def _widget(name: str, field: FormField, required: bool) -> Widget:
    """The widget for one field, its default filled in (compact: a form of eight fields fits a pane). Its labels
    are the server's words: plain content, never markup."""
    identity = f"field-{name}"
    choices = field.choices()
    if field.type == "boolean":
        label = plain(_label(name, field, required))
        return Checkbox(label, value=field.default is True, id=identity, compact=True)
    if field.type == "array":
        chosen = set(field.default) if isinstance(field.default, list) else set()
        options = [
            (plain(choice.title or choice.const), choice.const, choice.const in chosen) for choice in choices or []
        ]
        return SelectionList[str](*options, id=identity)
    if choices is not None:
        default = field.default if isinstance(field.default, str) else Select.NULL
        return Select(
            [(plain(choice.title or choice.const), choice.const) for choice in choices],
            value=default,
            id=identity,
            allow_blank=True,
        )
    kind = {"integer": "integer", "number": "number"}.get(field.type, "text")
    default = "" if field.default is None else str(field.default)
    placeholder = field.format or ("a whole number" if kind == "integer" else "a number" if kind == "number" else "")
    return Input(default, placeholder=placeholder, type=kind, id=identity, compact=True)  # type: ignore[arg-type]


def _value(name: str, widget: Widget, field: FormField) -> Any:
    if isinstance(widget, Checkbox):
        return widget.value
    if isinstance(widget, SelectionList):
        return list(widget.selected) or None
    if isinstance(widget, Select):
        return None if widget.value is Select.NULL else widget.value
    assert isinstance(widget, Input)
    text = widget.value.strip()
    if not text:
        return None
    try:
        if field.type == "integer":
            return int(text)
        if field.type == "number":
            return float(text)
    except ValueError:
        raise FormError(f"{name} is {'a whole number' if field.type == 'integer' else 'a number'}") from None
    return text
