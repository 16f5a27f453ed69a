"""The Polter app: it composes the screens and wires the services; the screens do the work."""

from __future__ import annotations

import argparse
import gc
from typing import ClassVar

from textual.actions import SkipAction
from textual.app import App
from textual.binding import Binding, BindingType

from polter.errors import ConfigError
from polter.session.launch import Launch
from polter.session.workspace import Workspace
from polter.terminal.launch import LaunchSpec
from polter.ui.layout import LayoutMode
from polter.ui.multiplexer import DEFAULT_PREFIX, MultiplexerScreen

__all__ = ["MAX_PANES", "PolterApp"]

MAX_PANES = 16


class PolterApp(App[None], inherit_bindings=False):
    """Panes of AI CLIs under roles (a :class:`Launch`), or of plain programs (``specs``, no gateway).

    Textual's own ``ctrl+q``/``ctrl+c``/``ctrl+p`` bindings are not inherited: those keys belong to the
    programs in the panes (``ctrl+q`` also resumes a terminal paused by ``ctrl+s``, ``ctrl+p`` is the
    shell's previous command). Quit with the prefix key then ``q``; open the command palette with the
    prefix key then ``:`` or ``p``, or with ``palette_key`` if one is configured (``--palette-key``)."""

    TITLE = "Polter"
    ENABLE_COMMAND_PALETTE = False  # no ctrl+p binding from Textual; the palette itself stays usable (__init__)
    BINDINGS: ClassVar[list[BindingType]] = [
        # Textual's key for the palette, inert unless palette_key is set (the keymap moves it there).
        Binding("ctrl+p", "palette_key", "Commands", id="polter.palette", show=False, priority=True),
    ]

    def __init__(
        self,
        specs: list[LaunchSpec] | None = None,
        *,
        launch: Launch | None = None,
        layout_mode: LayoutMode = "grid",
        prefix: str = DEFAULT_PREFIX,
        palette_key: str | None = None,
        scrollback: int = 10_000,
    ) -> None:
        super().__init__()
        self.use_command_palette = True
        if launch is not None:
            layout_mode, prefix, palette_key = launch.layout, launch.prefix, launch.palette_key
        if not prefix.strip():
            raise ConfigError("must name a key, e.g. ctrl+a", field="--prefix")
        if palette_key is not None and not palette_key.strip():
            palette_key = None
        if palette_key == prefix:
            raise ConfigError(f"{palette_key} is already the prefix key", field="--palette-key")
        self.palette_key = palette_key
        """A key that opens the command palette directly (``None``: only the prefix key then ``:``/``p``)."""
        self.workspace: Workspace | None = None
        if launch is None:
            _check_pane_count(len(specs or []))
            self.multiplexer: MultiplexerScreen = MultiplexerScreen(
                specs or [], layout_mode=layout_mode, prefix=prefix, scrollback=scrollback
            )
            return
        from polter.ui.workspace_screen import WorkspaceScreen

        _check_pane_count(len(launch.plans))
        self.workspace = Workspace(
            servers=launch.servers,
            servers_file=launch.servers_file,
            ask_timeout=launch.ask_timeout,
            backends=launch.backends,
        )
        self.multiplexer = WorkspaceScreen(
            self.workspace,
            launch.plans,
            registry=launch.registry,
            layout_mode=layout_mode,
            prefix=prefix,
            scrollback=scrollback,
            hint=launch.hint,
        )

    @classmethod
    def from_args(cls, args: argparse.Namespace) -> PolterApp:
        """The app for ``polter`` and its options (see :mod:`polter.cli.app`)."""
        from polter.session.launch import plan_launch

        return cls(launch=plan_launch(args))

    def on_mount(self) -> None:
        """Show the panes; once they are built, ``gc.freeze()`` the app's long-lived objects (DOM,
        CSS, caches) so that a full collection during a flood of output scans only what changed
        since (measured: full collections went from 50–200 ms to a quarter of that)."""
        if self.palette_key is not None:
            self.update_keymap({"polter.palette": self.palette_key})
        self.push_screen(self.multiplexer)
        self.call_after_refresh(gc.freeze)

    def action_palette_key(self) -> None:
        """The direct palette key: opens the palette if one is configured, else the key goes on to
        the focused pane (``SkipAction``), so ``ctrl+p`` reaches the program by default."""
        if self.palette_key is None:
            raise SkipAction()
        self.action_command_palette()

    async def action_quit(self) -> None:
        """Quit (also the palette's Quit): asks first if programs still run."""
        self.multiplexer.action_quit()

    async def on_unmount(self) -> None:
        await self.multiplexer.grid.close_all()
        if self.workspace is not None:
            await self.workspace.aclose()
        gc.unfreeze()  # the objects become collectable again (matters when apps run one after another)


def _check_pane_count(count: int) -> None:
    if not 1 <= count <= MAX_PANES:
        raise ConfigError(f"must be between 1 and {MAX_PANES}, not {count}", field="--panes")
