"""Terminals: PTY processes, the screen model (no Textual) and the pane widget (Textual's Line API).

The screen engine's hot modules may load compiled (`polter.terminal._native`)."""

from polter.terminal._native import search_path

__path__[:0] = search_path()
