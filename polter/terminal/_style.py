"""Cell styles and SGR (Select Graphic Rendition): parsing, interning and a transition cache.

A style is an immutable, hashable `Style` tuple. Styles are interned so that equal styles are
usually the same object: rows store references, renderers can cache per style, and the SGR
transition cache maps ``(current style, SGR sequence)`` to the next style with one dict lookup.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "DEFAULT_STYLE",
    "Style",
    "apply_sgr",
    "blank_style",
    "intern",
    "sgr_transition",
    "style_transitions",
]


class Style(NamedTuple):
    """How one cell is drawn. Colours use Rich's syntax; ``None`` is the terminal's default colour.

    Colours: ``"red"`` … ``"white"``, ``"bright_red"`` … ``"bright_white"``, ``"color(n)"`` for
    the 256-colour palette (n ≥ 16) and ``"#rrggbb"`` for 24-bit colour. ``reverse`` is a flag:
    the renderer swaps foreground and background itself (default colours included).
    """

    fg: str | None = None
    bg: str | None = None
    bold: bool = False
    dim: bool = False
    italic: bool = False
    underline: bool = False
    blink: bool = False
    reverse: bool = False
    strike: bool = False
    conceal: bool = False


DEFAULT_STYLE = Style()

_NAMES = ("black", "red", "green", "yellow", "blue", "magenta", "cyan", "white")
#: The 256-colour palette index → Rich colour (0–15 by name so ``31`` and ``38;5;1`` are equal).
PALETTE: tuple[str, ...] = (
    _NAMES + tuple(f"bright_{name}" for name in _NAMES) + tuple(f"color({n})" for n in range(16, 256))
)

# Interning is bounded: a truecolour gradient can produce any number of styles. When the table is
# full it starts again; cells keep their (equal, no longer identical) styles, so nothing breaks.
_MAX_INTERNED = 50_000
_interned: dict[Style, Style] = {DEFAULT_STYLE: DEFAULT_STYLE}
# (id(style), "\x1b[...m") → next style. Keyed by id() because hashing a 10-field tuple costs
# more than the lookup; ids stay valid because interned styles are alive while cached here.
_transitions: dict[tuple[int, str], Style] = {}
_blanks: dict[Style, Style] = {}


def intern(style: Style) -> Style:
    """The canonical object equal to ``style``."""
    found = _interned.get(style)
    if found is not None:
        return found
    if len(_interned) >= _MAX_INTERNED:
        _interned.clear()
        _transitions.clear()
        _blanks.clear()
        _interned[DEFAULT_STYLE] = DEFAULT_STYLE
        _interned[style] = style
        return style
    _interned[style] = style
    return style


def blank_style(style: Style) -> Style:
    """The style of cells erased while ``style`` is current: only its background survives (BCE)."""
    found = _blanks.get(style)
    if found is None:
        found = _blanks[style] = intern(Style(bg=style.bg)) if style.bg is not None else DEFAULT_STYLE
    return found


def style_transitions() -> dict[tuple[int, str], Style]:
    """The transition cache itself, for the feed loop's inlined lookup (``(id(style), sequence)``)."""
    return _transitions


def sgr_transition(style: Style, sequence: str) -> Style:
    """The style after the complete SGR escape ``sequence`` (``"\\x1b[...m"``), cached."""
    key = (id(style), sequence)
    found = _transitions.get(key)
    if found is None:
        found = apply_sgr(style, sequence[2:-1])
        if len(_transitions) > 4 * _MAX_INTERNED:
            _transitions.clear()
        # Keep `style` interned (alive) so that its id cannot be reused by another object.
        if _interned.get(style) is style:
            _transitions[key] = found
    return found


def _colour(parts: list[str], i: int) -> tuple[str | None, int]:
    """An extended colour in ``;`` form starting at ``parts[i]`` (the 5 or 2): (colour, next index)."""
    kind = parts[i] if i < len(parts) else ""
    if kind == "5":
        if i + 1 < len(parts):
            return _indexed(parts[i + 1]), i + 2
        return None, i + 1
    if kind == "2":
        if i + 3 < len(parts):
            return _rgb(parts[i + 1], parts[i + 2], parts[i + 3]), i + 4
        return None, len(parts)
    return None, i + 1


def _colon_colour(sub: list[str]) -> str | None:
    """An extended colour in ``:`` form: ``sub`` is ``["38", "2", "", r, g, b]`` or ``["38", "5", n]``."""
    if len(sub) < 2:
        return None
    if sub[1] == "5" and len(sub) >= 3:
        return _indexed(sub[2])
    if sub[1] == "2":
        if len(sub) >= 6:  # 38:2:<colour space>:r:g:b
            return _rgb(sub[3], sub[4], sub[5])
        if len(sub) == 5:  # 38:2:r:g:b (common, though not ITU T.416)
            return _rgb(sub[2], sub[3], sub[4])
    return None


def _indexed(text: str) -> str | None:
    if text.isdigit():
        n = int(text)
        if n < 256:
            return PALETTE[n]
    return None


def _rgb(r: str, g: str, b: str) -> str | None:
    try:
        red, green, blue = (min(int(v or 0), 255) for v in (r, g, b))
    except ValueError:
        return None
    return f"#{red:02x}{green:02x}{blue:02x}"


def apply_sgr(style: Style, params: str) -> Style:
    """Apply SGR parameters (the text between ``CSI`` and ``m``) to ``style``; unknown codes are ignored."""
    if params and params[0] in "<=>?":
        return style  # CSI > 4;2 m is modifyOtherKeys (xterm), not a style.
    fg, bg, bold, dim, italic, underline, blink, reverse, strike, conceal = style
    parts = params.split(";")
    i = 0
    count = len(parts)
    while i < count:
        part = parts[i]
        i += 1
        if ":" in part:
            sub = part.split(":")
            head = sub[0]
            if head == "38":
                fg = _colon_colour(sub) or fg
            elif head == "48":
                bg = _colon_colour(sub) or bg
            elif head == "4":
                underline = sub[1] not in ("0", "") if len(sub) > 1 else True
            continue  # 58:… (underline colour) and anything else: ignored
        if not part:
            code = 0
        elif part.isdigit():
            code = int(part)
        else:
            continue
        if code == 0:
            fg = bg = None
            bold = dim = italic = underline = blink = reverse = strike = conceal = False
        elif 30 <= code <= 37:
            fg = PALETTE[code - 30]
        elif 40 <= code <= 47:
            bg = PALETTE[code - 40]
        elif 90 <= code <= 97:
            fg = PALETTE[code - 82]
        elif 100 <= code <= 107:
            bg = PALETTE[code - 92]
        elif code == 38:
            colour, i = _colour(parts, i)
            fg = colour or fg
        elif code == 48:
            colour, i = _colour(parts, i)
            bg = colour or bg
        elif code == 58:
            _, i = _colour(parts, i)  # underline colour: consumed, not drawn
        elif code == 39:
            fg = None
        elif code == 49:
            bg = None
        elif code == 1:
            bold = True
        elif code == 2:
            dim = True
        elif code == 3:
            italic = True
        elif code in (4, 21):
            underline = True
        elif code in (5, 6):
            blink = True
        elif code == 7:
            reverse = True
        elif code == 8:
            conceal = True
        elif code == 9:
            strike = True
        elif code == 22:
            bold = dim = False
        elif code == 23:
            italic = False
        elif code == 24:
            underline = False
        elif code == 25:
            blink = False
        elif code == 27:
            reverse = False
        elif code == 28:
            conceal = False
        elif code == 29:
            strike = False
    return intern(Style(fg, bg, bold, dim, italic, underline, blink, reverse, strike, conceal))
