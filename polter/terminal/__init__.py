"""A terminal's pure parts: the screen engine (raw PTY bytes in, styled rows, cursor and replies out;
:mod:`~polter.terminal.screen`), what a program expects to read for a key (:mod:`~polter.terminal.keys`), and
what a pane runs (:mod:`~polter.terminal.launch`). No Textual, no PTY: the host runs programs
(:mod:`polter.host.hosted_terminal`), the window draws them (:mod:`polter.window.terminal_view`).

The screen engine's hot modules may load compiled (:mod:`polter.terminal._native`).
"""

from polter.terminal._native import search_path

__path__[:0] = search_path()
