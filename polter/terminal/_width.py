"""Cell widths of characters and grapheme clusters, from wcwidth (the library pyte uses).

A cell holds one grapheme cluster: a character with whatever joins it (combining marks, a
variation selector, an emoji modifier, a zero-width joiner and the next pictograph, a second
regional indicator). A cluster takes 1 or 2 cells, as `wcwidth.width` measures it. That is what
Rich measures when the pane is drawn and what the programs in the pane measure with their own
width libraries, so ``❤️`` (with VS16), ``👩‍💻`` or ``🇩🇪`` take two cells everywhere.

Most text needs none of this. ``NOT_NARROW.search(text)`` tells in C whether a run holds any
character that is not simply one cell: those take the per-character path in the screen model.
"""

from __future__ import annotations

import re

import wcwidth

__all__ = ["NOT_NARROW", "cluster_width", "joins"]

_VERSION = wcwidth.list_versions()[-1]


def _ranges_class(ranges: list[tuple[int, int]]) -> str:
    def esc(cp: int) -> str:
        return f"\\U{cp:08x}"

    return "".join(esc(a) if a == b else f"{esc(a)}-{esc(b)}" for a, b in ranges)


def _bmp(ranges: list[tuple[int, int]]) -> list[tuple[int, int]]:
    return [(a, min(b, 0xFFFF)) for a, b in ranges if a <= 0xFFFF]


_ZERO: list[tuple[int, int]] = [r for r in wcwidth.ZERO_WIDTH[_VERSION] if r != (0, 0)]
_WIDE: list[tuple[int, int]] = list(wcwidth.WIDE_EASTASIAN[_VERSION])
_CONTROL = [(0x00, 0x1F), (0x7F, 0x9F)]
# Narrow characters with an emoji presentation (❤ ☺ ✔ © …): after a zero-width joiner they join
# the previous cluster, so they must take the per-character path too. ASCII ones (# * 0-9, the
# keycap bases) never join a previous cluster and stay on the fast path.
_EMOJI_CAPABLE = [r for ranges in wcwidth.VS16_NARROW_TO_WIDE.values() for r in ranges if r[0] > 0x7F]

#: Matches every character that is not simply one cell: zero-width, wide, control, emoji-capable,
#: and everything outside the BMP. A class of BMP ranges plus one astral range compiles to a
#: bitmap lookup; the astral tables would be scanned range by range (0.5 µs instead of 70 µs for
#: a 60-character line).
NOT_NARROW = re.compile(f"[{_ranges_class(_bmp(_CONTROL + _ZERO + _WIDE + _EMOJI_CAPABLE))}\\U00010000-\\U0010ffff]")

_widths: dict[str, int] = {}


def cluster_width(cluster: str) -> int:
    """Cells taken by one grapheme cluster: 0 (nothing visible on its own), 1 or 2."""
    width = _widths.get(cluster)
    if width is None:
        width = max(0, min(2, wcwidth.width(cluster)))
        if len(_widths) < 65_536:
            _widths[cluster] = width
    return width


def joins(cluster: str, char: str) -> bool:
    """Whether ``char`` continues the grapheme cluster ``cluster`` (no boundary between them)."""
    text = cluster + char
    return wcwidth.grapheme_boundary_before(text, len(text)) == 0
