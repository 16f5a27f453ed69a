"""The elicitation modal alone, driven with Pilot: every field type of the spec with its default, a form not
filled in is not sent (the problem names the field), send, decline and cancel."""

from __future__ import annotations

from support.ui import make_elicitation as elicitation
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.widgets import Checkbox, Input, Select, SelectionList, Static

from polter.gateway.models import ElicitationInfo, ElicitationReply
from polter.window.elicitation_screen import ElicitationScreen


class FormApp(App[None]):
    def __init__(self, info: ElicitationInfo, region: Region | None = None) -> None:
        super().__init__()
        self.info, self.region = info, region
        self.replies: list[ElicitationReply | None] = []

    def compose(self) -> ComposeResult:
        yield Static("the panes would be here")

    def on_mount(self) -> None:
        self.modal = ElicitationScreen(self.info, pane_label="Pane 2 right", region=self.region)
        self.push_screen(self.modal, self.replies.append)


async def test_every_field_type_with_its_default_and_a_form_filled_in_is_sent() -> None:
    app = FormApp(elicitation())
    async with app.run_test(size=(100, 44)) as pilot:
        await pilot.pause()
        modal = app.modal
        assert modal.query_one("#field-name", Input).value == "Ann"
        assert modal.query_one("#field-agree", Checkbox).value is True
        assert modal.query_one("#field-colour", Select).value == "green"
        assert modal.query_one("#field-toppings", SelectionList).selected == ["egg"]
        await pilot.press("ctrl+s")  # age is required and empty: not sent
        await pilot.pause()
        assert app.replies == [] and "age is required" in str(modal.query_one("#form-problem", Static).render())
        modal.query_one("#field-age", Input).value = "41"
        modal.query_one("#field-email", Input).value = "not an address"
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert app.replies == [] and "email is not a valid email" in str(modal.query_one("#form-problem").render())
        modal.query_one("#field-email", Input).value = "ann@example.org"
        modal.query_one("#field-size", Select).value = "l"
        modal.query_one("#field-toppings", SelectionList).select("kale")
        await pilot.click("#accept")
        await pilot.pause()
    assert app.replies == [
        ElicitationReply(
            action="accept",
            content={
                "name": "Ann",
                "email": "ann@example.org",
                "age": 41,
                "score": 9.5,
                "agree": True,
                "colour": "green",
                "size": "l",
                "toppings": ["egg", "kale"],
            },
        )
    ]


async def test_decline_and_cancel() -> None:
    for press, action in (("#decline", "decline"), ("escape", "cancel")):
        app = FormApp(elicitation())
        async with app.run_test(size=(100, 44)) as pilot:
            await pilot.pause()
            if press.startswith("#"):
                await pilot.click(press)
            else:
                await pilot.press(press)
            await pilot.pause()
        assert app.replies == [ElicitationReply(action=action)]


async def test_the_form_sits_over_the_pane_and_a_url_elicitation_shows_its_url() -> None:
    region = Region(50, 4, 50, 40)
    app = FormApp(elicitation(url="https://shop.example/pay/42", requested_schema={}), region)
    async with app.run_test(size=(130, 44)) as pilot:
        await pilot.pause()
        dialog = app.modal.query_one("#form-dialog")
        assert dialog.region.x >= region.x - 1 and "https://shop.example/pay/42" in str(
            app.modal.query_one("#form-url", Static).render()
        )
        await pilot.click("#accept")
        await pilot.pause()
    assert app.replies == [ElicitationReply(action="accept")]
