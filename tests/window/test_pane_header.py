"""The pane header in a narrow pane: the least telling parts give way so role, phase and state stay."""

from __future__ import annotations

from textual.app import App, ComposeResult

from polter.window.pane_header import PaneHeader


class HeaderApp(App[None]):
    def compose(self) -> ComposeResult:
        yield PaneHeader()


def shown(header: PaneHeader) -> list[str]:
    return [str(label.content) for label in header.children if label.display and str(label.content)]


async def test_a_narrow_header_drops_running_then_the_adapter_and_keeps_role_phase_and_state() -> None:
    app = HeaderApp()
    async with app.run_test(size=(120, 3)) as pilot:
        header = app.query_one(PaneHeader)
        header.title, header.status, header.status_kind = "admin agent", "running", "running"
        header.set_badge("adapter", "Claude Code")
        header.set_badge("role", "terraria-admin", "primary")
        header.set_badge("phase", "research")
        header.set_badge("state", "idle")
        await pilot.pause()
        everything = ["1", "admin agent", "Claude Code", "terraria-admin", "research", "idle", "running"]
        assert shown(header) == everything

        await pilot.resize_terminal(60, 3)
        await pilot.pause()
        assert shown(header) == ["1", "admin agent", "Claude Code", "terraria-admin", "research", "idle"]

        await pilot.resize_terminal(40, 3)
        await pilot.pause()
        assert shown(header) == ["1", "admin agent", "terraria-admin", "research", "idle"]

        header.status, header.status_kind = "exited 1", "exited"  # an exit is news: it never gives way
        await pilot.pause()
        assert shown(header)[-1] == "exited 1" and "Claude Code" not in shown(header)

        header.set_badge("phase", None)
        header.status, header.status_kind = "running", "running"
        await pilot.resize_terminal(120, 3)
        await pilot.pause()
        assert shown(header) == [part for part in everything if part != "research"]
