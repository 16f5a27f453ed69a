"""Terminals: PTY processes, the screen model (no Textual) and the pane widget (Textual's Line API)."""
