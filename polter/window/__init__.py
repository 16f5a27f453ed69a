"""The Textual app: screens, widgets, command-palette providers and modals.

Importing this package first asks Textual for :data:`SCREEN_FPS` frames a second through its public
``TEXTUAL_FPS`` setting, which Textual reads once, when it is imported (so ``polter`` imports no
Textual before this; a ``TEXTUAL_FPS`` the user set wins). The variable is not left in the
environment, so the programs in the panes do not inherit it.
"""

import os
import sys
from typing import Final

SCREEN_FPS: Final = 120
"""How often a screen may be composed (Textual's default is 60). Textual composes on a timer, and
after a slow frame the timer skips to the slot after next: up to 33 ms between a pane's echo and
the screen showing it at 60. The panes pace their own repaints (:mod:`polter.window.terminal_view`), so
a faster screen costs nothing while they are quiet and halves that wait."""

if "TEXTUAL_FPS" not in os.environ and "textual.constants" not in sys.modules:
    os.environ["TEXTUAL_FPS"] = str(SCREEN_FPS)
    try:
        import textual.constants  # noqa: F401  # reads TEXTUAL_FPS now, once
    finally:
        del os.environ["TEXTUAL_FPS"]
