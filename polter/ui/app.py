"""The Polter app: it composes the screens and wires the services; the screens do the work."""

from __future__ import annotations

import argparse
import gc
from typing import ClassVar

from textual.app import App
from textual.binding import Binding, BindingType

from polter.errors import ConfigError
from polter.terminal.launch import LaunchSpec
from polter.ui.layout import LayoutMode
from polter.ui.multiplexer import DEFAULT_PREFIX, MultiplexerScreen

__all__ = ["MAX_PANES", "PolterApp"]

MAX_PANES = 16


class PolterApp(App[None], inherit_bindings=False):
    """Panes of AI CLIs and shells. Textual's own ``ctrl+q``/``ctrl+c`` bindings are not inherited:
    those keys belong to the programs in the panes (``ctrl+q`` also resumes a terminal paused by
    ``ctrl+s``). Quit with the prefix key then ``q``, or from the command palette."""

    TITLE = "Polter"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+p", "command_palette", "Commands", show=False, priority=True),
    ]

    def __init__(
        self,
        specs: list[LaunchSpec],
        *,
        layout_mode: LayoutMode = "grid",
        prefix: str = DEFAULT_PREFIX,
        scrollback: int = 10_000,
    ) -> None:
        super().__init__()
        _check_pane_count(len(specs))
        if not prefix.strip():
            raise ConfigError("must name a key, e.g. ctrl+a", field="--prefix")
        self.multiplexer = MultiplexerScreen(specs, layout_mode=layout_mode, prefix=prefix, scrollback=scrollback)

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> PolterApp:
        """The app for ``polter [--panes N] [--layout MODE] [--prefix KEY]``: N shells."""
        _check_pane_count(args.panes)
        return cls([LaunchSpec.shell() for _ in range(args.panes)], layout_mode=args.layout, prefix=args.prefix)

    def on_mount(self) -> None:
        """Show the panes; once they are built, ``gc.freeze()`` the app's long-lived objects (DOM,
        CSS, caches) so that a full collection during a flood of output scans only what changed
        since (measured: full collections went from 50–200 ms to a quarter of that)."""
        self.push_screen(self.multiplexer)
        self.call_after_refresh(gc.freeze)

    async def action_quit(self) -> None:
        """Quit (also the palette's Quit): asks first if programs still run."""
        self.multiplexer.action_quit()

    async def on_unmount(self) -> None:
        await self.multiplexer.grid.close_all()
        gc.unfreeze()  # the objects become collectable again (matters when apps run one after another)


def _check_pane_count(count: int) -> None:
    if not 1 <= count <= MAX_PANES:
        raise ConfigError(f"must be between 1 and {MAX_PANES}, not {count}", field="--panes")
