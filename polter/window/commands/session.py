"""Palette commands for what the prefix keys do to the session and its panes: detach, leave, zoom, the layout,
scrolling back, and every key on one screen. Each says its key, so the palette teaches the keys."""

from __future__ import annotations

from collections.abc import Iterator

from polter.window.commands._base import Command, CommandProvider, pane_name
from polter.window.layout import next_layout
from polter.window.prefix import format_key_name

__all__ = ["SessionCommands"]


class SessionCommands(CommandProvider):
    def commands(self) -> Iterator[Command]:
        screen = self.session_screen
        prefix = format_key_name(screen.prefix)
        focused = self.focused_pane
        if focused is not None:
            name = pane_name(focused)
            zoomed = screen.grid.zoomed is focused
            yield Command(
                f"{'Unzoom' if zoomed else 'Zoom'} {name}",
                screen.action_toggle_zoom,
                f"{'back to every pane' if zoomed else 'it alone fills the window'} ({prefix} z)",
            )
            yield Command(f"Scroll back in {name}", screen.action_scroll_mode, f"its history; q leaves ({prefix} [)")
        following = next_layout(screen.grid.layout_mode)
        yield Command(f"Next layout: {following}", screen.action_next_layout, f"grid, columns, rows ({prefix} space)")
        yield Command(
            "Detach",
            screen.action_detach,
            f"close this window; the programs run on, and polter attach comes back ({prefix} d)",
        )
        yield Command("Leave…", screen.action_quit, f"detach, or end every program ({prefix} q)")
        yield Command("Keys and help", screen.action_help, f"every key Polter uses ({prefix} ?)", discover=True)
